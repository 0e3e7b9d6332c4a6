"""The rules behind /_emulator/*: tenants, top-ups, the clock, reset, health."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from emulator import __version__
from emulator.billing.ledger import balance_view, top_up
from emulator.billing.money import usd_to_micros
from emulator.clock import parse_iso
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
    ResetOut,
    TenantCreate,
    TenantOut,
    TopUp,
    TopUpOut,
)
from emulator.errors import FixturesInvalid, NotFound, ValidationFailed
from emulator.ids import hash_secret
from emulator.jobs.service import settled_read
from emulator.keys.service import issue_key
from emulator.paging import (
    check_limit,
    decode_seq_cursor,
    page,
    page_in_order,
    seq_cursor,
)
from emulator.store import accounts as account_rows
from emulator.store.catalog import ProviderRow, set_provider_status
from emulator.store.fixtures import FixtureError
from emulator.store.meta import count_catalog_change, get_platform, next_sequence
from emulator.store.reservations import active_total

if TYPE_CHECKING:
    from emulator.runtime import Runtime

ALL_SCOPES = ("ai.gateway", "video", "studio.media")


def health(rt: Runtime) -> HealthOut:
    return HealthOut(
        version=__version__,
        uptime_seconds=round(rt.clock.uptime(), 3),
        clock=clock_state(rt),
        db=rt.settings.db,
        seed=rt.ids.seed,
        fixtures=str(rt.fixtures_dir),
    )


def reset(rt: Runtime) -> ResetOut:
    started = rt.clock.monotonic()
    try:
        rt.reset()
    except FixtureError as exc:
        raise FixturesInvalid(
            f"The fixtures cannot be loaded: {exc}. Fix the file and reset again; until "
            "then the state is as it was."
        ) from exc
    took_ms = (rt.clock.monotonic() - started) * 1000
    return ResetOut(took_ms=round(took_ms, 3), clock=clock_state(rt))


def clock_state(rt: Runtime) -> ClockOut:
    now = rt.clock.now()
    return ClockOut(mode=rt.clock.mode, now=rt.clock.now_iso(), epoch_seconds=now)


def set_clock(rt: Runtime, body: ClockSet) -> ClockOut:
    if body.advance_seconds is not None:
        rt.clock.advance(body.advance_seconds)
    elif body.now is not None:
        try:
            when = parse_iso(body.now)
        except ValueError as exc:  # Python's words only where they are about the text
            said = str(exc)
            why = "" if "timedelta" in said or "isoformat" in said else f" ({said})"
            raise ValidationFailed(
                f"`now` must be an ISO-8601 instant such as 2026-02-01T00:00:00Z, with an "
                f"offset within 24 hours; got {body.now!r}{why}.",
                param="now",
            ) from exc
        rt.clock.set(when)
    rt.save_clock()
    return clock_state(rt)


def list_providers(rt: Runtime, limit: int | None, cursor: str | None) -> ProviderList:
    """The catalog's providers in its order: all of them unless `limit` says fewer."""
    providers = list(rt.catalog.view().providers.items())
    listed = page_in_order(
        providers,
        limit,
        cursor,
        lambda item: item[0],
        lambda item: _provider_out(item[1]),
        default=max(len(providers), 1),
        maximum=1000,
    )
    return ProviderList.model_validate(listed)


def _fixture_latency(rt: Runtime, name: str) -> int | None:
    """The fixtures' latency of a provider; None for one they do not have (or cannot
    be read now: the provider keeps the latency it has)."""
    from emulator.store.fixtures import FixtureError

    try:
        providers = rt.fixtures().providers
    except FixtureError:
        return None
    return next((p.latency_ms for p in providers if p.name == name), None)


def set_provider(rt: Runtime, name: str, body: ProviderSet) -> ProviderOut:
    """Mark a provider up, down (every call to it fails) or slow (long stream pauses).
    `up` without a `latency_ms` brings back the fixtures' latency too, as a reset would."""
    latency = body.latency_ms
    if latency is None and body.status == "up":
        latency = _fixture_latency(rt, name)
    with rt.store.write() as conn:
        if not set_provider_status(conn, name, body.status, latency):
            raise NotFound(
                f"No provider {name!r}; GET /_emulator/providers lists them.", param="name"
            )
        count_catalog_change(conn)
    rt.catalog.invalidate()
    return _provider_out(rt.catalog.view().providers[name])


def _provider_out(row: ProviderRow) -> ProviderOut:
    return ProviderOut(
        name=row.name,
        display_name=row.body["display_name"],
        wire_format=row.wire_format,
        status=row.status,
        behavior=row.body.get("behavior", "ok"),
        latency_ms=row.latency_ms,
    )


