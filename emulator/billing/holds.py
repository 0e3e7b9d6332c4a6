"""Holds on the balance: taken before a gateway request, settled or released after.

`available = balance - active holds`; a hold larger than what is available is
a 402 `insufficient_credits`, decided inside one write transaction, so
concurrent requests never overdraw. Settling writes the charge to the ledger,
closes the hold and writes the usage event, all in one transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emulator.billing.money import micros_to_usd
from emulator.errors import BillingError, NotFound
from emulator.store import reservations
from emulator.store.accounts import add_ledger_entry, get_account
from emulator.store.meta import new_id
from emulator.store.usage import UsageEvent, insert_usage_event

if TYPE_CHECKING:
    from emulator.runtime import Runtime


def hold(
    rt: Runtime, account_id: str, key_id: str | None, amount: int, idempotency_key: str | None
) -> str:
    now = rt.clock.now_iso()
    with rt.store.write() as conn:
        account = get_account(conn, account_id)
        if account is None:
            raise NotFound(f"No account {account_id!r}.")
        available = account.balance_micros - reservations.active_total(conn, account_id)
        if amount > available:
            raise BillingError(
                f"Insufficient credits: this request may cost up to {micros_to_usd(amount)} USD "
                f"({amount} micros) and {micros_to_usd(max(available, 0))} USD is available. Top "
                "up the balance, or lower max_tokens.",
                metadata={"required_micros": amount, "available_micros": available},
            )
        reservation_id = new_id(conn, rt.ids, "res")
        reservations.insert_reservation(
            conn,
            id=reservation_id,
            account_id=account_id,
            key_id=key_id,
            amount=amount,
            idempotency_key=idempotency_key,
            now=now,
        )
    return reservation_id


def settle(rt: Runtime, reservation_id: str, event: UsageEvent) -> None:
    now = rt.clock.now_iso()
    with rt.store.write() as conn:
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
            )
        reservations.close_reservation(
            conn,
            reservation_id,
            status="settled",
            charge=event.charge_micros,
            usage_event_id=event.id,
            reason=None,
            now=now,
        )
        insert_usage_event(conn, event)
        if event.key_id:
            reservations.add_key_usage(conn, event.key_id, event.charge_micros)


def release(rt: Runtime, reservation_id: str, event: UsageEvent, reason: str) -> None:
    with rt.store.write() as conn:
        reservations.close_reservation(
            conn,
            reservation_id,
            status="failed",
            charge=0,
            usage_event_id=event.id,
            reason=reason,
            now=rt.clock.now_iso(),
        )
        insert_usage_event(conn, event)


def pending(rt: Runtime, account_id: str) -> int:
    with rt.store.read() as conn:
        return reservations.active_total(conn, account_id)
