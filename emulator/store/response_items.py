"""Output items of stored responses, kept for the `item_reference`s of later inputs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any


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


def get_items(conn: sqlite3.Connection, account_id: str, ids: list[str]) -> dict[str, Any]:
    """The account's stored items among `ids`, by id (the missing ones left out)."""
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"SELECT item_id, item FROM response_items WHERE account_id = ? AND item_id IN ({marks})",
        [account_id, *ids],
    )
    return {row[0]: json.loads(row[1]) for row in rows}
