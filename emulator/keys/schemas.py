"""Wire models of /keys: what a client sends and what it gets back."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictInt, field_validator

from emulator.bodies import DisplayName, RequestBody, WireModel
from emulator.keys.rules import Label, Product, ResetInterval, Scope

Name = DisplayName
Micros = Annotated[StrictInt, Field(ge=0, le=10**15)]


class _Body(RequestBody):
    @field_validator("scopes", check_fields=False)
    @classmethod
    def _scopes_unique(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            raise ValueError("a scope is listed twice")
        return value


class KeyCreate(_Body):
    name: Name
    scopes: list[Scope] = Field(default=["ai.gateway"], min_length=1)
    product: Product = "ai_gateway"
    environment: Label = "production"
    spend_limit_micros: Micros | None = None
    spend_reset_interval: ResetInterval | None = None
    rate_limit_rpm: Annotated[StrictInt, Field(ge=1, le=1_000_000)] | None = None


class KeyUpdate(_Body):
    """Only the fields sent are changed; `null` clears a spend limit or interval."""

    name: Name | None = None
    status: Literal["active", "disabled"] | None = None
    scopes: list[Scope] | None = Field(default=None, min_length=1)
    environment: Label | None = None
    spend_limit_micros: Micros | None = None
    spend_reset_interval: ResetInterval | None = None


class KeyUsage(WireModel):
    requests: int
    charge_micros: int
    window_charge_micros: int


class ApiKeyOut(WireModel):
    id: str
    object: Literal["api_key"] = "api_key"
    name: str
    scopes: list[str]
    product: str
    environment: str
    spend_limit_micros: int | None
    spend_reset_interval: str | None
    rate_limit_rpm: int | None
    status: str
    key_hint: str
    created_at: str
    updated_at: str
    last_used_at: str | None
    usage: KeyUsage


class ApiKeyCreated(ApiKeyOut):
    key: str = Field(description="The raw secret. Shown once, at creation; store it now.")


class ApiKeyList(WireModel):
    object: Literal["list"] = "list"
    data: list[ApiKeyOut]
    has_more: bool
    next_cursor: str | None


class ApiKeyDeleted(WireModel):
    id: str
    object: Literal["api_key"] = "api_key"
    deleted: bool = True
