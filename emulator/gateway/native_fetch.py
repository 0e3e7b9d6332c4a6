"""Anthropic's web fetch tool on `/messages`, answered as Anthropic's API answers it.

The gateway reads the user's URLs as for OpenRouter's web fetch (`server_tools`); the
answer then shows each fetch as a pair of blocks, after any thinking and any search: a
`server_tool_use` block (`name: "web_fetch"`, `input: {"url": ...}`) and a
`web_fetch_tool_result` holding the page as a plain-text `document` (its `title`, and
`citations` when the tool enabled them), with `retrieved_at` on the virtual clock, or
an error (`url_not_allowed`, `url_not_accessible`, `max_uses_exceeded`).
`usage.server_tool_use.web_fetch_requests` counts the fetches. Anthropic charges
nothing for them beyond the tokens the pages add. With citations enabled (and no
structured output) the answer's text cites the pages read (`cited_pages`) as it cites a
plain-text document the request sends, numbered after the request's own documents.

A client sends the blocks back in the assistant's turn (`check_fetch_block`), where
the model reads the page again (`read_back`).
"""

from __future__ import annotations

from typing import Any

from emulator.gateway.server_tools import NATIVE_FETCH, NATIVE_FETCH_TOOLS, Run
from emulator.gateway.sources import Document

RESULT = "web_fetch_tool_result"
_ERROR = "web_fetch_tool_result_error"


def blocks(runs: tuple[Run, ...], answer_id: str, now: str, cites: bool) -> list[dict[str, Any]]:
    """Each fetch of Anthropic's tool as its two blocks, in order."""
    shown: list[dict[str, Any]] = []
    base = "srvtoolu_" + answer_id.removeprefix("msg_")
    for number, run in enumerate(r for r in runs if r.kind == NATIVE_FETCH):
        tool_id = f"{base}_f{number}"
        url = run.result["url"]
        call = {
            "type": "server_tool_use",
            "id": tool_id,
            "name": "web_fetch",
            "input": {"url": url},
        }
        shown += [
            call,
            {"type": RESULT, "tool_use_id": tool_id, "content": _content(run, now, cites)},
        ]
    return shown


def _content(run: Run, now: str, cites: bool) -> dict[str, Any]:
    if run.error is not None:
        return {"type": _ERROR, "error_code": run.code or "unavailable"}
    document: dict[str, Any] = {
        "type": "document",
        "source": _source(run),
        "title": run.result["title"],
    }
    if cites:
        document["citations"] = {"enabled": True}
    return {
        "type": "web_fetch_result",
        "url": run.result["url"],
        "content": document,
        "retrieved_at": now,
    }


def cited_pages(runs: tuple[Run, ...], first_index: int, cites: bool) -> list[Document]:
    """The pages read, as documents the answer may cite (`source_citations`): numbered
    from `first_index`, each its title and text."""
    read = [r for r in runs if r.kind == NATIVE_FETCH and r.error is None]
    return [
        Document(first_index + n, "tools", cites, run.result["title"], _source(run))
        for n, run in enumerate(read)
    ]


def _source(run: Run) -> dict[str, Any]:
    return {"type": "text", "media_type": "text/plain", "data": run.result["content"]}


def cites(body: dict[str, Any]) -> bool:
    """Whether the request's web fetch tool enabled citations (off by default)."""
    tools = body.get("tools") or ()
    fetch: dict[str, Any] = next((t for t in tools if t.get("type") in NATIVE_FETCH_TOOLS), {})
    return bool((fetch.get("citations") or {}).get("enabled"))


def fetches(runs: tuple[Run, ...]) -> int:
    """The fetches the tool made (a URL past `max_uses` was not one)."""
    return sum(run.kind == NATIVE_FETCH and run.code != "max_uses_exceeded" for run in runs)


def check_fetch_block(block: Any) -> None:
    """A fetch's result sent back as Anthropic's API takes it: a page (`web_fetch_result`
    with its `url` and a `document`) or an error object with its `error_code`."""
    content = block.content if isinstance(block.content, dict) else {}
    kind = content.get("type")
    if kind == _ERROR and isinstance(content.get("error_code"), str):
        return
    document = content.get("content")
    if (
        kind != "web_fetch_result"
        or not isinstance(content.get("url"), str)
        or not isinstance(document, dict)
        or document.get("type") != "document"
    ):
        raise ValueError(
            f"{RESULT}.content: a web_fetch_result (its `url` and a `document`) or an error "
            f"object (`type` {_ERROR} and its `error_code`)"
        )


def read_back(block: dict[str, Any]) -> str:
    """A fetch sent back, as the model reads it: the URL fetched, then the page's title,
    URL and text."""
    if block["type"] == "server_tool_use":
        url = (block.get("input") or {}).get("url")
        return f"Fetched: {url}" if isinstance(url, str) else ""
    content = block.get("content") or {}
    document = content.get("content") or {}
    data = (document.get("source") or {}).get("data")
    said = (document.get("title"), content.get("url"), data)
    return "\n".join(part for part in said if isinstance(part, str))
