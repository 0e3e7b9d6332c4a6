"""Small key-value state: sequences for ids, and saved settings such as the clock."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emulator.ids import Ids


def next_sequence(conn: sqlite3.Connection, name: str) -> int:
    row = conn.execute(
        "INSERT INTO sequences (name, value) VALUES (?, 1) "
        "ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value",
        [name],
    ).fetchone()
    return int(row[0])


def get_meta(conn: sqlite3.Connection, key: str) -> Any:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
    return None if row is None else json.loads(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: Any) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, json.dumps(value)],
    )


def get_platform(conn: sqlite3.Connection, key: str) -> Any:
    row = conn.execute("SELECT value FROM platform WHERE key = ?", [key]).fetchone()
    return None if row is None else json.loads(row[0])


def set_platform(conn: sqlite3.Connection, key: str, value: Any) -> None:
    conn.execute(
        "INSERT INTO platform (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, json.dumps(value)],
    )


def new_id(conn: sqlite3.Connection, ids: Ids, prefix: str) -> str:
    """The next deterministic id of a kind, counted in the caller's transaction."""
    return ids.make(prefix, next_sequence(conn, prefix))
