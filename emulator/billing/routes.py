"""/api/v1/ai-gateway/*: balance, quote, usage events and reservations (API key, scope
ai.gateway), and OpenRouter's `/key` and `/credits`."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.params import FromPath, JSONBody, QueryParameter

from emulator.billing import holds, ledger, openrouter_account, quotes, usage
from emulator.billing.schemas import (
    Balance,
    QuoteOut,
    QuoteRequest,
    ReservationList,
    UsageEventOut,
    UsageList,
)
from emulator.openapi_answers import refusals
from emulator.web import API_PREFIX, BEARER, CallerDep, Cursor, RuntimeDep, auth_opt

UsageLimit = Annotated[
    int | None, QueryParameter(ge=1, le=200, description="Items a page, 1-200 (default 50).")
]
Filter = Annotated[str | None, QueryParameter()]
# A half-open window: back-to-back windows count every event once.
After = Annotated[
    str | None, QueryParameter(description="RFC 3339: events created at or after it.")
]
Before = Annotated[str | None, QueryParameter(description="RFC 3339: events created before it.")]


class QuoteController(Controller):
    path = f"{API_PREFIX}/ai-gateway/quote"
    opt = auth_opt("api_key", "ai.gateway")
    security = BEARER
    tags = ["Billing"]

    @post(
        "/",
        status_code=200,
        summary="What a request would cost; never holds or charges",
        responses=refusals(404, 503),  # routed as the request would be
    )
    async def quote(
        self, rt: RuntimeDep, caller: CallerDep, data: JSONBody[QuoteRequest]
    ) -> QuoteOut:
        body = data.model_dump(by_alias=True, exclude_none=True)
        return QuoteOut.model_validate(quotes.quote(rt, caller, body))


class BalanceController(Controller):
    path = f"{API_PREFIX}/ai-gateway/balance"
    opt = auth_opt("api_key", "ai.gateway")
    security = BEARER
    tags = ["Billing"]

    @get("/", summary="Balance, pending holds and available balance, in micros and USD")
    async def balance(self, rt: RuntimeDep, caller: CallerDep) -> Balance:
        return Balance(account_id=caller.account_id, **ledger.balance_of(rt, caller.account_id))


class OpenRouterAccountController(Controller):
    """OpenRouter's own views of a key and of credits (its SDKs' `api_keys`, `credits`)."""

    path = API_PREFIX
    security = BEARER
    tags = ["Billing"]

    @get(
        "/key",
        summary="The calling key: spend, limit and budget (OpenRouter's shape)",
        opt=auth_opt("api_key"),
    )
    async def current_key(self, rt: RuntimeDep, caller: CallerDep) -> dict[str, Any]:
        return openrouter_account.current_key(rt, caller)

    @get(
        "/credits",
        summary="Credits given and used, in USD (OpenRouter's shape)",
        opt=auth_opt("api_key", "ai.gateway"),
    )
    async def credits(self, rt: RuntimeDep, caller: CallerDep) -> dict[str, Any]:
        return openrouter_account.credits(rt, caller.account_id)


class UsageController(Controller):
    path = f"{API_PREFIX}/ai-gateway/usage"
    opt = auth_opt("api_key", "ai.gateway")
    security = BEARER
    tags = ["Billing"]

    @get("/", summary="Usage events, newest first, with filters")
    async def list_usage(
        self,
        rt: RuntimeDep,
        caller: CallerDep,
        provider: Filter = None,
        model: Filter = None,
        status: Filter = None,
        key_id: Filter = None,
        created_after: After = None,
        created_before: Before = None,
        limit: UsageLimit = None,
        cursor: Cursor = None,
    ) -> UsageList:
        filters = {
            "provider": provider,
            "model": model,
            "status": status,
            "key_id": key_id,
            "created_after": created_after,
            "created_before": created_before,
        }
        return UsageList.model_validate(
            usage.list_events(rt, caller.account_id, filters, limit, cursor)
        )

    @get("/{id:str}", summary="One usage event")
    async def get_usage(
        self, rt: RuntimeDep, caller: CallerDep, id: FromPath[str]
    ) -> UsageEventOut:
        return UsageEventOut.model_validate(usage.get_event(rt, caller.account_id, id))


class ReservationsController(Controller):
    path = f"{API_PREFIX}/ai-gateway/reservations"
    opt = auth_opt("api_key", "ai.gateway")
    security = BEARER
    tags = ["Billing"]

    @get("/", summary="Holds of balance (active, failed, settled) with their idempotency keys")
    async def list_reservations(
        self,
        rt: RuntimeDep,
        caller: CallerDep,
        status: Filter = None,
        limit: UsageLimit = None,
        cursor: Cursor = None,
    ) -> ReservationList:
        page = holds.list_holds(rt, caller.account_id, status, limit, cursor)
        return ReservationList.model_validate(page)
