"""The messages request as Anthropic's SDK sends it to OpenRouter's Anthropic-compatible
API (`POST /api/v1/messages`): validated, unknown fields allowed.

The same request the gateway sends its `messages` providers (`wire/messages.py` reads
both), plus OpenRouter's routing fields.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from emulator.bodies import OpenWireModel, WireModel
from emulator.errors import InvalidRequest, ThreadUnsupported, ValidationFailed
from emulator.gateway import sources, thinking_history
from emulator.gateway.chat_messages import CacheControl
from emulator.gateway.messages_blocks import Block, TextBlock
from emulator.gateway.messages_tools import Tool, ToolChoice, check_search_tools
from emulator.gateway.native_search import BLOCKS as SEARCH_BLOCKS
from emulator.gateway.openrouter_fields import (
    DebugOptions,
    Plugin,
    ProviderPreferences,
    model_from_models,
)


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
    def _thinking_sent_back_as_given(self) -> MessagesRequest:
        if self.model.startswith("anthropic/"):  # what Anthropic's own API checks
            on = self.thinking is not None and self.thinking.type != "disabled"
            thinking_history.check(self.messages, thinking_on=on)
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
