"""Anthropic's web search tool on `/messages`, answered as Anthropic's API answers it.

The gateway searches as for OpenRouter's web search (`web_search`); the answer then
shows the search as Anthropic's blocks, after any thinking: a `server_tool_use` block
(`srvtoolu_` id, `name: "web_search"`, `input: {"query": ...}`), a
`web_search_tool_result` block listing the results (`url`, `title`, `page_age`, an
opaque `encrypted_content`), then the text, whose sentences cite the results in turn
(`web_search_result_location`, through `source_citations`), except with structured
output. `usage.server_tool_use.web_search_requests` counts the search. Streamed, the
two blocks come whole, the call's input as one `input_json_delta`.

A client sends the blocks back in the assistant's turn (`check_search_block`), where
the model reads them again (`read_back`), as Anthropic's reads the encrypted content.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from emulator.clock import Clock
from emulator.gateway import native_fetch
from emulator.gateway.native_fetch import RESULT as FETCH_RESULT
from emulator.gateway.web_search import WebResult, WebSearch, query_of, shown_query

BLOCKS = ("server_tool_use", "web_search_tool_result", FETCH_RESULT)
_THINKING = ("thinking", "redacted_thinking")
_TOOL_ID = re.compile(r"^srvtoolu_[a-zA-Z0-9_]+$")
_ERRORS = ("web_search_tool_result_error", "web_search_tool_request_error")


@dataclass(frozen=True)
class WebSource:
    """A result as the answer's text cites it (what `source_citations` asks of a source)."""

    result: WebResult
    index: int
    cited: bool

    def citation(self, sentence: str) -> dict[str, Any]:
        return {
            "type": "web_search_result_location",
            "cited_text": self.result.content[:150],
            "url": self.result.url,
            "title": self.result.title,
            "encrypted_index": _opaque(f"{self.result.url}#{self.index}"),
        }


@dataclass(frozen=True)
class NativeSearch:
    """The search an answer shows: its call's id and query, what it found, the day."""

    tool_id: str
    query: str
    found: tuple[WebResult, ...]
    today: date
    cites: bool  # not with structured output

    def sources(self) -> list[WebSource]:
        return [WebSource(result, at, self.cites) for at, result in enumerate(self.found)]

    def blocks(self) -> list[dict[str, Any]]:
        return [
            {
                "type": "server_tool_use",
                "id": self.tool_id,
                "name": "web_search",
                "input": {"query": self.query},
            },
            {
                "type": "web_search_tool_result",
                "tool_use_id": self.tool_id,
                "content": [self._result(result) for result in self.found],
            },
        ]

    def _result(self, result: WebResult) -> dict[str, Any]:
        return {
            "type": "web_search_result",
            "url": result.url,
            "title": result.title,
            "encrypted_content": _opaque(result.content),
            "page_age": _page_age(result.url, self.today),
        }


def usage(searched: bool, fetched: int) -> dict[str, int]:
    """Anthropic's `usage.server_tool_use`: its tools' searches and fetches."""
    return {"web_search_requests": int(searched), "web_fetch_requests": fetched}


def shown(
    web: WebSearch | None,
    found: tuple[WebResult, ...],
    messages: Any,
    answer_id: str,
    clock: Clock,
    structured: bool,
) -> NativeSearch | None:
    """The search to show, when Anthropic's tool asked for it (`web.native`); the clock
    read only then."""
    if web is None or not web.native:
        return None
    tool_id = "srvtoolu_" + answer_id.removeprefix("msg_")
    today = date.fromisoformat(clock.now_iso()[:10])
    return NativeSearch(tool_id, shown_query(query_of(messages)), found, today, not structured)


def add_blocks(content: list[dict[str, Any]], blocks: list[dict[str, Any]]) -> None:
    """A whole answer's content with the server tools' blocks (a search's, a fetch's:
    pairs of a call and its result) after its thinking."""
    at = sum(1 for block in content if block["type"] in _THINKING)
    content[at:at] = blocks


