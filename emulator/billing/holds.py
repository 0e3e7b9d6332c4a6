"""Holds on the balance: taken before a gateway request, settled or released after.

`available = balance - active holds`; a hold larger than what is available is
a 402 `insufficient_credits`, decided inside one write transaction, so
concurrent requests never overdraw. Settling writes the charge to the ledger,
closes the hold and writes the usage event, all in one transaction.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from emulator.billing.money import insufficient_credits
from emulator.billing.spend import check_spend
from emulator.errors import NotFound, ValidationFailed
from emulator.jobs.service import settle_refunds
from emulator.paging import check_limit, decode_seq_cursor, page, seq_cursor
from emulator.store import reservations
from emulator.store.accounts import add_ledger_entry
from emulator.store.keys import ApiKey
from emulator.store.usage import UsageEvent, insert_usage_event

if TYPE_CHECKING:
    from emulator.runtime import Runtime

_log = logging.getLogger("emulator")


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class Hold:
    """A hold on the balance, taken before the first route attempt."""

    id: str
    account_id: str
    key_id: str | None
    amount: int
    idempotency_key: str | None
    created_at: str
    written: bool  # in the reservations table as `active` (else: written when closed)
    world: int  # the state it was taken in (`Runtime.world`)


def hold(
    rt: Runtime,
    account_id: str,
    key: ApiKey | None,
    amount: int,
    idempotency_key: str | None,
    *,
    write: bool = True,
    output_limit: str = "max_tokens",
    scopes: tuple[str, ...] = (),
) -> Hold:
    """Hold `amount`, or raise the 402 that says why not (`output_limit`: the request's
    field that bounds its answer, which the 402 says to lower).

    `write=False` is for a hold closed in the same transaction (a whole answer):
    nothing else can see it in between, so its row is written once, closed."""
    now = rt.clock.now_iso()
    key_id = key.id if key else None
    with rt.store.write() as conn:
        now_s, what = rt.clock.now(), "this request may cost up to"
        check_spend(conn, rt.keys, key, amount, now_s, what, scopes)
        standing = reservations.available_and_refund_due(conn, account_id, rt.clock.now())
        if standing is None:
            raise NotFound(f"No account {account_id!r}.")
        available, refund_due = standing
        if refund_due:  # a failed video job gives its charge back first
            settle_refunds(rt, conn, account_id)
            available = reservations.available(conn, account_id) or 0
        if amount > available:
            raise insufficient_credits(amount, available, f"lower {output_limit}")
        taken = Hold(
            rt.new_id("res"), account_id, key_id, amount, idempotency_key, now, write, rt.world
        )
        if write:
            _write(conn, taken, "active")
    return taken


def _write(conn: sqlite3.Connection, taken: Hold, status: str, **closed: Any) -> None:
    reservations.insert_reservation(
        conn,
        id=taken.id,
        account_id=taken.account_id,
        key_id=taken.key_id,
        amount=taken.amount,
        idempotency_key=taken.idempotency_key,
        created_at=taken.created_at,
        status=status,
        **closed,
    )


def _close(
    conn: sqlite3.Connection,
    taken: Hold,
    status: str,
    charge: int,
    usage_event_id: str,
    reason: str | None,
    now: str,
) -> None:
    if taken.written:
        reservations.close_reservation(
            conn,
            taken.id,
            status=status,
            charge=charge,
            usage_event_id=usage_event_id,
            reason=reason,
            now=now,
        )
    else:
        _write(
            conn,
            taken,
            status,
            charge=charge,
            usage_event_id=usage_event_id,
            reason=reason,
            now=now,
        )


def settle(rt: Runtime, taken: Hold, event: UsageEvent) -> None:
    """Charge the real amount, close the hold and write the usage event, at once.
    A charge above its hold is cut to the hold first (`cap_at_hold`)."""
    if event.charge_micros > taken.amount:
        cap_at_hold(taken, event)
    now = event.created_at  # settled when the event happened
    with rt.store.write() as conn:
        if taken.world != rt.world:
            return  # a reset or restore replaced the state the hold was taken in
        if event.charge_micros:
            add_ledger_entry(
                conn,
                rt.ids,
                account_id=event.account_id,
                asset="usd_micros",
                kind="charge",
                amount=-event.charge_micros,
                reference=event.id,
                now=now,
                entry_id=rt.new_id("le"),
            )
        _close(conn, taken, "settled", event.charge_micros, event.id, None, now)
        insert_usage_event(conn, event)


def cap_at_hold(taken: Hold, event: UsageEvent) -> None:
    """Cut the event's charge to its hold, as a card is never captured above what was
    authorized: the hold is what the available balance and the spend limit were checked
    against, so charging more could overdraw either. The gateway holds the worst case,
    so this is a bug of ours, logged; the platform's margin pays for it, not the account."""
    _log.error(
        "usage event %s: charge of %d micros above its hold of %d; charged %d",
        event.id,
        event.charge_micros,
        taken.amount,
        taken.amount,
    )
    event.metadata["charge_capped_from_micros"] = event.charge_micros
    cut_to_hold(taken, event)


class Charged(Protocol):
    """What carries a charge and its margin: a usage event, a priced `Charge`."""

    charge_micros: int
    margin_micros: int


def cut_to_hold(taken: Hold, charged: Charged) -> None:
    """A charge above the hold cut to it, the platform's margin paying the difference; a
    stream's last usage, priced before settling, says what settling will charge."""
    excess = charged.charge_micros - taken.amount
    if excess > 0:
        charged.charge_micros = taken.amount
        charged.margin_micros -= excess


def release(rt: Runtime, taken: Hold, event: UsageEvent, reason: str) -> None:
    """Every route failed: nothing is charged; the hold is closed as `failed`."""
    with rt.store.write() as conn:
        if taken.world != rt.world:
            return  # the state it was taken in is gone, and the hold with it
        _close(conn, taken, "failed", 0, event.id, reason, rt.clock.now_iso())
        insert_usage_event(conn, event)


def list_holds(
    rt: Runtime, account_id: str, status: str | None, limit: int | None, cursor: str | None
) -> dict[str, Any]:
    """The account's reservations, newest first: which idempotency key each belongs to."""
    if status not in (None, "", "active", "failed", "settled"):
        raise ValidationFailed("status is one of active, failed, settled.", param="status")
    size = check_limit(limit, default=50, maximum=200)
    before = decode_seq_cursor(cursor, "reservations")
    with rt.store.read() as conn:
        rows = reservations.list_reservations(conn, account_id, status or None, size + 1, before)
    return page(
        rows,
        size,
        cursor_of=lambda item: seq_cursor("reservations", item[0]),
        render=lambda item: {"object": "reservation", **_public(item[1])},
    )


def _public(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "account_id"}
