"""The chat-completions request as clients send it: validated, unknown fields allowed.

Official SDKs send fields this emulator does not act on (`user`, `store`,
`metadata`, ...); they are accepted and ignored, as the real service does.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from emulator.bodies import OpenWireModel
from emulator.errors import InvalidRequest, ValidationFailed
from emulator.gateway import server_tools, web_search
from emulator.gateway.chat_messages import CacheControl, ChatMessage
from emulator.gateway.image_output import AspectRatio
from emulator.gateway.openrouter_fields import (
    DebugOptions,
    Plugin,
    ProviderPreferences,
    model_from_models,
)
from emulator.gateway.server_tools import ServerToolType


class FunctionDef(OpenWireModel):
    name: Annotated[str, Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")]
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


def only_functions(tool: Any) -> Any:
    """Refuse a tool that is neither a function nor web search (chat's `custom`, the
    responses API's built-in `file_search`, ...) with one clear reason, before its fields
    are checked as a function's: nothing here would run it."""
    kind = tool.get("type") if isinstance(tool, dict) else None
    known = kind == "function" or kind in web_search.WEB_SEARCH_TOOLS or kind in server_tools.KINDS
    if isinstance(kind, str) and not known:
        raise ValueError(
            f"tools of type {kind!r} are not supported by the emulator, which runs function "
            'tools ({"type": "function", ...}) and the server tools `openrouter:web_search`, '
            "`openrouter:datetime`, `openrouter:web_fetch` and `openrouter:image_generation` "
            "(and on /responses OpenAI's `image_generation`); leave it out of `tools` in tests"
        )
    return tool


# OpenRouter's web search server tool, and the shorthands it converts to it (OpenAI's
# built-in tool names): the gateway runs them (`web_search`), not the client.
WebSearchType = Literal["openrouter:web_search", "web_search", "web_search_preview"]


def a_function_needs(value: Any, info: ValidationInfo) -> Any:
    """A function tool's own field (chat's `function`, responses' `name`) is required;
    web search has none."""
    if value is None and info.data.get("type") == "function":
        raise ValueError(f"a function tool needs `{info.field_name}`")
    return value


class ToolDef(OpenWireModel):
    type: Literal["function"] | WebSearchType | ServerToolType
    function: Annotated[FunctionDef | None, Field(validate_default=True)] = None
    # A server tool's (`web_search.asked` and `server_tools.configs` check them).
    parameters: dict[str, Any] | None = None

    _not_a_function = model_validator(mode="before")(only_functions)
    _defined = field_validator("function")(a_function_needs)


class NamedFunction(OpenWireModel):
    name: str


class NamedToolChoice(OpenWireModel):
    type: Literal["function"]
    function: NamedFunction


class AllowedTools(OpenWireModel):
    mode: Literal["auto", "required"]
    tools: Annotated[list[NamedToolChoice], Field(min_length=1)]


class AllowedToolsChoice(OpenWireModel):
    """The model may call only these tools (OpenAI's `allowed_tools`)."""

    type: Literal["allowed_tools"]
    allowed_tools: AllowedTools


class JsonSchemaSpec(OpenWireModel):
    name: Annotated[str, Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")]
    schema_: Annotated[dict[str, Any] | None, Field(alias="schema")] = None
    strict: bool | None = None
    description: str | None = None


class ResponseFormat(OpenWireModel):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaSpec | None = None


Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]


class ReasoningConfig(OpenWireModel):
    """OpenRouter's: an `effort` or a `max_tokens` budget; `exclude`: billed, not shown."""

    effort: Effort | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    enabled: bool | None = None
    exclude: bool | None = None


class ReasoningFields(OpenWireModel):
    """A chat body's reasoning fields, validated only when it has them (`chat_routes`):
    as fields of the request model they would cost every request its share."""

    reasoning: ReasoningConfig | None = None
    include_reasoning: bool | None = None
    reasoning_effort: Effort | None = None  # OpenAI's shorthand for `reasoning.effort`

    @field_validator("reasoning_effort")
    @classmethod
    def _one_effort(cls, effort: str | None, info: ValidationInfo) -> str | None:
        asked = info.data.get("reasoning")
        if effort and asked and asked.effort and asked.effort != effort:
            raise ValueError(f"it differs from reasoning.effort {asked.effort!r}: send one")
        return effort


# A token id, as `logit_bias` keys name them: digits in a string.
TokenId = Annotated[str, Field(pattern=r"^[0-9]{1,9}$")]


# OpenAI's `metadata`: at most 16 pairs of strings, keys up to 64 characters, values 512.
Metadata = Annotated[
    dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=512)]],
    Field(max_length=16),
]


class Prediction(OpenWireModel):
    """OpenAI's predicted output: taken, typed, not used (the answer is made at once)."""

    type: Literal["content"]
    content: str | list[dict[str, Any]]


