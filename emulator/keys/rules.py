"""The rules every API key keeps, however it is made: `POST /keys`, a `PATCH`, or
fixtures/accounts.yaml. Plain pydantic types and a check: the fixtures loader uses them
without the web stack."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field

from emulator.errors import ValidationFailed

Scope = Literal["ai.gateway", "video", "studio.media"]
Product = Literal["ai_gateway", "video", "studio"]
ResetInterval = Literal["daily", "weekly", "monthly"]
Label = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]


def check_key_rules(
    product: str, scopes: Sequence[str], limit: int | None, interval: str | None
) -> None:
    if product == "ai_gateway" and "ai.gateway" not in scopes:
        raise ValidationFailed(
            "A key for product `ai_gateway` needs the `ai.gateway` scope: add it to `scopes`, "
            "or choose product `video` or `studio`.",
            param="scopes",
            code="missing_gateway_scope",
        )
    if interval is not None and limit is None:
        raise ValidationFailed(
            "`spend_reset_interval` only applies with a `spend_limit_micros`: set both, or "
            "leave the interval out.",
            param="spend_reset_interval",
            code="reset_interval_without_limit",
        )