def add_events(
    events: Iterator[dict[str, Any]], blocks: list[dict[str, Any]], used: dict[str, int]
) -> Iterator[dict[str, Any]]:
    """A stream's events with the server tools' blocks before its first block that is
    not thinking (the blocks after it renumbered), and their `used` in the final usage."""
    sent = False
    next_block = 0  # the index the next block would take
    for event in events:
        kind = event["type"]
        starts = kind == "content_block_start" and event["content_block"]["type"] not in _THINKING
        if not sent and (starts or kind == "message_delta"):
            yield from _block_events(next_block, blocks)
            sent = True
        if kind == "content_block_stop":
            next_block = event["index"] + 1
        if sent and "index" in event:
            event = {**event, "index": event["index"] + len(blocks)}
        if kind == "message_delta":
            event = {**event, "usage": {**event["usage"], "server_tool_use": used}}
        yield event


def _block_events(first: int, blocks: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each call's block with its input as one delta, then its result whole."""
    for at in range(first, first + len(blocks), 2):
        call, result = blocks[at - first], blocks[at - first + 1]
        opened = {**call, "input": {}}
        yield {"type": "content_block_start", "index": at, "content_block": opened}
        partial = json.dumps(call["input"], separators=(",", ":"), ensure_ascii=False)
        delta = {"type": "input_json_delta", "partial_json": partial}
        yield {"type": "content_block_delta", "index": at, "delta": delta}
        yield {"type": "content_block_stop", "index": at}
        yield {"type": "content_block_start", "index": at + 1, "content_block": result}
        yield {"type": "content_block_stop", "index": at + 1}


def _opaque(text: str) -> str:
    """What Anthropic encrypts, here only encoded: sent back, the model reads it."""
    return base64.b64encode(text.encode()).decode()


def _page_age(url: str, today: date) -> str:
    """When the page was published, as Anthropic's results tell it: a day of the two
    years before the virtual clock's, the same for the same page."""
    days = int.from_bytes(hashlib.sha256(url.encode()).digest()[:2], "big") % 730 + 1
    day = today - timedelta(days=days)
    return f"{day:%B} {day.day}, {day.year}"


def check_search_block(block: Any) -> None:
    """A search's block sent back as Anthropic's API takes it: a `server_tool_use` of web
    search with a `srvtoolu_` id; a `web_search_tool_result` answering such an id with
    a list of results (`url`, `title`, `encrypted_content`) or an error object; a fetch's
    result (`native_fetch.check_fetch_block`)."""
    ident = block.id if block.type == "server_tool_use" else block.tool_use_id
    field = "id" if block.type == "server_tool_use" else "tool_use_id"
    if not _TOOL_ID.fullmatch(ident or ""):
        raise ValueError(f"{block.type}.{field}: String should match pattern '{_TOOL_ID.pattern}'")
    if block.type == "server_tool_use":
        if block.name not in ("web_search", "web_fetch"):
            raise ValueError("server_tool_use.name: only 'web_search' and 'web_fetch' are emulated")
        return
    if block.type == FETCH_RESULT:
        native_fetch.check_fetch_block(block)
        return
    content = block.content
    if isinstance(content, dict):
        if content.get("type") not in _ERRORS or not isinstance(content.get("error_code"), str):
            raise ValueError(
                "web_search_tool_result.content: a list of results or an error object "
                "(`type` web_search_tool_result_error and its `error_code`)"
            )
        return
    parts = content if isinstance(content, list) else [None]
    for at, part in enumerate(parts):
        fields = [getattr(part, name, None) for name in ("url", "title", "encrypted_content")]
        if getattr(part, "type", None) != "web_search_result" or not all(
            isinstance(value, str) for value in fields
        ):
            raise ValueError(
                f"web_search_tool_result.content[{at}]: a web_search_result with string "
                "`url`, `title` and `encrypted_content`"
            )


def read_back(block: dict[str, Any]) -> str:
    """A search's block sent back, as the model reads it: the query searched; each
    result's title, URL and content (what the encrypted content holds, when it is ours)."""
    if block["type"] == FETCH_RESULT or block.get("name") == "web_fetch":  # a fetch's
        return native_fetch.read_back(block)
    if block["type"] == "server_tool_use":
        query = (block.get("input") or {}).get("query")
        return f"Searched the web for: {query}" if isinstance(query, str) else ""
    content = block.get("content")
    if not isinstance(content, list):
        return ""
    return "\n\n".join(
        "\n".join(filter(None, (part["title"], part["url"], _read(part["encrypted_content"]))))
        for part in content
    )


def _read(opaque: str) -> str:
    try:
        return base64.b64decode(opaque, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return ""  # another service's: unreadable here
