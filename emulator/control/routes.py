"""/_emulator/*: the control plane. Plain JSON; guarded by --admin-token when set."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post, put
from litestar.params import FromPath, JSONBody, QueryParameter

from emulator.control import replies, service
from emulator.control.records import RepliesOut
from emulator.control.schemas import (
    AccountList,
    AccountOut,
    ClockOut,
    ClockSet,
    HealthOut,
    LedgerList,
    ProviderList,
    ProviderOut,
    ProviderSet,
    RepliesSet,
    ResetOut,
    TenantCreate,
    TenantOut,
    TopUp,
    TopUpOut,
)
from emulator.openapi_answers import refusals
from emulator.web import Cursor, RuntimeDep, answers, auth_opt

Filter = Annotated[str | None, QueryParameter(max_length=100)]
# A control-plane list's page (the ledger, fault rules, snapshots).
ControlLimit = Annotated[
    int | None, QueryParameter(ge=1, le=1000, description="Items a page, 1-1000 (default 100).")
]

# Open unless the emulator runs with --admin-token: "no credential" is a valid choice.
ADMIN: list[dict[str, list[str]]] = [{}, {"admin": []}]


class ControlController(Controller):
    path = "/_emulator"
    tags = ["Control plane"]
    opt = auth_opt("admin")
    security = ADMIN

    @get("/health", summary="Status, version, uptime and clock")
    async def health(self, rt: RuntimeDep) -> HealthOut:
        return service.health(rt)

    @post(
        "/reset",
        status_code=200,
        summary="Back to the fixtures' state (milliseconds)",
        responses=refusals(
            409, worded={409: "The fixtures folder cannot be loaded (`invalid_fixtures`)"}
        ),
    )
    async def reset(self, rt: RuntimeDep) -> ResetOut:
        return service.reset(rt)

    @post("/accounts", status_code=201, summary="A fresh isolated tenant: account, token, key")
    async def create_account(
        self, rt: RuntimeDep, data: JSONBody[TenantCreate | None] = None
    ) -> TenantOut:
        return service.create_tenant(rt, data or TenantCreate())

    @get("/accounts", summary="Every account, newest first, with its balance and limits")
    async def list_accounts(
        self,
        rt: RuntimeDep,
        origin: Annotated[
            str | None,
            QueryParameter(max_length=100, description="`fixture` or `tenant` accounts only."),
        ] = None,
        limit: ControlLimit = None,
        cursor: Cursor = None,
    ) -> AccountList:
        return service.accounts_page(rt, origin, limit, cursor)

    @get("/accounts/{account_id:str}", summary="Balance, pending holds, credits and limits")
    async def get_account(self, rt: RuntimeDep, account_id: FromPath[str]) -> AccountOut:
        return service.get_account(rt, account_id)

    @post(
        "/accounts/{account_id:str}/topup",
        status_code=200,
        summary="Add to the balance, as the dashboard's top-up does (a ledger entry)",
    )
    async def top_up(
        self, rt: RuntimeDep, account_id: FromPath[str], data: JSONBody[TopUp]
    ) -> TopUpOut:
        return service.top_up_account(rt, account_id, data)

    @get(
        "/accounts/{account_id:str}/ledger",
        summary="The account's ledger entries, newest first (every change of a balance)",
    )
    async def ledger(
        self,
        rt: RuntimeDep,
        account_id: FromPath[str],
        asset: Filter = None,
        kind: Filter = None,
        limit: ControlLimit = None,
        cursor: Cursor = None,
    ) -> LedgerList:
        filters = {"asset": asset, "kind": kind}
        return service.ledger_page(rt, account_id, filters, limit, cursor)

    @get("/providers", summary="The fake providers and their status")
    async def list_providers(
        self,
        rt: RuntimeDep,
        limit: Annotated[
            int | None,
            QueryParameter(ge=1, le=1000, description="Items a page, 1-1000 (default: all)."),
        ] = None,
        cursor: Cursor = None,
    ) -> ProviderList:
        return service.list_providers(rt, limit, cursor)

    @post(
        "/providers/{name:str}",
        status_code=200,
        summary="Mark a provider up, down (its routes fail: fallbacks happen) or slow",
    )
    async def set_provider(
        self, rt: RuntimeDep, name: FromPath[str], data: JSONBody[ProviderSet]
    ) -> ProviderOut:
        return service.set_provider(rt, name, data)

    @get("/clock", summary="The virtual clock")
    async def get_clock(self, rt: RuntimeDep) -> ClockOut:
        return service.clock_state(rt)

    @post("/clock", status_code=200, summary="Advance or set the virtual clock (never back)")
    async def set_clock(self, rt: RuntimeDep, data: JSONBody[ClockSet]) -> ClockOut:
        return service.set_clock(rt, data)

    @get(
        "/replies",
        summary="The scripted replies in force, as in fixtures/replies.yaml",
        responses=answers(RepliesOut, "The scripted replies"),
    )
    async def get_replies(self, rt: RuntimeDep) -> dict[str, Any]:
        return replies.current(rt)

    @put(
        "/replies",
        status_code=200,
        summary="Replace the scripted replies (checked as the fixtures' are) until a reset",
        responses=answers(RepliesOut, "The scripted replies now in force"),
    )
    async def set_replies(self, rt: RuntimeDep, data: JSONBody[RepliesSet]) -> dict[str, Any]:
        return replies.replace(rt, data)
