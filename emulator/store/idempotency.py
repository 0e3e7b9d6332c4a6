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


def finish_record(
    conn: sqlite3.Connection,
    account_id: str,
    key: str,
    status: int,
    content_type: str,
    headers: dict[str, str],
    body: bytes,
) -> None:
    conn.execute(
        "UPDATE idempotency_keys SET state = 'done', status = ?, content_type = ?, headers = ?, "
        "body = ? WHERE account_id = ? AND key = ?",
        [status, content_type, json.dumps(headers), body, account_id, key],
    )


def drop_record(conn: sqlite3.Connection, account_id: str, key: str) -> None:
    conn.execute("DELETE FROM idempotency_keys WHERE account_id = ? AND key = ?", [account_id, key])
