"""The content blocks of a messages request (Anthropic's): what each type needs, checked
block by block (`messages_schemas` holds the request around them)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import model_validator

from emulator.bodies import OpenWireModel
from emulator.gateway import files
from emulator.gateway.chat_messages import CacheControl
from emulator.gateway.images import IMAGE_TYPES, decode_base64, is_image
from emulator.gateway.native_search import BLOCKS as SEARCH_BLOCKS
from emulator.gateway.native_search import check_search_block


def _check_search_result(data: Any) -> Any:
    """A `search_result` block as Anthropic's API takes it (in a user turn or a tool
    result): a `source` and a `title`, its `content` text blocks, `citations.enabled`
    a boolean. Other blocks pass as they came."""
    if not isinstance(data, dict) or data.get("type") != "search_result":
        return data
    for name in ("source", "title"):
        if not isinstance(data.get(name), str):
            raise ValueError(f"a `search_result` block needs `{name}`, a string")
    content = data.get("content")
    if not isinstance(content, list) or not content:
        raise ValueError("search_result.content: a list of one or more text blocks is needed")
    for index, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") != "text":
            raise ValueError(f"search_result.content[{index}]: only text blocks are allowed")
        if not isinstance(part.get("text"), str):
            raise ValueError(f"search_result.content[{index}]: a `text` block needs `text`")
        _has_words(part["text"])
    _check_citations(data.get("citations"), "search_result")
    return data


def _check_citations(citations: Any, kind: str) -> None:
    if citations is not None and not (
        isinstance(citations, dict) and isinstance(citations.get("enabled", False), bool)
    ):
        raise ValueError(f"{kind}.citations: an object with a boolean `enabled`")


class ResultPart(OpenWireModel):
    """A block of a `tool_result`'s content, or a result of a `web_search_tool_result`."""

    type: Literal["text", "image", "document", "search_result", "web_search_result"]
    text: str | None = None
    cache_control: CacheControl | None = None

    _search_result = model_validator(mode="before")(_check_search_result)

    @model_validator(mode="after")
    def _has_its_fields(self) -> ResultPart:
        _check_block(self)
        return self


class Block(OpenWireModel):
    """A content block: what each type needs is checked, the rest is the type's own."""

    type: Literal[
        "text",
        "image",
        "document",
        "search_result",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",  # Anthropic's web search or fetch, sent back by the assistant
        "web_search_tool_result",
        "web_fetch_tool_result",
    ]
    text: str | None = None
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None
    tool_use_id: str | None = None
    # A web search's error is an object: `web_search_tool_result` checks its content.
    content: str | list[ResultPart] | dict[str, Any] | None = None
    is_error: bool | None = None  # a tool_result's
    cache_control: CacheControl | None = None

    _search_result = model_validator(mode="before")(_check_search_result)

    @model_validator(mode="after")
    def _has_its_fields(self) -> Block:
        _check_block(self)
        if self.type == "tool_use" and not _TOOL_USE_ID.fullmatch(self.id or ""):
            raise ValueError(f"tool_use.id: String should match pattern '{_TOOL_USE_ID.pattern}'")
        if self.type in SEARCH_BLOCKS:
            check_search_block(self)
        elif isinstance(self.content, dict) or _has_web_results(self.content):
            raise ValueError(f"{self.type}.content: a string or a list of content blocks")
        return self


def _has_web_results(content: Any) -> bool:
    return isinstance(content, list) and any(p.type == "web_search_result" for p in content)


_NEEDS = {
    "text": ("text",),
    "image": ("source",),
    "document": ("source",),
    "tool_use": ("id", "name", "input"),
    "tool_result": ("tool_use_id",),
    "thinking": ("thinking", "signature"),  # sent back as it came
    "redacted_thinking": ("data",),
    "server_tool_use": ("id", "name", "input"),
    "web_search_tool_result": ("tool_use_id", "content"),
    "web_fetch_tool_result": ("tool_use_id", "content"),
    "web_search_result": ("url", "title", "encrypted_content"),
}


_TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def _check_block(block: Block | ResultPart) -> None:
    """What Anthropic's API requires of a block of its type, in its words."""
    kind = block.type
    missing = [name for name in _NEEDS.get(kind, ()) if getattr(block, name, None) is None]
    if missing:
        raise ValueError(f"a `{kind}` block needs `{missing[0]}`")
    if kind == "text" and block.text is not None:
        _has_words(block.text)
    if kind == "image":
        _check_image_source(getattr(block, "source", None))
    if kind == "document":
        _check_document(block)


