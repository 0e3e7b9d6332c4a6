"""Usage events: one per gateway request, with its route attempts."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, fields
from typing import Any

import msgspec

from emulator.store.db import newest_first


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class UsageEvent:
    id: str
    account_id: str
    key_id: str | None
    created_at: str
    endpoint: str
    model: str
    provider: str | None
    status: str
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    provider_cost_micros: int
    platform_fee_micros: int
    charge_micros: int
    margin_micros: int
    route_attempts: list[dict[str, Any]]
    metadata: dict[str, Any]
    reasoning_tokens: int = 0  # of completion_tokens
    finish_reason: str | None = None  # the first choice's; a cut stream's `error`
    cached_tokens: int = 0  # of prompt_tokens: read from the provider's prompt cache
    cache_write_tokens: int = 0  # of prompt_tokens: written to it
    web_search_results: int = 0  # web search results the prompt held, each charged
    stop_sequence: str | None = None  # the one of the request's that ended the answer
    web_fetches: int = 0  # pages the web fetch tool read, each charged


_COLUMNS = [f.name for f in fields(UsageEvent)]
_INSERT = (
    f"INSERT INTO usage_events ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})"
)


def insert_usage_event(conn: sqlite3.Connection, event: UsageEvent) -> None:
    # On every gateway request: no deep copy (dataclasses.asdict), one prepared statement.
    values = [getattr(event, column) for column in _COLUMNS]
    values[_COLUMNS.index("route_attempts")] = msgspec.json.encode(event.route_attempts).decode()
    values[_COLUMNS.index("metadata")] = msgspec.json.encode(event.metadata).decode()
    conn.execute(_INSERT, values)


def key_usage(conn: sqlite3.Connection, key_id: str, since: str) -> tuple[int, int, int]:
    """(settled requests, their charges, the charges since `since`) of one key: derived
    from its usage events, which every settled request writes anyway, so the hot path
    keeps no counters of its own. Failed requests have an event but charge nothing."""
    row = conn.execute(
        "SELECT COALESCE(SUM(status = 'succeeded'), 0), COALESCE(SUM(charge_micros), 0), "
        "COALESCE(SUM(CASE WHEN created_at >= ? THEN charge_micros END), 0) "
        "FROM usage_events WHERE key_id = ?",
        [since, key_id],
    ).fetchone()
    return int(row[0]), int(row[1]), int(row[2])


def key_charges_since(conn: sqlite3.Connection, key_id: str, starts: list[str]) -> list[int]:
    """The key's charges since each of `starts` (ISO instants), in one query."""
    since = "COALESCE(SUM(CASE WHEN created_at >= ? THEN charge_micros END), 0)"
    row = conn.execute(
        f"SELECT {', '.join(since for _ in starts)} FROM usage_events WHERE key_id = ?",
        [*starts, key_id],
    ).fetchone()
    return [int(value) for value in row]


def get_usage_event(conn: sqlite3.Connection, account_id: str, event_id: str) -> UsageEvent | None:
    row = conn.execute(
        "SELECT * FROM usage_events WHERE id = ? AND account_id = ?", [event_id, account_id]
    ).fetchone()
    return None if row is None else _event(row)


def _event(row: sqlite3.Row | dict[str, Any]) -> UsageEvent:
    data = dict(row)
    data["route_attempts"] = json.loads(data["route_attempts"])
    data["metadata"] = json.loads(data["metadata"])
    return UsageEvent(**data)


def list_usage_events(
    conn: sqlite3.Connection,
    account_id: str,
    filters: dict[str, str],
    limit: int,
    before_seq: int | None,
) -> list[tuple[int, UsageEvent]]:
    """Newest first; `filters` on provider, model, status, key_id and created_at bounds."""
    sql = "SELECT rowid AS seq, * FROM usage_events WHERE account_id = ?"
    params: list[Any] = [account_id]
    for column in ("provider", "model", "status", "key_id"):
        if filters.get(column):
            sql += f" AND {column} = ?"
            params.append(filters[column])
    if filters.get("created_after"):
        sql += " AND created_at >= ?"
        params.append(filters["created_after"])
    if filters.get("created_before"):
        sql += " AND created_at < ?"
        params.append(filters["created_before"])
    return [(seq, _event(row)) for seq, row in newest_first(conn, sql, params, limit, before_seq)]
