"""Idempotency records: the first answer to a key, kept to be replayed."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class IdempotencyRecord:
    account_id: str
    key: str
    endpoint: str
    body_hash: str
    state: str
    status: int | None
    content_type: str | None
    headers: dict[str, str]
    body: bytes | None
    created_at: float


def get_record(conn: sqlite3.Connection, account_id: str, key: str) -> IdempotencyRecord | None:
    row = conn.execute(
        "SELECT * FROM idempotency_keys WHERE account_id = ? AND key = ?", [account_id, key]
    ).fetchone()
    if row is None:
        return None
    data = dict(row)
    data["headers"] = json.loads(data["headers"] or "{}")
    return IdempotencyRecord(**data)


def start_record(
    conn: sqlite3.Connection, account_id: str, key: str, endpoint: str, body_hash: str, now: float
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO idempotency_keys (account_id, key, endpoint, body_hash, state, "
        "created_at) VALUES (?, ?, ?, ?, 'in_flight', ?)",
        [account_id, key, endpoint, body_hash, now],
    )


# The record a request started, and no later one: a key whose record expired while
# its first request still ran may be claimed again, and that request's end must not
# finish or drop the new one.
_STARTED = "account_id = ? AND key = ? AND created_at = ? AND state = 'in_flight'"


def finish_record(
    conn: sqlite3.Connection,
    account_id: str,
    key: str,
    started: float,
    status: int,
    content_type: str,
    headers: dict[str, str],
    body: bytes,
) -> None:
    conn.execute(
        "UPDATE idempotency_keys SET state = 'done', status = ?, content_type = ?, headers = ?, "
        f"body = ? WHERE {_STARTED}",
        [status, content_type, json.dumps(headers), body, account_id, key, started],
    )


def drop_record(conn: sqlite3.Connection, account_id: str, key: str, started: float) -> None:
    conn.execute(f"DELETE FROM idempotency_keys WHERE {_STARTED}", [account_id, key, started])
