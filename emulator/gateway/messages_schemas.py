"""The messages request as Anthropic's SDK sends it to OpenRouter's Anthropic-compatible
API (`POST /api/v1/messages`): validated, unknown fields allowed.

The same request the gateway sends its `messages` providers (`wire/messages.py` reads
both), plus OpenRouter's routing fields.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from emulator.bodies import OpenWireModel, WireModel
from emulator.errors import InvalidRequest, ThreadUnsupported, ValidationFailed
from emulator.gateway import files, sources
from emulator.gateway.chat_schemas import (
    CacheControl,
)
from emulator.gateway.images import IMAGE_TYPES, decode_base64, is_image
from emulator.gateway.messages_tools import Tool, ToolChoice, check_search_tools
from emulator.gateway.native_search import BLOCKS as SEARCH_BLOCKS
from emulator.gateway.native_search import check_search_block
from emulator.gateway.openrouter_fields import (
    DebugOptions,
    Plugin,
    ProviderPreferences,
    model_from_models,
)


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


class Message(OpenWireModel):
    role: Literal["user", "assistant"]
    content: str | Annotated[list[Block], Field(min_length=1)]

    @model_validator(mode="after")
    def _searches_are_the_assistants(self) -> Message:
        if self.role == "user" and isinstance(self.content, list):
            for block in self.content:
                if block.type in SEARCH_BLOCKS:
                    raise ValueError(f"a `{block.type}` block belongs to an assistant turn")
        return self


class RequestMetadata(OpenWireModel):
    """Anthropic's: an id for the end user, taken and not used."""

    user_id: Annotated[str, Field(max_length=256)] | None = None


class Thinking(OpenWireModel):
    type: Literal["enabled", "disabled", "adaptive"]  # adaptive: the model's own budget
    budget_tokens: Annotated[int, Field(ge=1024)] | None = None
    # `omitted`: thinking blocks carry their signature but no text (still billed whole)
    display: Literal["summarized", "omitted"] | None = None

    @model_validator(mode="after")
    def _enabled_has_a_budget(self) -> Thinking:
        if self.type == "enabled" and self.budget_tokens is None:
            raise ValueError("thinking `enabled` needs `budget_tokens` (1,024 or more)")
        if self.type == "disabled" and self.display is not None:
            raise ValueError("thinking `disabled` takes no `display`: there is no thinking")
        return self


class OutputFormat(OpenWireModel):
    """Anthropic's structured outputs: answer JSON valid against `schema`."""

    type: Literal["json_schema"]
    schema_: Annotated[dict[str, Any], Field(alias="schema")]


class OutputConfig(OpenWireModel):
    """Anthropic's output settings: `format` is structured output (`output_format`'s
    successor, which the SDKs now send), `effort` is taken and ignored."""

    format: OutputFormat | None = None
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None


