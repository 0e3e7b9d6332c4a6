"""Bodies of the control plane (SPEC section 10), spelled the same for every client."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictInt, model_validator

from emulator.bodies import DisplayName, RequestBody, WireModel
from emulator.store.fixture_models import ReplyFixture

USD_PATTERN = r"^[0-9]+(\.[0-9]{1,6})?$"  # up to six decimals: whole micros
Micros = Annotated[StrictInt, Field(ge=0, le=10**15)]


class TenantCreate(RequestBody):
    name: DisplayName | None = None
    balance_micros: Micros = 25_000_000
    studio_credits: Micros = 1000
    rate_limit_rpm: Annotated[StrictInt, Field(ge=1, le=10_000_000)] | None = None
    premium_approved: bool = False


class TenantOut(WireModel):
    account_id: str
    name: str
    user_token: str
    api_key: str
    api_key_id: str
    balance_micros: int
    studio_credits: int
    rate_limit_rpm: int
    premium_approved: bool
    base_url: str


class AccountOut(WireModel):
    id: str
    object: Literal["account"] = "account"
    name: str
    origin: str
    balance_micros: int
    pending_micros: int
    available_micros: int
    balance_usd: str
    available_usd: str
    studio_credits: int
    rate_limit_rpm: int
    premium_approved: bool
    created_at: str


class AccountList(WireModel):
    object: Literal["list"] = "list"
    data: list[AccountOut]
    has_more: bool
    next_cursor: str | None


class TopUp(RequestBody):
    amount_micros: Annotated[StrictInt, Field(gt=0)] | None = None
    amount_usd: Annotated[str, Field(examples=["10.00"], pattern=USD_PATTERN)] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> TopUp:
        if (self.amount_micros is None) == (self.amount_usd is None):
            raise ValueError("Send exactly one of `amount_micros` and `amount_usd`")
        return self


class TopUpOut(WireModel):
    account: AccountOut
    ledger_entry_id: str
    amount_micros: int


class LedgerEntryOut(WireModel):
    """One change of a balance: every change is one, so the amounts add up to it."""

    id: str
    object: Literal["ledger_entry"] = "ledger_entry"
    asset: Literal["usd_micros", "studio_credits"]
    kind: str  # opening, topup, charge, job_charge, job_refund
    amount: int  # signed: a charge is negative
    balance_after: int
    reference: str | None  # what it is for: a usage event, a job, a top-up's source
    created_at: str


class LedgerList(WireModel):
    object: Literal["list"] = "list"
    data: list[LedgerEntryOut]
    has_more: bool
    next_cursor: str | None


class ClockOut(WireModel):
    mode: Literal["real", "manual"]
    now: str
    epoch_seconds: float


class ClockSet(RequestBody):
    advance_seconds: Annotated[float, Field(ge=0, le=100 * 365 * 86400)] | None = None
    now: (
        Annotated[
            str, Field(examples=["2026-02-01T00:00:00Z"], json_schema_extra={"format": "date-time"})
        ]
        | None
    ) = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ClockSet:
        if (self.advance_seconds is None) == (self.now is None):
            raise ValueError("Send exactly one of `advance_seconds` and `now`")
        return self


class ProviderSet(RequestBody):
    status: Literal["up", "down", "slow"]
    latency_ms: Annotated[StrictInt, Field(ge=0, le=600_000)] | None = None


class ProviderOut(WireModel):
    name: str
    display_name: str
    wire_format: str
    status: str
    behavior: str
    latency_ms: int


class ProviderList(WireModel):
    """The providers, all on one page unless `limit` says fewer."""

    object: Literal["list"] = "list"
    data: list[ProviderOut]
    has_more: bool = False
    next_cursor: str | None = None


class HealthOut(WireModel):
    status: Literal["ok"] = "ok"
    version: str
    uptime_seconds: float
    clock: ClockOut
    db: str
    seed: int
    fixtures: str


class ResetOut(WireModel):
    status: Literal["reset"] = "reset"
    took_ms: float
    clock: ClockOut


class RepliesSet(RequestBody):
    """The scripted replies, shaped as `fixtures/replies.yaml` (its `replies` list)."""

    replies: Annotated[list[ReplyFixture], Field(max_length=1000)]
