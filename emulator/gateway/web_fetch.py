"""OpenRouter's web fetch tool's pages (`openrouter:web_fetch`, and Anthropic's
`web_fetch_*` on `/messages`): the URLs a message names, the tool's domain filters, and a
page made up from its URL. Nothing is fetched: the emulator has no network, so the same
URL gives the same title and text; a host under `.invalid` cannot be reached, and a URL
outside the tool's domain filters is refused. `server_tools` runs the calls.
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field

from emulator.bodies import OpenWireModel
from emulator.gateway.topic_words import topic_words
from emulator.gateway.web_search import on_domain

FETCH_LIMIT = 50  # OpenRouter's hard limit of fetches in one request
# Engines that charge nothing per page: OpenRouter's own, Firecrawl's (your own key)
# and the provider's (`native`: Anthropic's tool costs only the tokens it adds).
FREE_ENGINES = frozenset({"openrouter", "firecrawl", "native"})
CHARS_PER_TOKEN = 4  # `max_content_tokens` is approximate, as OpenRouter's is
_URL = re.compile(r"https?://[^\s<>\"'`()\[\]{}]+")


def _bare_domain(domain: str) -> str:
    if "://" in domain:
        raise ValueError(f"a domain is written without its scheme: not {domain!r}")
    return domain


Domain = Annotated[str, Field(min_length=1, max_length=253), AfterValidator(_bare_domain)]


class WebFetchConfig(OpenWireModel):
    engine: Literal["auto", "native", "exa", "openrouter", "firecrawl", "parallel"] | None = None
    max_uses: Annotated[int, Field(ge=1)] | None = None
    max_content_tokens: Annotated[int, Field(ge=1)] | None = None
    allowed_domains: list[Domain] | None = None
    blocked_domains: list[Domain] | None = None


def urls_in(text: str) -> list[str]:
    """The distinct `http(s)` URLs of a text, in order, without trailing punctuation."""
    return list(dict.fromkeys(m.rstrip(".,;:!?") for m in _URL.findall(text)))


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").rstrip(".")


def fetch(url: str, config: WebFetchConfig) -> tuple[dict[str, Any], str | None, str | None]:
    """One page read: what the model reads, and why it could not be read (None) with the
    error's code as Anthropic's tool names it."""
    host = host_of(url)
    if not host:
        return {"url": url}, "The URL names no host.", "url_not_accessible"
    if not _allowed(host, urlsplit(url).path, config):
        error = f"The URL's domain ({host}) is outside the web fetch tool's domain filters."
        return {"url": url}, error, "url_not_allowed"
    if host == "invalid" or host.endswith(".invalid"):  # RFC 6761: never resolves
        return (
            {"url": url},
            f"Could not reach {host}: the host does not resolve.",
            "url_not_accessible",
        )
    title, content = page(url)
    limit = config.max_content_tokens
    if limit is not None and len(content) > limit * CHARS_PER_TOKEN:
        content = content[: limit * CHARS_PER_TOKEN]
    return {"url": url, "title": title, "content": content, "http_status": 200}, None, None


def _allowed(host: str, path: str, config: WebFetchConfig) -> bool:
    """Within `allowed_domains` (a domain covers its subdomains; one with a path, the
    pages under it) and outside `blocked_domains`."""
    if config.allowed_domains and not any(
        _covers(domain, host, path) for domain in config.allowed_domains
    ):
        return False
    return not any(_covers(domain, host, path) for domain in config.blocked_domains or ())


def _covers(domain: str, host: str, path: str) -> bool:
    under = domain.partition("/")[2]
    return on_domain(host, domain) and path.strip("/").startswith(under.strip("/"))


def page(url: str) -> tuple[str, str]:
    """A page made up from its URL: the same URL, the same title and text."""
    host, path = host_of(url), urlsplit(url).path
    words = topic_words(path.replace("-", " ").replace("_", " ")) or topic_words(host)
    words = words[:6] or ["home"]
    digest = hashlib.sha256(url.encode()).digest()
    topic = " ".join(words[:3])
    title = f"{topic.capitalize()} | {host}"
    sentences = [
        f"This page on {host} is about {topic}.",
        f"It explains {words[digest[0] % len(words)]} step by step, with examples.",
        f"A section compares {words[digest[1] % len(words)]} with the alternatives.",
        f"The last part lists {2 + digest[2] % 7} questions readers ask about {topic}.",
        f"Updated {2020 + digest[3] % 6}; {3 + digest[4] % 9} minutes to read.",
    ]
    return title, " ".join(sentences)