class Prompt(OpenWireModel):
    """What a message request and its token count share: the model and the prompt."""

    model: Annotated[str, Field(min_length=1)]
    messages: Annotated[list[Message], Field(min_length=1)]
    system: str | list[TextBlock] | None = None
    tools: Annotated[list[Tool], Field(max_length=128)] | None = None
    tool_choice: ToolChoice | None = None
    thinking: Thinking | None = None
    cache_control: CacheControl | None = None  # a breakpoint at the last message's end
    output_format: OutputFormat | None = None
    output_config: OutputConfig | None = None
    # OpenRouter's
    models: Annotated[list[str], Field(max_length=10)] | None = None
    provider: ProviderPreferences | None = None
    plugins: list[Plugin] | None = None

    _first_of_models = model_validator(mode="before")(model_from_models)

    @model_validator(mode="after")
    def _no_mcp_servers(self) -> Prompt:
        # Taken silently, the answer would be made without the servers' tools.
        if (self.model_extra or {}).get("mcp_servers") is not None:
            raise InvalidRequest(
                "`mcp_servers` (Anthropic's MCP connector) is not supported: the emulator "
                "reaches no MCP server. Offer the server's tools as custom `tools` and answer "
                "their `tool_use` blocks in the test.",
                param="mcp_servers",
            )
        return self

    @model_validator(mode="after")
    def _one_web_search(self) -> Prompt:
        check_search_tools(self.tools or [])
        return self

    @model_validator(mode="after")
    def _one_output_format(self) -> Prompt:
        if self.output_format is not None and self.output_config and self.output_config.format:
            raise ValidationFailed(
                "Send the structured output format once: `output_config.format` (or the "
                "older `output_format`), not both.",
                param="output_format",
            )
        return self

    @model_validator(mode="after")
    def _citations_allowed(self) -> Prompt:
        structured = self.output_format is not None or bool(
            self.output_config and self.output_config.format
        )
        sources.check(sources.found(self.messages), structured)
        return self

    @model_validator(mode="after")
    def _turns_say_something(self) -> Prompt:
        """Every turn has content, bar a last assistant turn (a prefill, which may be
        empty but may not end in whitespace), as Anthropic's API checks them."""
        last = len(self.messages) - 1
        for index, message in enumerate(self.messages):
            content = message.content
            prefill = index == last and message.role == "assistant"
            if prefill:
                end = content if isinstance(content, str) else content[-1].text or ""
                if end[-1:].isspace():
                    raise ValidationFailed(
                        "final assistant content cannot end with trailing whitespace: strip "
                        "the prefill.",
                        param=f"messages[{index}].content",
                    )
            elif content == "":
                raise ValidationFailed(
                    f"messages[{index}]: all messages must have non-empty content except for "
                    "the optional final assistant message.",
                    param=f"messages[{index}].content",
                )
            elif isinstance(content, str) and content.isspace():
                raise ValidationFailed(
                    "text content blocks must contain non-whitespace text.",
                    param=f"messages[{index}].content",
                )
        return self


class CountRequest(Prompt):
    """`POST /messages/count_tokens`."""


class TokenCount(WireModel):
    input_tokens: int
    provider: str  # whose count it is: the route that would serve the request


class MessagesRequest(Prompt):
    max_tokens: Annotated[int, Field(ge=1)]
    stop_sequences: list[str] | None = None
    temperature: Annotated[float, Field(ge=0, le=1)] | None = None
    top_p: Annotated[float, Field(ge=0, le=1)] | None = None
    top_k: Annotated[int, Field(ge=0)] | None = None
    stream: bool | None = None
    metadata: RequestMetadata | None = None
    thread: Any = None  # Anthropic's message threads: refused (`ThreadUnsupported`)
    # OpenRouter's
    transforms: list[str] | None = None
    debug: DebugOptions | None = None

    @model_validator(mode="after")
    def _no_thread(self) -> MessagesRequest:
        if self.thread is not None:
            raise ThreadUnsupported(
                "Message threads are not supported: send the whole conversation in "
                "`messages` each turn, without `thread`.",
                param="thread",
            )
        return self

    @model_validator(mode="after")
    def _thinking_within_max_tokens(self) -> MessagesRequest:
        budget = self.thinking.budget_tokens if self.thinking else None
        if budget is not None and budget >= self.max_tokens:
            raise ValidationFailed(
                "thinking.budget_tokens must be less than max_tokens: lower it, or raise "
                "max_tokens.",
                param="thinking.budget_tokens",
            )
        return self

    @model_validator(mode="after")
    def _stops_say_something(self) -> MessagesRequest:
        """A stop sequence of whitespace alone is refused, as Anthropic's API refuses it."""
        for index, stop in enumerate(self.stop_sequences or ()):
            if not stop.strip():
                raise ValidationFailed(
                    "stop_sequences: each stop sequence must contain non-whitespace.",
                    param=f"stop_sequences[{index}]",
                )
        return self
