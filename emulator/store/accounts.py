"""Accounts, their user tokens and their ledger.

A balance only ever changes through `apply_ledger_entry`, in the caller's
transaction, so `balance = sum of ledger amounts` holds for every asset.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from emulator.store.db import newest_first
from emulator.store.meta import new_id

if TYPE_CHECKING:
    from emulator.ids import Ids

Asset = Literal["usd_micros", "studio_credits"]
_BALANCE_COLUMN: dict[str, str] = {
    "usd_micros": "balance_micros",
    "studio_credits": "studio_credits",
}


@dataclass(frozen=True)
class Account:
    id: str
    name: str
    balance_micros: int
    studio_credits: int
    rate_limit_rpm: int
    premium_approved: bool
    origin: str
    created_at: str


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class LedgerEntry:
    id: str
    account_id: str
    asset: str
    kind: str
    amount: int
    balance_after: int
    reference: str | None
    created_at: str


def _account(row: sqlite3.Row) -> Account:
    return Account(
        id=row["id"],
        name=row["name"],
        balance_micros=row["balance_micros"],
        studio_credits=row["studio_credits"],
        rate_limit_rpm=row["rate_limit_rpm"],
        premium_approved=bool(row["premium_approved"]),
        origin=row["origin"],
        created_at=row["created_at"],
    )


def insert_account(conn: sqlite3.Connection, account: Account) -> bool:
    """Insert with zero balances (openings go through the ledger); False if it exists."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO accounts (id, name, balance_micros, studio_credits, "
        "rate_limit_rpm, premium_approved, origin, created_at) VALUES (?, ?, 0, 0, ?, ?, ?, ?)",
        [
            account.id,
            account.name,
            account.rate_limit_rpm,
            int(account.premium_approved),
            account.origin,
            account.created_at,
        ],
    )
    return cur.rowcount == 1


def get_account(conn: sqlite3.Connection, account_id: str) -> Account | None:
    row = conn.execute("SELECT * FROM accounts WHERE id = ?", [account_id]).fetchone()
    return None if row is None else _account(row)


def list_account_ids(
    conn: sqlite3.Connection, origin: str | None, limit: int, before_seq: int | None
) -> list[tuple[int, str]]:
    """Account ids, newest first; `origin` (`fixture`, `tenant`) filters."""
    sql, params = "SELECT rowid AS seq, id FROM accounts WHERE 1", []
    if origin:
        sql, params = sql + " AND origin = ?", [origin]
    return [(seq, row["id"]) for seq, row in newest_first(conn, sql, params, limit, before_seq)]


def apply_ledger_entry(conn: sqlite3.Connection, entry: LedgerEntry) -> int:
    """Add `entry.amount` to the account's balance of `entry.asset`; return the new balance."""
    column = _BALANCE_COLUMN[entry.asset]
    row = conn.execute(
        f"UPDATE accounts SET {column} = {column} + ? WHERE id = ? RETURNING {column}",
        [entry.amount, entry.account_id],
    ).fetchone()
    balance_after = int(row[0])
    conn.execute(
        "INSERT INTO ledger (id, account_id, asset, kind, amount, balance_after, reference, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            entry.id,
            entry.account_id,
            entry.asset,
            entry.kind,
            entry.amount,
            balance_after,
            entry.reference,
            entry.created_at,
        ],
    )
    return balance_after


def add_ledger_entry(
    conn: sqlite3.Connection,
    ids: Ids,
    *,
    account_id: str,
    asset: Asset,
    kind: str,
    amount: int,
    reference: str | None,
    now: str,
    entry_id: str | None = None,
) -> LedgerEntry:
    entry = LedgerEntry(
        id=entry_id or new_id(conn, ids, "le"),
        account_id=account_id,
        asset=asset,
        kind=kind,
        amount=amount,
        balance_after=0,
        reference=reference,
        created_at=now,
    )
    entry.balance_after = apply_ledger_entry(conn, entry)
    return entry


def open_balances(
    conn: sqlite3.Connection,
    ids: Ids,
    account: Account,
    now: str,
    entry_id: Callable[[], str] | None = None,
) -> None:
    """The opening ledger entries that give a new account its starting balances.
    `entry_id`: a server's own ids (`Runtime.new_id`), which it numbers in blocks."""
    for asset, amount in (
        ("usd_micros", account.balance_micros),
        ("studio_credits", account.studio_credits),
    ):
        add_ledger_entry(
            conn,
            ids,
            account_id=account.id,
            asset=asset,  # type: ignore[arg-type]
            kind="opening",
            amount=amount,
            reference=None,
            now=now,
            entry_id=entry_id() if entry_id else None,
        )


def ledger_sum(conn: sqlite3.Connection, account_id: str, asset: Asset) -> int:
    row = conn.execute(
        "SELECT COALESCE(SUM(amount), 0) FROM ledger WHERE account_id = ? AND asset = ?",
        [account_id, asset],
    ).fetchone()
    return int(row[0])


def credited(conn: sqlite3.Connection, account_id: str) -> int:
    """The USD the account was given: its opening balance and its top-ups."""
    row = conn.execute(
        "SELECT COALESCE(SUM(amount), 0) FROM ledger WHERE account_id = ? "
        "AND asset = 'usd_micros' AND kind IN ('opening', 'topup')",
        [account_id],
    ).fetchone()
    return int(row[0])


def list_ledger(
    conn: sqlite3.Connection,
    account_id: str,
    filters: dict[str, str],
    limit: int,
    before_seq: int | None,
) -> list[tuple[int, LedgerEntry]]:
    """The account's ledger entries, newest first; `filters` on asset and kind."""
    sql = "SELECT rowid AS seq, * FROM ledger WHERE account_id = ?"
    params: list[Any] = [account_id]
    for column in ("asset", "kind"):
        if filters.get(column):
            sql += f" AND {column} = ?"
            params.append(filters[column])
    rows = newest_first(conn, sql, params, limit, before_seq)
    return [(seq, LedgerEntry(**row)) for seq, row in rows]


def insert_user_token(
    conn: sqlite3.Connection, token_hash: str, account_id: str, label: str, created_at: str
) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO user_tokens (token_hash, account_id, label, created_at) "
        "VALUES (?, ?, ?, ?)",
        [token_hash, account_id, label, created_at],
    )


def account_for_user_token(conn: sqlite3.Connection, token_hash: str) -> str | None:
    row = conn.execute(
        "SELECT account_id FROM user_tokens WHERE token_hash = ?", [token_hash]
    ).fetchone()
    return None if row is None else str(row[0])
