"""Anthropic's `search_result` content blocks: search results a client brings, in a
user turn or a tool's result, for the answer to cite (`search_citations`).

A result is `source`, `title` and `content` text blocks; the model reads it as text
(`as_text`), billed as the prompt's. `citations.enabled` asks for citations of it, on
all of a request's results or none, and never with structured output, as Anthropic's
API rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from emulator.errors import ValidationFailed


@dataclass(frozen=True)
class SearchResult:
    index: int  # among all the request's search results, in the order they come
    where: str  # its place in the request, as errors name it
    source: str
    title: str
    texts: tuple[str, ...]  # its content's text blocks
    cited: bool  # citations enabled


def found(messages: Any) -> list[SearchResult]:
    """The search results of a request's messages, as sent (dicts) or validated (the
    schema's blocks, whose unknown fields are attributes)."""
    return [
        SearchResult(
            index,
            where,
            _field(block, "source"),
            _field(block, "title"),
            tuple(_field(part, "text") for part in _field(block, "content")),
            bool((_field(block, "citations") or {}).get("enabled")),
        )
        for index, (where, block) in enumerate(_blocks(messages))
    ]


def _blocks(messages: Any) -> Iterator[tuple[str, Any]]:
    for m, message in enumerate(messages):
        content = _field(message, "content")
        if not isinstance(content, list):
            continue
        for b, block in enumerate(content):
            kind = _field(block, "type")
            if kind == "search_result":
                yield f"messages[{m}].content[{b}]", block
            elif kind == "tool_result" and isinstance(_field(block, "content"), list):
                for p, part in enumerate(_field(block, "content")):
                    if _field(part, "type") == "search_result":
                        yield f"messages[{m}].content[{b}].content[{p}]", part


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def check(results: list[SearchResult], structured: bool) -> None:
    """Citations on all of the results or none, and none with structured output."""
    cited = [r for r in results if r.cited]
    if not cited:
        return
    if structured:
        raise ValidationFailed(
            "Citations are not supported with structured outputs: turn off `citations` "
            "on the search results, or leave out `output_config.format`.",
            param=f"{cited[0].where}.citations",
        )
    plain = next((r for r in results if not r.cited), None)
    if plain is not None:
        raise ValidationFailed(
            "Citations must be enabled on all of a request's search results or on none: "
            f"`{cited[0].where}` enables them and `{plain.where}` does not.",
            param=f"{plain.where}.citations",
        )


def as_text(block: dict[str, Any]) -> str:
    """A search result as the model reads it: its title, its source, its text."""
    body = "\n".join(part["text"] for part in block["content"])
    return f"{block['title']}\nSource: {block['source']}\n{body}"
