"""Wire models of the billing routes, for the OpenAPI document."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from emulator.bodies import WireModel
from emulator.gateway.chat_schemas import messages_from_prompt
from emulator.gateway.openrouter_fields import model_from_models


class Balance(WireModel):
    object: Literal["balance"] = "balance"
    account_id: str
    balance_micros: int
    pending_micros: int
    available_micros: int
    balance_usd: str
    available_usd: str
    studio_credits: int


class QuoteRequest(WireModel):
    model_config = ConfigDict(extra="allow")

    # Which request is quoted: what the body holds says (`input`: responses,
    # `messages`: chat); a given endpoint must agree with it. `messages` (Anthropic's
    # format, which also sends `messages`) must be named.
    endpoint: Literal["responses", "chat.completions", "chat", "messages"] | None = None
    model: Annotated[str, Field(min_length=1)]
    input: Annotated[str, Field(min_length=1)] | list[dict[str, Any]] | None = None
    messages: Annotated[list[dict[str, Any]], Field(min_length=1)] | None = None
    instructions: str | None = None
    max_output_tokens: Annotated[int, Field(ge=1)] | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    models: list[str] | None = None
    provider: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _openrouter_forms(cls, body: Any) -> Any:
        """As the requests quoted: `models` alone, and chat's `prompt`. A message's
        body is the messages route's to check: the fields it does not read (this
        model's chat and responses ones) are left out, as that route ignores them."""
        if isinstance(body, dict) and body.get("endpoint") == "messages":
            return {k: v for k, v in model_from_models(body).items() if k not in _NOT_READ}
        return messages_from_prompt(model_from_models(body))


# The quote's fields that `POST /messages` does not read.
_NOT_READ = frozenset({"input", "instructions", "max_output_tokens", "prompt"})


class SpendLimitOut(WireModel):
    limit_micros: int | None
    used_micros: int
    held_micros: int  # the key's active holds, which count against the limit too
    remaining_micros: int | None  # limit - used - held
    reset_interval: str | None
    resets_at: str | None
    decision: Literal["allow", "deny"]


class QuoteOut(WireModel):
    object: Literal["quote"]
    endpoint: str
    model: str
    provider: str
    estimated_input_tokens: int
    estimated_output_tokens: int
    estimated_provider_cost_micros: int
    estimated_platform_fee_micros: int
    estimated_charge_micros: int
    fallback_charge_micros: int | None
    hold_micros: int
    available_micros: int
    sufficient_balance: bool
    spend_limit: SpendLimitOut
    premium_approval_required: bool = Field(
        description="True: the request would be refused with 402 premium_approval_required."
    )


class ReservationOut(WireModel):
    id: str
    object: Literal["reservation"] = "reservation"
    status: Literal["active", "failed", "settled"]
    amount_micros: int
    charge_micros: int
    idempotency_key: str | None
    usage_event_id: str | None
    key_id: str | None
    reason: str | None
    created_at: str
    updated_at: str


class ReservationList(WireModel):
    object: Literal["list"]
    data: list[ReservationOut]
    has_more: bool
    next_cursor: str | None


class RouteAttempt(WireModel):
    provider: str
    model: str
    wire_format: Literal["chat", "responses", "messages"]
    status: Literal["succeeded", "failed"]
    error_code: str | None
    latency_ms: int


class UsageEventOut(WireModel):
    id: str
    object: Literal["usage_event"]
    created_at: str
    key_id: str | None
    endpoint: str
    model: str
    provider: str | None
    status: Literal["succeeded", "failed"]
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    provider_cost_micros: int
    platform_fee_micros: int
    charge_micros: int
    margin_micros: int
    route_attempts: list[RouteAttempt]
    metadata: dict[str, Any]
    reasoning_tokens: int  # of completion_tokens
    finish_reason: str | None  # the first choice's; `error` for a cut stream
    cached_tokens: int  # of prompt_tokens: read from the provider's prompt cache
    cache_write_tokens: int  # of prompt_tokens: written to it
    web_search_results: int  # web search results the prompt held, each charged
    web_fetches: int  # pages the web fetch tool read (`openrouter:web_fetch`), each charged


class UsageList(WireModel):
    object: Literal["list"]
    data: list[UsageEventOut]
    has_more: bool
    next_cursor: str | None
