"""What the inference routes answer, declared for the OpenAPI document.

The services build plain dicts; these describe their main fields (OpenAI's chat
completion and response, Anthropic's message, with OpenRouter's additions), and a
test checks live answers against them. Each allows more fields than it names, as
the real answers carry more (an item of a kind named here only in its `type`).
"""

from __future__ import annotations

from typing import Any, Literal

from emulator.bodies import OpenWireModel


class CostDetails(OpenWireModel):
    upstream_inference_cost: float | None = None


class _Billed(OpenWireModel):
    """OpenRouter's additions to every usage: the cost in USD, and ours in micros."""

    cost: float
    is_byok: bool
    cost_details: CostDetails
    charge_micros: int


class FunctionCalled(OpenWireModel):
    name: str
    arguments: str


class ToolCall(OpenWireModel):
    id: str
    type: Literal["function"]
    function: FunctionCalled


class AssistantMessage(OpenWireModel):
    role: Literal["assistant"]
    content: str | None
    refusal: str | None
    tool_calls: list[ToolCall] | None = None
    reasoning: str | None = None


class Choice(OpenWireModel):
    index: int
    message: AssistantMessage
    finish_reason: str | None
    native_finish_reason: str | None = None
    logprobs: dict[str, Any] | None


class ChatUsage(_Billed):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(OpenWireModel):
    """`POST /chat/completions` without `stream`: OpenAI's chat completion."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    provider: str
    system_fingerprint: str | None
    choices: list[Choice]
    usage: ChatUsage


class OutputItem(OpenWireModel):
    """An item of a response's output: a `message`, `function_call`, `reasoning`, ..."""

    type: str
    id: str | None = None


class ResponseUsage(_Billed):
    input_tokens: int
    output_tokens: int
    total_tokens: int


class ResponseObject(OpenWireModel):
    """`POST /responses` without `stream`, and `GET /responses/{id}`: OpenAI's response."""

    id: str
    object: Literal["response"]
    created_at: int
    status: Literal["queued", "in_progress", "completed", "incomplete", "failed", "cancelled"]
    model: str
    background: bool
    output: list[OutputItem]
    output_text: str | None = None
    incomplete_details: dict[str, Any] | None
    error: dict[str, Any] | None
    usage: ResponseUsage | None


class ContentBlock(OpenWireModel):
    """A block of a message's content: `text`, `tool_use`, `thinking`, ..."""

    type: str


class MessageUsage(_Billed):
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int


class MessageObject(OpenWireModel):
    """`POST /messages` without `stream`: Anthropic's message."""

    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    model: str
    content: list[ContentBlock]
    stop_reason: str | None
    stop_sequence: str | None
    usage: MessageUsage
    provider: str


class ResponseDeleted(OpenWireModel):
    id: str
    object: Literal["response"]
    deleted: Literal[True]


class InputItemList(OpenWireModel):
    """A page of a stored response's input items, OpenAI's list with our cursor."""

    object: Literal["list"]
    data: list[OutputItem]
    first_id: str | None
    last_id: str | None
    has_more: bool
    next_cursor: str | None