class AudioSettings(OpenWireModel):
    """OpenAI's `audio` settings, with `audio` in `modalities` (`gateway.audio_output`
    makes the sound; it refuses the formats it does not make)."""

    voice: str | dict[str, Any]
    format: Literal["wav", "aac", "mp3", "flac", "opus", "pcm16"]


class ImageConfig(OpenWireModel):
    """OpenRouter's settings of generated images (`gateway.image_output`); other keys, of
    other vendors' image models, are taken and ignored."""

    aspect_ratio: AspectRatio | None = None
    image_size: Literal["1K", "2K", "4K"] | None = None


class SamplingFields(OpenWireModel):
    """Settings of OpenAI's and OpenRouter's chat body that change no answer here: the
    sampling ones (nothing is sampled, the content is a seeded function of the request)
    and others taken as OpenAI types them. They are checked as the real API checks them,
    apart from the request's model (only the requests that send them pay for it)."""

    frequency_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None
    presence_penalty: Annotated[float, Field(ge=-2, le=2)] | None = None
    repetition_penalty: Annotated[float, Field(gt=0, le=2)] | None = None
    top_k: Annotated[int, Field(ge=0)] | None = None
    min_p: Annotated[float, Field(ge=0, le=1)] | None = None
    top_a: Annotated[float, Field(ge=0, le=1)] | None = None
    logit_bias: dict[TokenId, Annotated[float, Field(ge=-100, le=100)]] | None = None
    user: str | None = None
    metadata: Metadata | None = None
    prediction: Prediction | None = None
    modalities: list[Literal["text", "audio", "image"]] | None = None  # image: OpenRouter's
    audio: AudioSettings | None = None
    image_config: ImageConfig | None = None  # OpenRouter's, with `image` in `modalities`
    service_tier: Literal["auto", "default", "flex", "scale", "priority"] | None = None
    verbosity: Literal["low", "medium", "high"] | None = None


SAMPLING_FIELDS = frozenset(SamplingFields.model_fields)


def _no_legacy_functions(body: Any) -> None:
    """Taken silently, `functions` would answer in text where the client waits for a call."""
    if isinstance(body, dict):
        for name in ("functions", "function_call"):
            if body.get(name) is not None:
                raise InvalidRequest(
                    f"`{name}` (OpenAI's deprecated function calling) is not supported: "
                    "send `tools` with `type: function` and `tool_choice` instead.",
                    param=name,
                )


def messages_from_prompt(body: Any) -> Any:
    """OpenRouter's: chat takes a `prompt` string in place of `messages`, as one user
    message."""
    if isinstance(body, dict) and "prompt" in body:
        prompt = body["prompt"]
        if "messages" in body:
            raise ValidationFailed("Send `messages` or `prompt`, not both.", param="prompt")
        if not isinstance(prompt, str) or not prompt:
            raise ValidationFailed("`prompt` must be a non-empty string.", param="prompt")
        body = {k: v for k, v in body.items() if k != "prompt"}
        return {**body, "messages": [{"role": "user", "content": prompt}]}
    return body


class StreamOptions(OpenWireModel):
    include_usage: bool | None = None


class ChatCompletionRequest(OpenWireModel):
    model: Annotated[str, Field(min_length=1)]
    messages: Annotated[list[ChatMessage], Field(min_length=1)]
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    max_completion_tokens: Annotated[int, Field(ge=1)] | None = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    top_p: Annotated[float, Field(ge=0, le=1)] | None = None
    seed: int | None = None
    stop: str | Annotated[list[str], Field(max_length=4)] | None = None
    n: Annotated[int, Field(ge=1, le=8)] | None = None
    tools: Annotated[list[ToolDef], Field(max_length=128)] | None = None
    tool_choice: (
        Literal["auto", "none", "required"] | NamedToolChoice | AllowedToolsChoice | None
    ) = None
    parallel_tool_calls: bool | None = None
    response_format: ResponseFormat | None = None
    logprobs: bool | None = None
    top_logprobs: Annotated[int, Field(ge=0, le=20)] | None = None  # needs `logprobs`
    store: bool | None = None  # OpenAI's: nothing is kept for chat, but it must be a bool
    stream: bool | None = None
    stream_options: StreamOptions | None = None
    models: Annotated[list[str], Field(max_length=10)] | None = None
    provider: ProviderPreferences | None = None
    # OpenRouter's: `["middle-out"]` compresses a prompt too long for the context.
    transforms: list[str] | None = None
    plugins: list[Plugin] | None = None
    debug: DebugOptions | None = None  # streams only
    cache_control: CacheControl | None = None  # OpenRouter's: a breakpoint at the end
    # `reasoning`, `include_reasoning`: see ReasoningFields; penalties and such: SamplingFields

    @model_validator(mode="before")
    @classmethod
    def _openrouter_forms(cls, body: Any) -> Any:
        _no_legacy_functions(body)
        return messages_from_prompt(model_from_models(body))
