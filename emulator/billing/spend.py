"""A key's spend limit: what it has spent in the current window, gateway requests and
video jobs alike, and the 402 `budget_exceeded` when a new charge would go over it.

Checked in the transaction that then holds or charges, so concurrent requests of one
key are counted one after another and never overshoot the limit together.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from emulator.auth.credentials import current_key
from emulator.billing.money import micros_to_usd
from emulator.billing.windows import window_bounds
from emulator.clock import iso
from emulator.errors import BudgetExceeded
from emulator.store import reservations
from emulator.store.jobs import key_job_spend
from emulator.store.keys import ApiKey, KeyCache
from emulator.store.usage import key_charges_since


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class SpendStanding:
    limit_micros: int | None
    used_micros: int
    held_micros: int
    reset_interval: str | None
    resets_at: str | None

    def allows(self, amount: int) -> bool:
        return self.limit_micros is None or self.used_micros + self.held_micros + amount <= (
            self.limit_micros
        )

    def wire(self, amount: int) -> dict[str, Any]:
        """The standing as quotes and 402s show it: what remains is after the key's
        active holds too, so that `amount` is allowed exactly when it fits in it."""
        remaining = (
            None
            if self.limit_micros is None
            else max(self.limit_micros - self.used_micros - self.held_micros, 0)
        )
        return {
            "limit_micros": self.limit_micros,
            "used_micros": self.used_micros,
            "held_micros": self.held_micros,
            "remaining_micros": remaining,
            "reset_interval": self.reset_interval,
            "resets_at": self.resets_at,
            "decision": "allow" if self.allows(amount) else "deny",
        }


def spend_standing(conn: sqlite3.Connection, key: ApiKey | None, now: float) -> SpendStanding:
    """Where a key stands against its spend limit in the current window: its gateway
    requests settled and held, and its jobs' charges (but those refunded or failing by
    now, whose refund is due)."""
    if key is None or key.spend_limit_micros is None:
        return SpendStanding(None, 0, 0, None, None)
    start, reset = window_bounds(key.spend_reset_interval, now)
    since = [iso(start)]  # the same sums as `GET /key` and `/keys` show
    used = key_charges_since(conn, key.id, since)[0] + key_job_spend(conn, key.id, since, now)[0]
    held = reservations.key_held(conn, key.id)
    return SpendStanding(
        key.spend_limit_micros,
        used,
        held,
        key.spend_reset_interval,
        iso(reset) if reset is not None else None,
    )


def check_spend(
    conn: sqlite3.Connection,
    keys: KeyCache,
    key: ApiKey | None,
    amount: int,
    now: float,
    what: str,
    scopes: tuple[str, ...] = (),
) -> SpendStanding:
    """Raise 402 `budget_exceeded` unless `amount` more fits the key's limit (`what`
    says what the amount is, for the message). The key is read again, in the caller's
    write transaction: one disabled, deleted, given a lower limit or stripped of the
    route's `scopes` since the request was authenticated (its body still arriving, a
    latency fault) is refused (401, 402, 403)."""
    if key is not None:
        key = current_key(conn, keys, key, scopes)
    spend = spend_standing(conn, key, now)
    if not spend.allows(amount):
        key_id = key.id if key else None
        raise BudgetExceeded(
            f"This key's spend limit of {micros_to_usd(spend.limit_micros or 0)} USD "
            f"({spend.reset_interval or 'in total'}) would be exceeded: "
            f"{spend.used_micros} micros spent and {spend.held_micros} held in this window, "
            f"and {what} {amount}. Raise the limit (PATCH /api/v1/keys/{key_id})"
            + (
                f" or wait for the window to reset at {spend.resets_at}."
                if spend.resets_at
                else "; without a reset interval it covers all time and never resets."
            ),
            metadata=spend.wire(amount),
        )
    return spend
