"""Output items of stored responses, kept for the `item_reference`s of later inputs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from emulator.store.responses import Run


def save_items(
    conn: sqlite3.Connection,
    account_id: str,
    response_id: str,
    items: Iterable[dict[str, Any]],
    now: str,
) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO response_items (account_id, item_id, response_id, item, "
        "created_at) VALUES (?, ?, ?, ?, ?)",
        [(account_id, item["id"], response_id, json.dumps(item), now) for item in items],
    )


def get_items(
    conn: sqlite3.Connection, account_id: str, ids: list[str]
) -> dict[str, tuple[dict[str, Any], Run | None]]:
    """The account's stored items among `ids`, by id (the missing ones left out), each
    with the run of its response when that was made in the background."""
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        "SELECT i.item_id, i.item, s.created_ts, s.queued_s, s.processing_s, s.cancelled_ts "
        "FROM response_items i LEFT JOIN stored_responses s ON s.id = i.response_id "
        f"WHERE i.account_id = ? AND i.item_id IN ({marks})",
        [account_id, *ids],
    )
    return {
        row[0]: (json.loads(row[1]), None if row[2] is None else Run(*row[2:6])) for row in rows
    }
