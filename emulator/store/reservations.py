"""Reservations: holds of balance taken before a gateway request, settled or failed after."""

from __future__ import annotations

import sqlite3
from typing import Any

from emulator.store.db import newest_first
from emulator.store.jobs import REFUND_DUE


def active_total(conn: sqlite3.Connection, account_id: str) -> int:
    row = conn.execute(
        "SELECT COALESCE(SUM(amount_micros), 0) FROM reservations "
        "WHERE account_id = ? AND status = 'active'",
        [account_id],
    ).fetchone()
    return int(row[0])


# The available balance of account `a`: its balance less its active holds.
_AVAILABLE = (
    "a.balance_micros - (SELECT COALESCE(SUM(amount_micros), 0) FROM reservations "
    "WHERE account_id = a.id AND status = 'active')"
)


def available(conn: sqlite3.Connection, account_id: str) -> int | None:
    """The account's balance less its active holds; None for no such account."""
    row = conn.execute(f"SELECT {_AVAILABLE} FROM accounts a WHERE id = ?", [account_id]).fetchone()
    return None if row is None else int(row[0])


def available_and_refund_due(
    conn: sqlite3.Connection, account_id: str, now: float
) -> tuple[int, bool] | None:
    """`available`, and whether a failed job of the account awaits its refund (which
    would change it): one query on the hot path instead of two."""
    row = conn.execute(
        f"SELECT {_AVAILABLE}, EXISTS (SELECT 1 FROM jobs WHERE account_id = a.id AND "
        f"{REFUND_DUE}) FROM accounts a WHERE id = ?",
        [now, account_id],
    ).fetchone()
    return None if row is None else (int(row[0]), bool(row[1]))


def insert_reservation(
    conn: sqlite3.Connection,
    *,
    id: str,
    account_id: str,
    key_id: str | None,
    amount: int,
    idempotency_key: str | None,
    created_at: str,
    status: str = "active",
    charge: int = 0,
    usage_event_id: str | None = None,
    reason: str | None = None,
    now: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO reservations (id, account_id, key_id, status, amount_micros, charge_micros, "
        "idempotency_key, usage_event_id, reason, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            id,
            account_id,
            key_id,
            status,
            amount,
            charge,
            idempotency_key,
            usage_event_id,
            reason,
            created_at,
            now or created_at,
        ],
    )


def close_reservation(
    conn: sqlite3.Connection,
    id: str,
    *,
    status: str,
    charge: int,
    usage_event_id: str | None,
    reason: str | None,
    now: str,
) -> None:
    conn.execute(
        "UPDATE reservations SET status = ?, charge_micros = ?, usage_event_id = ?, reason = ?, "
        "updated_at = ? WHERE id = ? AND status = 'active'",
        [status, charge, usage_event_id, reason, now, id],
    )


def list_reservations(
    conn: sqlite3.Connection,
    account_id: str,
    status: str | None,
    limit: int,
    before_seq: int | None,
) -> list[tuple[int, dict[str, Any]]]:
    sql = "SELECT rowid AS seq, * FROM reservations WHERE account_id = ?"
    params: list[Any] = [account_id]
    if status:
        sql += " AND status = ?"
        params.append(status)
    return newest_first(conn, sql, params, limit, before_seq)


def key_held(conn: sqlite3.Connection, key_id: str) -> int:
    """What one key's active holds keep back."""
    held = conn.execute(
        "SELECT COALESCE(SUM(amount_micros), 0) FROM reservations "
        "WHERE key_id = ? AND status = 'active'",
        [key_id],
    ).fetchone()[0]
    return int(held)


def fail_all_active(conn: sqlite3.Connection, reason: str, now: str) -> int:
    cur = conn.execute(
        "UPDATE reservations SET status = 'failed', reason = ?, updated_at = ? "
        "WHERE status = 'active'",
        [reason, now],
    )
    return cur.rowcount
