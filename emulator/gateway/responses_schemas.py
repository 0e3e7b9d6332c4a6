"""The responses request as clients send it: validated, unknown fields allowed."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from emulator.bodies import HttpUrl, OpenWireModel, WireModel
from emulator.errors import InvalidRequest, ValidationFailed
from emulator.gateway import images
from emulator.gateway.chat_messages import FileData, InputAudio
from emulator.gateway.chat_schemas import (
    Effort,
    ImageConfig,
    Metadata,
    WebSearchType,
    a_function_needs,
    only_functions,
)
from emulator.gateway.image_tool import OPENAI_IMAGE_GENERATION
from emulator.gateway.openrouter_fields import (
    DebugOptions,
    Plugin,
    ProviderPreferences,
    model_from_models,
)
from emulator.gateway.server_tools import ServerToolType


class InputPart(OpenWireModel):
    type: Literal[
        "input_text", "output_text", "input_image", "input_file", "input_audio", "refusal"
    ]
    text: str | None = None
    image_url: str | None = None
    file_id: str | None = None
    file_data: FileData | None = None  # an `input_file`'s (`gateway.files`)
    file_url: HttpUrl | None = None
    filename: str | None = None
    detail: Literal["auto", "low", "high"] | None = None
    input_audio: InputAudio | None = None

    @model_validator(mode="after")
    def _has_its_payload(self) -> InputPart:
        if self.type in ("input_text", "output_text") and self.text is None:
            raise ValueError(f"an `{self.type}` part needs `text`")
        if self.type == "input_image":
            if self.image_url is None and self.file_id is None:
                raise ValueError("an `input_image` part needs `image_url` or `file_id`")
            if self.image_url is not None:
                images.check_image_url(self.image_url)
        files = (self.file_data, self.file_id, self.file_url)
        if self.type == "input_file" and files == (None, None, None):
            raise ValueError("an `input_file` part needs `file_data`, `file_id` or `file_url`")
        if self.type == "input_audio" and self.input_audio is None:
            raise ValueError(
                'an `input_audio` part needs `input_audio` ({"data": base64, "format": "wav"})'
            )
        return self


class InputItem(OpenWireModel):
    type: str | None = None
    role: Literal["system", "developer", "user", "assistant"] | None = None
    content: str | Annotated[list[InputPart], Field(min_length=1)] | None = None
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    output: str | list[InputPart] | None = None  # a function_call_output's: text or parts
    summary: list[Any] | None = None
    id: str | None = None
    result: Any = None  # an image generation call's picture, in base64

    @model_validator(mode="after")
    def _complete(self) -> InputItem:
        """Each kind of item needs its own fields; other kinds are not emulated."""
        needs = _ITEM_FIELDS.get(self.type or "message")
        if needs is None:
            raise ValueError(
                f"input items of type {self.type!r} are not supported; use message, "
                "function_call, function_call_output, reasoning, item_reference, "
                "image_generation_call or a server tool's call (openrouter:web_search, "
                "web_search_call, "
                "openrouter:datetime, openrouter:web_fetch, openrouter:image_generation)"
            )
        missing = [name for name in needs if getattr(self, name) is None]
        if missing:
            raise ValueError(f"an input item of type {self.type or 'message'!r} needs {missing}")
        if self.type == "image_generation_call" and self.result is not None:
            images.check_image_result(self.result)
        return self


_ITEM_FIELDS: dict[str, tuple[str, ...]] = {
    "message": ("role", "content"),
    "function_call": ("call_id", "name", "arguments"),
    "function_call_output": ("call_id", "output"),
    "reasoning": ("summary",),  # an earlier answer's, sent back: accepted, not read
    "item_reference": ("id",),  # an earlier answer's item, kept (`stored_items.py`)
    # An earlier answer's image: seen again; by its `id` alone, kept (`stored_responses`).
    "image_generation_call": ("id",),
    # The gateway's server tool calls in an earlier answer, sent back: accepted, not read.
    "openrouter:web_search": (),
    "web_search_call": (),  # OpenAI's item of its web search tool
    "openrouter:datetime": (),
    "openrouter:web_fetch": (),
    "openrouter:image_generation": (),
}


def _responses_tool(tool: Any) -> Any:
    """OpenAI's image generation tool is the responses API's own; its settings are
    checked with the other server tools' (`server_tools.configs`)."""
    if isinstance(tool, dict) and tool.get("type") == OPENAI_IMAGE_GENERATION:
        return tool
    return only_functions(tool)


