"""The messages wire format's content blocks, both ways: a canonical message as
blocks (text ending at cache breakpoints, images, tool uses and results) and back."""

from __future__ import annotations

import json
from typing import Any

from emulator.gateway import native_search
from emulator.gateway.canonical import (
    CacheMark,
    Message,
    ToolCall,
    cache_control,
    cache_marks,
    cache_ttl,
    merged_marks,
)
from emulator.gateway.sources import as_text
from emulator.gateway.wire.image_refs import picture_of, pictures_of


def system_marks(systems: list[Message]) -> tuple[CacheMark, ...]:
    """The system messages' breakpoints, in their texts joined by newlines."""
    marks: list[CacheMark] = []
    start = 0
    for message in systems:
        marks += (CacheMark(start + mark.offset, mark.ttl) for mark in message.cache_marks)
        start += len(message.text) + 1
    return tuple(marks)


def text_blocks(text: str, marks: tuple[CacheMark, ...]) -> list[dict[str, Any]]:
    """A text as blocks that end at its breakpoints, each carrying its `cache_control`
    (the newline between two parts is the blocks' own join)."""
    blocks: list[dict[str, Any]] = []
    start = 0
    for mark in marks:
        # A block ends where a part did (at a newline, or the end): a breakpoint anywhere
        # else (none before any text) cannot be said as blocks that join back the same.
        if mark.offset <= start or text[mark.offset : mark.offset + 1] not in ("\n", ""):
            continue
        piece = text[start : mark.offset]
        blocks.append({"type": "text", "text": piece, "cache_control": cache_control(mark.ttl)})
        start = mark.offset + 1
    if start < len(text) or (text and not blocks):
        blocks.append({"type": "text", "text": text[start:]})
    return blocks


def render_message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": m.tool_call_id,
            "content": m.text,
        }
        if m.images:  # a screenshot a tool returned, as blocks of the result
            block["content"] = [{"type": "text", "text": m.text}, *_images(m)]
        if m.cache_marks:
            block["cache_control"] = cache_control(m.cache_marks[-1].ttl)
        return {"role": "user", "content": [block]}
    blocks: list[dict[str, Any]] = []
    if m.cache_marks:
        blocks += text_blocks(m.text, m.cache_marks)
    elif m.text:
        blocks.append({"type": "text", "text": m.text})
    blocks += _images(m)
    blocks += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": tool_input(c.arguments)}
        for c in m.tool_calls
    ]
    if not m.text and m.cache_marks and blocks:  # no text to end at: the last block is marked
        blocks[-1] = {**blocks[-1], "cache_control": cache_control(m.cache_marks[-1].ttl)}
    return {"role": m.role, "content": blocks}


def tool_input(arguments: str) -> Any:
    """A call's arguments as this format's `input` object. Arguments that are not JSON
    (a call cut at `max_tokens`, or sent back so by a client) are `{}`: `input` cannot
    carry half an object."""
    try:
        return json.loads(arguments or "{}")
    except (ValueError, RecursionError):
        return {}


def arguments_of(tool_input: Any) -> str:
    """A tool call's arguments from this format's `input` object, written as a JSON
    string as OpenRouter writes them for the other formats: compact, letters unescaped."""
    return json.dumps(tool_input, separators=(",", ":"), ensure_ascii=False)


def parse_message(raw: dict[str, Any]) -> list[Message]:
    content = raw["content"]
    if isinstance(content, str):
        return [Message(raw["role"], content)]
    content = [_readable(b) for b in content]
    results = [b for b in content if b["type"] == "tool_result"]
    if results:  # the results, then what the turn says beside them (a user's words)
        said = [b for b in content if b["type"] != "tool_result"]
        return [_tool_result(b) for b in results] + (
            parse_message({**raw, "content": said}) if said else []
        )
    pictures = tuple(picture_of(b) for b in content if b["type"] == "image")
    return [
        Message(
            role=raw["role"],
            text="\n".join(b["text"] for b in content if b["type"] == "text"),
            images=len(pictures),
            pictures=pictures,
            tool_calls=tuple(
                ToolCall(b["id"], b["name"], arguments_of(b["input"]))
                for b in content
                if b["type"] == "tool_use"
            ),
            cache_marks=cache_marks(content, TEXT_BLOCKS),
        )
    ]


TEXT_BLOCKS = frozenset({"text"})


def _readable(block: dict[str, Any]) -> dict[str, Any]:
    """A search result or a document is read as the text of it (`sources.as_text`), its
    breakpoint kept; a document with no text read (a URL, a file id) stays as it is. So
    are a web search's blocks sent back (`native_search.read_back`)."""
    kind = block.get("type")
    said = as_text(block) if kind in ("search_result", "document") else ""
    if kind in native_search.BLOCKS:  # a web search sent back (Anthropic's tool)
        said = native_search.read_back(block)
    if not said:
        return block
    text = {"type": "text", "text": said}
    return text | ({"cache_control": block["cache_control"]} if "cache_control" in block else {})


def _images(m: Message) -> list[dict[str, Any]]:
    """A message's images as image blocks: each as sent (`Message.pictures`), else empty."""
    return [{"type": "image", "source": _source(p)} for p in pictures_of(m)]


def _source(picture: str) -> dict[str, Any]:
    if picture.startswith("data:"):
        media_type, _, data = picture[5:].partition(";base64,")
        return {"type": "base64", "media_type": media_type, "data": data}
    if picture.startswith("file:"):
        return {"type": "file", "file_id": picture[5:]}
    return {"type": "url", "url": picture}


def _tool_result(block: dict[str, Any]) -> Message:
    content = block.get("content") or ""  # optional: a result may say nothing
    if isinstance(content, list):
        content = [_readable(b) for b in content]
    text = _block_text(content)
    message = Message("tool", text, tool_call_id=block["tool_use_id"])
    if isinstance(content, list):  # its own blocks may mark where a prefix ends
        message.cache_marks = cache_marks(content, TEXT_BLOCKS)
        message.pictures = tuple(picture_of(b) for b in content if b.get("type") == "image")
        message.images = len(message.pictures)
    control = block.get("cache_control")
    if control:  # a breakpoint at the result's end
        mark = CacheMark(len(text), cache_ttl(control))
        message.cache_marks = merged_marks((*message.cache_marks, mark))
    return message


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text") or "" for b in content if b.get("type") == "text")
