"""Stored responses: the response object and its request's own input items."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

# How far back a conversation is followed: far beyond any real one, and a bound on
# the recursive query should a chain ever loop.
MAX_CHAIN = 10_000


@dataclass(frozen=True)
class Run:
    """When a background response is queued, runs and ends, on the virtual clock
    (seconds since the epoch), and when it was cancelled, if it was."""

    created_ts: float
    queued_s: float
    processing_s: float
    cancelled_ts: float | None = None


@dataclass(frozen=True)
class StoredResponse:
    response: dict[str, Any]
    input: list[dict[str, Any]]
    run: Run | None = None  # None: not made in the background
    events: list[dict[str, Any]] | None = None  # a background response's stream events


def save_response(
    conn: sqlite3.Connection,
    account_id: str,
    response: dict[str, Any],
    input_items: list[dict[str, Any]],
    now: str,
    run: Run | None = None,
    events: list[dict[str, Any]] | None = None,
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO stored_responses (id, account_id, previous_response_id, "
        "response, input, created_at, created_ts, queued_s, processing_s, events) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            response["id"],
            account_id,
            response.get("previous_response_id"),
            json.dumps(response),
            json.dumps(input_items),
            now,
            *((run.created_ts, run.queued_s, run.processing_s) if run else (None, None, None)),
            None if events is None else json.dumps(events),
        ],
    )


def update_response(
    conn: sqlite3.Connection,
    account_id: str,
    response: dict[str, Any],
    run: Run,
    events: list[dict[str, Any]],
) -> bool:
    """A kept background response whole at last (its cancel stands); False when it is
    no longer kept (deleted, or a reset)."""
    changed = conn.execute(
        "UPDATE stored_responses SET response = ?, created_ts = ?, queued_s = ?, "
        "processing_s = ?, events = ? WHERE id = ? AND account_id = ?",
        [
            json.dumps(response),
            run.created_ts,
            run.queued_s,
            run.processing_s,
            json.dumps(events),
            response["id"],
            account_id,
        ],
    ).rowcount
    return changed > 0


def unfinished_streams(conn: sqlite3.Connection) -> list[tuple[str, StoredResponse]]:
    """(account, response) of each streamed background response still running: its
    stream had not ended (`background.streaming` keeps it running without end)."""
    rows = conn.execute(
        "SELECT response, input, created_ts, queued_s, processing_s, cancelled_ts, events, "
        "account_id FROM stored_responses WHERE processing_s > 1e308"
    ).fetchall()
    return [(row["account_id"], _stored(row)) for row in rows]


def get_response(
    conn: sqlite3.Connection, account_id: str, response_id: str
) -> StoredResponse | None:
    row = conn.execute(
        "SELECT response, input, created_ts, queued_s, processing_s, cancelled_ts, events "
        "FROM stored_responses WHERE id = ? AND account_id = ?",
        [response_id, account_id],
    ).fetchone()
    return None if row is None else _stored(row)


def _stored(row: sqlite3.Row) -> StoredResponse:
    """From (response, input, created_ts, queued_s, processing_s, cancelled_ts[, events])."""
    run = None if row[2] is None else Run(row[2], row[3], row[4], row[5])
    events = json.loads(row[6]) if len(row) > 6 and row[6] is not None else None
    return StoredResponse(json.loads(row[0]), json.loads(row[1]), run, events)


def cancel_run(conn: sqlite3.Connection, account_id: str, response_id: str, at: float) -> None:
    """Mark a background response cancelled at `at`, unless it already was."""
    conn.execute(
        "UPDATE stored_responses SET cancelled_ts = ? "
        "WHERE id = ? AND account_id = ? AND cancelled_ts IS NULL",
        [at, response_id, account_id],
    )


def find_response(conn: sqlite3.Connection, response_id: str) -> tuple[str, StoredResponse] | None:
    """A kept response by its id alone (the control plane's view): its account and it."""
    row = conn.execute(
        "SELECT response, input, created_ts, queued_s, processing_s, cancelled_ts, events, "
        "account_id FROM stored_responses WHERE id = ?",
        [response_id],
    ).fetchone()
    return None if row is None else (row[7], _stored(row))


def delete_response(conn: sqlite3.Connection, account_id: str, response_id: str) -> bool:
    """Forget a response and its output items; whether there was one."""
    gone = conn.execute(
        "DELETE FROM stored_responses WHERE id = ? AND account_id = ?", [response_id, account_id]
    ).rowcount
    delete_output_items(conn, account_id, response_id)
    return gone > 0


def delete_output_items(conn: sqlite3.Connection, account_id: str, response_id: str) -> None:
    conn.execute(
        "DELETE FROM response_items WHERE response_id = ? AND account_id = ?",
        [response_id, account_id],
    )


def chain(conn: sqlite3.Connection, account_id: str, response_id: str) -> list[StoredResponse]:
    """The response and those before it (`previous_response_id`), oldest first; empty
    when it is not stored. A deleted response ends the chain there."""
    rows = conn.execute(
        "WITH RECURSIVE turn(id, depth) AS ("
        " SELECT id, 0 FROM stored_responses WHERE id = ? AND account_id = ?"
        " UNION ALL"
        " SELECT s.previous_response_id, turn.depth + 1 FROM turn"
        " JOIN stored_responses s ON s.id = turn.id AND s.account_id = ?"
        " WHERE s.previous_response_id IS NOT NULL AND turn.depth < ?)"
        " SELECT s.response, s.input, s.created_ts, s.queued_s, s.processing_s, s.cancelled_ts"
        " FROM turn"
        " JOIN stored_responses s ON s.id = turn.id AND s.account_id = ?"
        " ORDER BY turn.depth DESC",
        [response_id, account_id, account_id, MAX_CHAIN, account_id],
    )
    return [_stored(row) for row in rows]