class FunctionTool(OpenWireModel):
    """A function tool, web search (`web_search`: its `parameters` are the search's), a
    server tool, or OpenAI's image generation tool (its settings beside its type)."""

    type: Literal["function", "image_generation"] | WebSearchType | ServerToolType
    name: Annotated[
        Annotated[str, Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")] | None,
        Field(validate_default=True),
    ] = None
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None

    _not_a_function = model_validator(mode="before")(_responses_tool)
    _defined = field_validator("name")(a_function_needs)


class NamedTool(OpenWireModel):
    type: Literal["function"]
    name: str


class HostedToolChoice(OpenWireModel):
    """OpenAI's choice of a built-in tool: here its image generation tool, which the
    model then calls whatever was said."""

    type: Literal["image_generation"]


class AllowedToolsChoice(OpenWireModel):
    """The model may call only these tools (OpenAI's `allowed_tools`)."""

    type: Literal["allowed_tools"]
    mode: Literal["auto", "required"]
    tools: Annotated[list[NamedTool], Field(min_length=1)]


class TextFormat(OpenWireModel):
    type: Literal["text", "json_object", "json_schema"]
    name: Annotated[str, Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")] | None = None
    schema_: Annotated[dict[str, Any] | None, Field(alias="schema")] = None
    strict: bool | None = None

    @model_validator(mode="after")
    def _a_schema_is_named(self) -> TextFormat:
        if self.type != "json_schema":
            return self
        if self.name is None:
            raise ValidationFailed(
                "text.format of type json_schema needs a `name` (letters, digits, _ and -, "
                "up to 64), as OpenAI's API does.",
                param="text.format.name",
            )
        if not self.schema_:
            raise ValidationFailed(
                "text.format json_schema needs `schema`.", param="text.format.schema"
            )
        return self


class TextConfig(OpenWireModel):
    format: TextFormat | None = None


class ReasoningConfig(OpenWireModel):
    """OpenAI's: an `effort`, and a `summary` to see the reasoning's text."""

    effort: Effort | None = None
    summary: Literal["auto", "concise", "detailed"] | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None  # OpenRouter's budget, as in chat


class ReasoningFields(OpenWireModel):
    """A responses body's `reasoning`, validated only when it has one (`responses_routes`)."""

    reasoning: ReasoningConfig | None = None


class _Prompt(OpenWireModel):
    """What `/responses` and `/responses/input_tokens` both read: the prompt and the
    routing, typed once."""

    model: Annotated[str, Field(min_length=1)]
    input: Annotated[str, Field(min_length=1)] | Annotated[list[InputItem], Field(min_length=1)]
    instructions: str | None = None
    tools: Annotated[list[FunctionTool], Field(max_length=128)] | None = None
    tool_choice: (
        Literal["auto", "none", "required"]
        | NamedTool
        | AllowedToolsChoice
        | HostedToolChoice
        | None
    ) = None
    parallel_tool_calls: bool | None = None
    text: TextConfig | None = None
    models: Annotated[list[str], Field(max_length=10)] | None = None
    provider: ProviderPreferences | None = None
    transforms: list[str] | None = None  # OpenRouter's, as in chat
    plugins: list[Plugin] | None = None
    metadata: Metadata | None = None  # OpenAI's strings; a `seed` of digits seeds the content
    # What else to return: `reasoning.encrypted_content` and
    # `message.output_text.logprobs` are acted on, others ignored.
    include: list[str] | None = None
    previous_response_id: Annotated[str, Field(min_length=1)] | None = None
    truncation: Literal["auto", "disabled"] | None = None

    _first_of_models = model_validator(mode="before")(model_from_models)

    @model_validator(mode="after")
    def _hosted_choice_has_its_tool(self) -> _Prompt:
        if isinstance(self.tool_choice, HostedToolChoice):
            kind = self.tool_choice.type
            if not any(tool.type == kind for tool in self.tools or ()):
                raise ValidationFailed(
                    f"tool_choice names the {kind} tool, which is not among `tools`: add "
                    f'{{"type": "{kind}"}} to them.',
                    param="tool_choice",
                )
        return self

    @model_validator(mode="after")
    def _no_conversation(self) -> _Prompt:
        # Taken silently, the answer would be made without the conversation's items.
        if (self.model_extra or {}).get("conversation") is not None:
            raise InvalidRequest(
                "`conversation` (OpenAI's Conversations API) is not supported: continue a "
                "response with `previous_response_id`, or send the earlier turns in `input`.",
                param="conversation",
            )
        return self

    @field_validator("input", mode="before")
    @classmethod
    def _not_empty(cls, value: Any) -> Any:
        """One message for both empties: the union's own errors name only the list."""
        if value == "" or value == []:
            raise ValueError("must be a non-empty string or a non-empty list of input items")
        return value


class ResponsesRequest(_Prompt):
    max_output_tokens: Annotated[int, Field(ge=1)] | None = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    top_p: Annotated[float, Field(ge=0, le=1)] | None = None
    stream: bool | None = None
    debug: DebugOptions | None = None  # OpenRouter's, streams only
    top_logprobs: Annotated[int, Field(ge=0, le=20)] | None = None
    store: bool | None = None  # keeps the output items (`stored_items`) unless false
    # OpenRouter's: `image` generates an image (`gateway.image_output`); `audio` is refused
    # with its reason (`body_checks`), sound being made on chat only.
    modalities: list[Literal["text", "image", "audio"]] | None = None
    image_config: ImageConfig | None = None
    # Taken, typed as OpenAI's, and not acted on: the answer is made at once, whole.
    background: bool | None = None
    user: str | None = None
    # `reasoning`: see ReasoningFields


class InputTokensRequest(_Prompt):
    reasoning: ReasoningConfig | None = None  # not on the hot path: typed here


class InputTokens(WireModel):
    object: Literal["response.input_tokens"] = "response.input_tokens"
    input_tokens: int
    exact: bool = Field(description="True: the serving provider's own count; false: an estimate.")
    provider: str
    tokenizer: str
