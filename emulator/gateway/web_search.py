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

Anthropic's own web search tool (`web_search_20250305` and its successors, on
`/messages` only) searches the same way, within its `allowed_domains` or outside its
`blocked_domains`; its results are introduced without the markdown links, since the
answer cites them in Anthropic's blocks instead (`native_search`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from typing import Any

from emulator.errors import ValidationFailed
from emulator.gateway.canonical import Message, Request
from emulator.gateway.topic_words import topic_words

ONLINE = ":online"
DEFAULT_RESULTS = 5
MAX_RESULTS = 10
# OpenRouter's web search server tool, and the shorthands it converts to it.
WEB_SEARCH_TOOLS = frozenset({"openrouter:web_search", "web_search", "web_search_preview"})
# Anthropic's web search tool, by version (the `/messages` schema takes them).
ANTHROPIC_TOOLS = frozenset({"web_search_20250305", "web_search_20260209", "web_search_20260318"})
# Anthropic's web fetch tool, by version (`/messages` only; `server_tools` runs it).
ANTHROPIC_FETCH_TOOLS = frozenset(
    {"web_fetch_20250910", "web_fetch_20260209", "web_fetch_20260309", "web_fetch_20260318"}
)
DEFAULT_PROMPT = (
    "A web search was conducted on {date}. Incorporate the following web search results "
    "into your response.\n\nIMPORTANT: Cite them using markdown links named using the "
    "domain of the source.\nExample: [nytimes.com](https://nytimes.com/some-page)."
)
# How a result reads in the prompt; what a model reads back to cite it.
_ENTRY = '[{number}] "{title}" ({url})\n{content}'
# Anthropic's tool: the results as its model reads them, with nothing to link.
NATIVE_HEAD = 'Web search results for "{query}" ({date}):'
_NATIVE_ENTRY = "{number}. {title}\n{url}\n{content}"
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
    native: bool = False  # Anthropic's tool: answered in its blocks (`native_search`)
    allowed: tuple[str, ...] = ()  # the domains results come from, if any are given
    blocked: tuple[str, ...] = ()  # the domains they never come from
    tool: bool = False  # OpenRouter's server tool, counted in `usage.server_tool_use_details`
    # OpenAI's `web_search` (or `web_search_preview`) named the tool: on `/responses` its
    # call is OpenAI's `web_search_call` item, which OpenAI's clients parse.
    openai: bool = False


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
    """A body's model and fallback models without `:online`, and the search it asks for.
    `:online` counts on `model` only: a fallback's would search for every route."""
    fallbacks = body.get("models") or []
    plain = "plugins" not in body and "tools" not in body and not fallbacks
    if plain and not body["model"].endswith(ONLINE):  # nearly every request
        return body["model"], [], None
    model, online = split_model(body["model"])
    return model, [split_model(m)[0] for m in fallbacks], asked(body, online, messages)


def split_model(model: str) -> tuple[str, bool]:
    """`openai/gpt-4o:online` -> (`openai/gpt-4o`, True)."""
    if model.endswith(ONLINE):
        return model[: -len(ONLINE)], True
    return model, False


def asked(body: dict[str, Any], online: bool, messages: tuple[Message, ...]) -> WebSearch | None:
    """The search a body asks for: its `web` plugin's (unless `enabled: false`), else the
    defaults when the model id said `:online`, else the web search tool's, which the
    model calls when the user has just spoken and `tool_choice` lets it (after tool
    results it answers from them)."""
    plugin = next((p for p in body.get("plugins") or () if p.get("id") == "web"), None)
    if plugin is not None and plugin.get("enabled") is not False:
        return WebSearch(plugin.get("max_results") or DEFAULT_RESULTS, plugin.get("search_prompt"))
    if online:
        return WebSearch()
    tools = list(enumerate(body.get("tools") or ()))
    found = next(((i, t) for i, t in tools if is_search_tool(t)), None)
    last_role = messages[-1].role if messages else "user"
    if found is None or last_role != "user" or not lets_tools(body):
        return None
    index, tool = found
    if tool["type"] in ANTHROPIC_TOOLS:
        allowed, blocked = tool.get("allowed_domains") or (), tool.get("blocked_domains") or ()
        return WebSearch(native=True, allowed=tuple(allowed), blocked=tuple(blocked))
    openai = tool["type"] != "openrouter:web_search"
    return WebSearch(_tool_results(tool, index), tool=True, openai=openai)


def is_search_tool(tool: Any) -> bool:
    kind = tool.get("type") if isinstance(tool, dict) else None
    return kind in WEB_SEARCH_TOOLS or kind in ANTHROPIC_TOOLS


