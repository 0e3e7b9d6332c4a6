"""Wire models of the billing routes, for the OpenAPI document."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel


class Balance(BaseModel):
    object: Literal["balance"] = "balance"
    account_id: str
    balance_micros: int
    pending_micros: int
    available_micros: int
    balance_usd: str
    available_usd: str
    studio_credits: int


class ReservationOut(BaseModel):
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


class ReservationList(BaseModel):
    object: Literal["list"]
    data: list[ReservationOut]
    has_more: bool
    next_cursor: str | None


class RouteAttempt(BaseModel):
    provider: str
    model: str
    wire_format: Literal["chat", "responses", "messages"]
    status: Literal["succeeded", "failed"]
    error_code: str | None
    latency_ms: int


class UsageEventOut(BaseModel):
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


class UsageList(BaseModel):
    object: Literal["list"]
    data: list[UsageEventOut]
    has_more: bool
    next_cursor: str | None
