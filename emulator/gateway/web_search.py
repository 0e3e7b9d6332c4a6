"""OpenRouter's web search: the `web` plugin, and `:online` on a model id (its shortcut).

Nothing is searched: the results are made up from the query (the last user message),
deterministically, on reserved `example.*` domains, `max_results` of them (1 to 10,
5 by default). As OpenRouter does with its Exa results, they go into the prompt as a
system message just before the last user message (its `search_prompt` first, or
OpenRouter's default sentence), so the model reads them and they are billed as prompt
tokens; a model that writes its own text cites them at its end as markdown links
named by domain, and the answer lists the links it cites as `url_citation`
annotations. Each result costs the pricing's `web_search_micros_per_result` (4,000:
OpenRouter's $4 per 1,000), free models included.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from emulator.gateway.canonical import Message, Request
from emulator.gateway.topic_words import topic_words

ONLINE = ":online"
DEFAULT_RESULTS = 5
DEFAULT_PROMPT = (
    "A web search was conducted on {date}. Incorporate the following web search results "
    "into your response.\n\nIMPORTANT: Cite them using markdown links named using the "
    "domain of the source.\nExample: [nytimes.com](https://nytimes.com/some-page)."
)
# How a result reads in the prompt; what a model reads back to cite it.
_ENTRY = '[{number}] "{title}" ({url})\n{content}'
_ENTRY_LINE = re.compile(r'^\[\d+\] "(?P<title>[^"\n]*)" \((?P<url>https://[^\s)]+)\)$', re.M)
_SITES = (
    "example.com",
    "example.org",
    "example.net",
    "docs.example.com",
    "news.example.org",
    "blog.example.net",
    "wiki.example.org",
    "research.example.com",
    "forum.example.net",
    "learn.example.com",
)
_KINDS = ("A guide to", "What to know about", "Notes on", "The basics of", "Questions about")


@dataclass(frozen=True)
class WebSearch:
    """A search asked for: how many results, and the text that introduces them."""

    max_results: int = DEFAULT_RESULTS
    search_prompt: str | None = None


@dataclass(frozen=True)
class WebResult:
    url: str
    title: str
    content: str

    @property
    def domain(self) -> str:
        return self.url.split("/")[2]


def from_body(
    body: dict[str, Any], messages: tuple[Message, ...]
) -> tuple[str, list[str], WebSearch | None]:
    """A body's model and fallback models without `:online`, and the search it asks for."""
    fallbacks = body.get("models") or []
    plain = "plugins" not in body and "server_tools" not in body and not fallbacks
    if plain and not body["model"].endswith(ONLINE):  # nearly every request
        return body["model"], [], None
    model, online = split_model(body["model"])
    split = [split_model(m) for m in fallbacks]
    search = asked(body, online or any(on for _, on in split), messages)
    return model, [m for m, _ in split], search


def split_model(model: str) -> tuple[str, bool]:
    """`openai/gpt-4o:online` -> (`openai/gpt-4o`, True)."""
    if model.endswith(ONLINE):
        return model[: -len(ONLINE)], True
    return model, False


def asked(body: dict[str, Any], online: bool, messages: tuple[Message, ...]) -> WebSearch | None:
    """The search a body asks for: its `web` plugin (not `enabled: false`), else the
    defaults when a model id said `:online`, else the `openrouter:web_search` server
    tool's, which the model calls when the user has just spoken (after tool results it
    answers from them)."""
    for plugin in body.get("plugins") or ():
        if plugin.get("id") == "web":
            if plugin.get("enabled") is False:
                return None
            return WebSearch(
                plugin.get("max_results") or DEFAULT_RESULTS, plugin.get("search_prompt")
            )
    if online:
        return WebSearch()
    tool = (body.get("server_tools") or [None])[0]
    last_role = messages[-1].role if messages else "user"
    if tool is not None and last_role == "user" and body.get("tool_choice") != "none":
        return WebSearch((tool.get("parameters") or {}).get("max_results") or DEFAULT_RESULTS)
    return None


def results(query: str, count: int) -> tuple[WebResult, ...]:
    """`count` results for a query: the same query, the same results."""
    words = topic_words(query)[:6] or ["web"]
    topic = " ".join(words[:3])
    found = []
    for index in range(count):
        digest = hashlib.sha256(f"{query}\x1f{index}".encode()).digest()
        site = _SITES[(digest[0] + index) % len(_SITES)]
        slug = "-".join(words[index % len(words) :][:3] or words[:3])
        title = f"{_KINDS[digest[1] % len(_KINDS)]} {topic}"
        content = (
            f"An emulated page about {topic}: {words[index % len(words)]} explained, "
            f"with examples and references (result {index + 1} of {count})."
        )
        found.append(WebResult(f"https://{site}/{slug}-{digest[2:5].hex()}", title, content))
    return tuple(found)


def inject(request: Request, search: WebSearch, date: str) -> tuple[Request, tuple[WebResult, ...]]:
    """The request with the results as a system message before its last user message."""
    messages = list(request.messages)
    users = [i for i, message in enumerate(messages) if message.role == "user"]
    last_user = users[-1] if users else None
    query = messages[last_user].text if last_user is not None else ""
    found = results(query, search.max_results)
    head = (search.search_prompt or DEFAULT_PROMPT).replace("{date}", date)
    entries = "\n\n".join(
        _ENTRY.format(number=n, title=r.title, url=r.url, content=r.content)
        for n, r in enumerate(found, 1)
    )
    at = last_user if last_user is not None else len(messages)
    messages.insert(at, Message("system", f"{head}\n\n{entries}"))
    searched = request.with_max_tokens(request.max_tokens)  # a copy: routes share the call's
    searched.messages = tuple(messages)
    return searched, found


def cited(messages: tuple[Message, ...]) -> list[tuple[str, str]]:
    """The (domain, url) of each search result a prompt's system messages hold: what a
    model that writes its own answer cites."""
    return [
        (match["url"].split("/")[2], match["url"])
        for message in messages
        if message.role == "system"
        for match in _ENTRY_LINE.finditer(message.text)
    ]


def sources_sentence(sources: list[tuple[str, str]]) -> str:
    return " Sources: " + ", ".join(f"[{domain}]({url})" for domain, url in sources) + "."