def _check_image_source(source: Any) -> None:
    """An image's `source` as Anthropic's API takes it: base64 data that decodes to an
    image of its `media_type`, an http(s) `url` (never fetched) or a `file_id`."""
    if not isinstance(source, dict):
        raise ValueError("image.source must be an object with a `type`: base64, url or file")
    kind = source.get("type")
    if kind == "base64":
        media_type = source.get("media_type")
        _check_image_type(media_type)
        data = source.get("data")
        if not isinstance(data, str) or not data:
            raise ValueError("image.source.base64.data: a base64 string is required")
        image = decode_base64(data)
        if image is None:
            raise ValueError("image.source.base64.data is not valid base64")
        if not is_image(image, str(media_type)):
            raise ValueError(f"image.source.base64.data is not an image of type {media_type}")
    elif kind == "url":
        url = source.get("url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise ValueError("image.source.url.url: an http(s) URL is required")
    elif kind == "file":
        if not isinstance(source.get("file_id"), str) or not source["file_id"]:
            raise ValueError("image.source.file.file_id: a file id is required")
    else:
        raise ValueError("image.source.type: Input should be 'base64', 'url' or 'file'")


_DOCUMENT_SOURCES = {
    "text": ("data", "text/plain"),
    "base64": ("data", "application/pdf"),
    "url": ("url", None),
    "file": ("file_id", None),
    "content": ("content", None),
}


def _check_document(block: Block | ResultPart) -> None:
    """A document as Anthropic's API takes it: its `title` and `context` strings, its
    `citations` setting, and a `source` of plain text, a base64 PDF, a PDF's URL, a
    file id, or content (a string, or text and image blocks)."""
    for name in ("title", "context"):
        if not isinstance(getattr(block, name, None), str | None):
            raise ValueError(f"document.{name}: Input should be a valid string")
    _check_citations(getattr(block, "citations", None), "document")
    source = getattr(block, "source", None)
    if not isinstance(source, dict) or source.get("type") not in _DOCUMENT_SOURCES:
        raise ValueError(
            "document.source.type: Input should be 'text', 'base64', 'url', 'file' or 'content'"
        )
    kind = source["type"]
    field, media_type = _DOCUMENT_SOURCES[kind]
    value = source.get(field)
    if kind == "content" and isinstance(value, list):
        _check_document_content(value)
    elif not isinstance(value, str):
        raise ValueError(f"document.source.{kind}.{field} is required")
    if media_type is not None and source.get("media_type") != media_type:
        raise ValueError(f"document.source.{kind}.media_type: Input should be '{media_type}'")
    if kind == "base64" and isinstance(value, str):
        _check_pdf(value)


def _check_pdf(data: str) -> None:
    """A base64 PDF's data: base64 of a PDF that can be read (`files.pdf_pages`)."""
    pdf = decode_base64(data)
    if pdf is None:
        raise ValueError("document.source.base64.data is not valid base64")
    try:
        files.pdf_pages(pdf)
    except ValueError as refused:
        raise ValueError(f"document.source.base64.data: {refused}") from None


def _check_document_content(content: list[Any]) -> None:
    for index, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in ("text", "image"):
            raise ValueError(f"document.source.content[{index}]: a text or image block")
        if part["type"] == "text":
            if not isinstance(part.get("text"), str):
                raise ValueError(f"document.source.content[{index}]: a `text` block needs `text`")
            _has_words(part["text"])


def _check_image_type(media_type: Any) -> None:
    if media_type not in IMAGE_TYPES:
        allowed = ", ".join(repr(t) for t in IMAGE_TYPES)
        raise ValueError(f"image.source.base64.media_type: Input should be {allowed}")


def _has_words(text: str) -> None:
    """Anthropic's API refuses a text block with nothing to read, in its words."""
    if not text:
        raise ValueError("text content blocks must be non-empty")
    if text.isspace():
        raise ValueError("text content blocks must contain non-whitespace text")


class TextBlock(OpenWireModel):
    type: Literal["text"]
    text: str
    cache_control: CacheControl | None = None

    @model_validator(mode="after")
    def _has_text(self) -> TextBlock:
        _has_words(self.text)
        return self