def create_tenant(rt: Runtime, body: TenantCreate) -> TenantOut:
    """A fresh isolated account with a user token and an all-scopes API key."""
    now = rt.clock.now_iso()
    with rt.store.write() as conn:
        number = next_sequence(conn, "tenant")
        world = get_platform(conn, "world") or {}
        account = account_rows.Account(
            id=rt.ids.make("acct", number),
            name=body.name or f"Tenant {number}",
            balance_micros=body.balance_micros,
            studio_credits=body.studio_credits,
            rate_limit_rpm=body.rate_limit_rpm or world.get("default_rate_limit_rpm", 600),
            premium_approved=body.premium_approved,
            origin="tenant",
            created_at=now,
        )
        account_rows.insert_account(conn, account)
        account_rows.open_balances(conn, rt.ids, account, now, lambda: rt.new_id("le"))
        user_token = rt.ids.secret("emu_user_", number)
        account_rows.insert_user_token(conn, hash_secret(user_token), account.id, "tenant", now)
        key, api_key = issue_key(
            conn,
            rt,
            account.id,
            name="Tenant key (all scopes)",
            scopes=ALL_SCOPES,
            environment="test",
        )
    return TenantOut(
        account_id=account.id,
        name=account.name,
        user_token=user_token,
        api_key=api_key,
        api_key_id=key.id,
        balance_micros=account.balance_micros,
        studio_credits=account.studio_credits,
        rate_limit_rpm=account.rate_limit_rpm,
        premium_approved=account.premium_approved,
        base_url=rt.settings.base_url,
    )


def get_account(rt: Runtime, account_id: str) -> AccountOut:
    account, pending = settled_read(
        rt,
        account_id,
        lambda c: (account_rows.get_account(c, account_id), active_total(c, account_id)),
    )
    if account is None:
        raise NotFound(f"No account {account_id!r}.", param="account_id")
    return account_out(account, pending)


ACCOUNT_ORIGINS = ("fixture", "tenant")


def accounts_page(
    rt: Runtime, origin: str | None, limit: int | None, cursor: str | None
) -> AccountList:
    """Every account, newest first (tenants before the fixtures' accounts), each as
    `GET /_emulator/accounts/{id}` shows it."""
    size = check_limit(limit, default=100, maximum=1000)
    before = decode_seq_cursor(cursor, "accounts")
    if origin not in (None, "", *ACCOUNT_ORIGINS):
        raise ValidationFailed(f"origin is one of {', '.join(ACCOUNT_ORIGINS)}.", param="origin")
    with rt.store.read() as conn:
        ids = account_rows.list_account_ids(conn, origin, size + 1, before)
    # Each read as `get_account` does: a failed job's refund is settled before it shows.
    return AccountList.model_validate(
        page(
            ids,
            size,
            cursor_of=lambda item: seq_cursor("accounts", item[0]),
            render=lambda item: get_account(rt, item[1]),
        )
    )


def account_out(account: account_rows.Account, pending: int = 0) -> AccountOut:
    return AccountOut(
        id=account.id,
        name=account.name,
        origin=account.origin,
        rate_limit_rpm=account.rate_limit_rpm,
        premium_approved=account.premium_approved,
        created_at=account.created_at,
        **balance_view(account, pending),
    )


LEDGER_ASSETS = ("usd_micros", "studio_credits")
LEDGER_KINDS = ("opening", "topup", "charge", "job_charge", "job_refund")


def ledger_page(
    rt: Runtime,
    account_id: str,
    filters: dict[str, str | None],
    limit: int | None,
    cursor: str | None,
) -> LedgerList:
    """The account's ledger, newest first: what test code checks a balance against."""
    size = check_limit(limit, default=100, maximum=1000)
    before = decode_seq_cursor(cursor, "ledger")
    clean = {name: value for name, value in filters.items() if value}
    for name, allowed in (("asset", LEDGER_ASSETS), ("kind", LEDGER_KINDS)):
        if clean.get(name) not in (None, *allowed):
            raise ValidationFailed(f"{name} is one of {', '.join(allowed)}.", param=name)
    entries, account = settled_read(
        rt,
        account_id,
        lambda c: (
            account_rows.list_ledger(c, account_id, clean, size + 1, before),
            account_rows.get_account(c, account_id),
        ),
    )
    if account is None:
        raise NotFound(f"No account {account_id!r}.", param="account_id")
    return LedgerList.model_validate(
        page(
            entries,
            size,
            cursor_of=lambda item: seq_cursor("ledger", item[0]),
            render=lambda item: _ledger_entry(item[1]),
        )
    )


def _ledger_entry(entry: account_rows.LedgerEntry) -> dict[str, Any]:
    data = asdict(entry)
    data.pop("account_id")
    return {"object": "ledger_entry", **data}


def top_up_account(rt: Runtime, account_id: str, body: TopUp) -> TopUpOut:
    amount = body.amount_micros
    if body.amount_usd is not None:
        try:
            amount = usd_to_micros(body.amount_usd)
        except ValueError as exc:
            raise ValidationFailed(str(exc), param="amount_usd") from exc
    assert amount is not None  # the schema requires one of the two
    param = "amount_micros" if body.amount_usd is None else "amount_usd"
    entry = top_up(rt, account_id, amount, reference="control-plane", param=param)
    return TopUpOut(
        account=get_account(rt, account_id), ledger_entry_id=entry.id, amount_micros=amount
    )