def lets_tools(body: dict[str, Any]) -> bool:
    """The tool choices that let the model search or call another server tool: `auto`
    and `required` (Anthropic's `{"type": "auto"}` and `{"type": "any"}`), or Anthropic's
    naming its search or fetch tool."""
    choice = body.get("tool_choice")
    if choice is None or choice in ("auto", "required"):
        return True
    if not isinstance(choice, dict):
        return False
    kind = choice.get("type")
    return kind in ("auto", "any") or (kind == "tool" and names_anthropic_tool(choice, body))


def names_anthropic_tool(choice: dict[str, Any], body: dict[str, Any]) -> bool:
    """Anthropic's `{"type": "tool", "name": ...}` naming its web search or fetch tool."""
    name = choice.get("name")
    return any(
        (is_search_tool(t) or t.get("type") in ANTHROPIC_FETCH_TOOLS) and t.get("name") == name
        for t in body.get("tools") or ()
    )


def _tool_results(tool: dict[str, Any], index: int) -> int:
    """The web search tool's `parameters.max_results` (1 to 10; 5 if not given)."""
    parameters = tool.get("parameters")
    if parameters is None:
        parameters = {}
    wanted = parameters.get("max_results") if isinstance(parameters, dict) else "?"
    if wanted is None:
        return DEFAULT_RESULTS
    if type(wanted) is not int or not 1 <= wanted <= MAX_RESULTS:
        raise ValidationFailed(
            "The web search tool's `parameters` must be an object whose `max_results` is "
            f"a whole number from 1 to {MAX_RESULTS}.",
            param=f"tools[{index}].parameters",
        )
    return wanted


def results(query: str, count: int, search: WebSearch | None = None) -> tuple[WebResult, ...]:
    """`count` results for a query: the same query, the same results, on the search's
    allowed domains (a domain with a path: under it) or on the reserved ones it does
    not block (none if it blocks them all)."""
    sites = _sites(search or WebSearch())
    words = topic_words(query)[:6] or ["web"]
    topic = " ".join(words[:3])
    found = []
    for index in range(count if sites else 0):
        digest = hashlib.sha256(f"{query}\x1f{index}".encode()).digest()
        site = sites[(digest[0] + index) % len(sites)]
        slug = "-".join(words[index % len(words) :][:3] or words[:3])
        title = f"{_KINDS[digest[1] % len(_KINDS)]} {topic}"
        content = (
            f"An emulated page about {topic}: {words[index % len(words)]} explained, "
            f"with examples and references (result {index + 1} of {count})."
        )
        found.append(WebResult(f"https://{site}/{slug}-{digest[2:5].hex()}", title, content))
    return tuple(found)


def _sites(search: WebSearch) -> tuple[str, ...]:
    if search.allowed:
        return tuple(dict.fromkeys(domain.strip("/") for domain in search.allowed))
    # A domain with a path stands for its whole domain: the reserved sites have no paths.
    return tuple(site for site in _SITES if not any(on_domain(site, d) for d in search.blocked))


def on_domain(host: str, domain: str) -> bool:
    """Whether a host is on a filter's domain (its path aside), as Anthropic's and
    OpenRouter's domain filters read it: the domain itself or one of its subdomains."""
    name = domain.split("/")[0].lower()
    return host == name or host.endswith("." + name)


def query_of(messages: tuple[Message, ...]) -> str:
    """What is searched for: the last user message's text."""
    return next((m.text for m in reversed(messages) if m.role == "user"), "")


def inject(request: Request, search: WebSearch, date: str) -> tuple[Request, tuple[WebResult, ...]]:
    """The request with the results as a system message before its last user message."""
    query = query_of(request.messages)
    found = results(query, search.max_results, search)
    if search.native:
        head, entry = NATIVE_HEAD.format(query=shown_query(query), date=date), _NATIVE_ENTRY
    else:
        prompt = DEFAULT_PROMPT if search.search_prompt is None else search.search_prompt
        head, entry = prompt.replace("{date}", date), _ENTRY
    entries = "\n\n".join(
        entry.format(number=n, title=r.title, url=r.url, content=r.content)
        for n, r in enumerate(found, 1)
    )
    return before_last_user(request, f"{head}\n\n{entries}"), found


def before_last_user(request: Request, text: str) -> Request:
    """The request with a system message of `text` before its last user message (at the
    end when it has none): where a server tool's results join the prompt."""
    messages = list(request.messages)
    users = [i for i, message in enumerate(messages) if message.role == "user"]
    messages.insert(users[-1] if users else len(messages), Message("system", text))
    return replace(request, messages=tuple(messages))


def shown_query(query: str) -> str:
    """The query as a search tool's call shows it: the question's first words."""
    return " ".join(query.split()[:24])


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
