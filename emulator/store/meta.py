"""Small key-value state: sequences for ids, and saved settings such as the clock."""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emulator.ids import Ids
    from emulator.store.db import Store


def next_sequence(conn: sqlite3.Connection, name: str) -> int:
    row = conn.execute(
        "INSERT INTO sequences (name, value) VALUES (?, 1) "
        "ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value",
        [name],
    ).fetchone()
    return int(row[0])


def sequences(conn: sqlite3.Connection) -> dict[str, int]:
    return {row[0]: int(row[1]) for row in conn.execute("SELECT name, value FROM sequences")}


REQUEST_SEQUENCE = "req"  # request ids: every answer's `x-request-id`
# The sequences a tenant's identity comes from (its account, its keys and their
# secrets), and the requests' ids, which the journal names requests by.
IDENTITY_SEQUENCES = frozenset({"tenant", "key", "api_key_secret", REQUEST_SEQUENCE})


def adopt_request_count(conn: sqlite3.Connection) -> None:
    """A state file of an earlier version counted its requests in `meta` (saved only at
    a clean stop): its sequence goes on from there."""
    made = get_meta(conn, "requests_made")
    if made is not None:
        raise_sequences(conn, {REQUEST_SEQUENCE: int(made)})
        conn.execute("DELETE FROM meta WHERE key = 'requests_made'")


def raise_sequences(conn: sqlite3.Connection, floors: dict[str, int]) -> None:
    """Each named sequence to at least its floor: no number up to it is given again."""
    conn.executemany(
        "INSERT INTO sequences (name, value) VALUES (?, ?) "
        "ON CONFLICT(name) DO UPDATE SET value = MAX(value, excluded.value)",
        list(floors.items()),
    )


class GivenIdentities:
    """The highest identity numbers given out before a snapshot restore, which brings its
    sequences back: fault rules and the journal (kept across a restore) and a test's own
    variables name tenants by id, so a tenant made after a restore must not take the id
    or the key of one made before. Every other id (generations, responses, ledger
    entries, jobs) follows the restored state, and a reset starts all of them again (the
    same ids as a fresh start, SPEC 2; it clears the rules and the journal too)."""

    def __init__(self) -> None:
        self._high: dict[str, int] = {}

    def note(self, conn: sqlite3.Connection) -> None:
        """Before a restore replaces the state: what it has given out."""
        for name, value in sequences(conn).items():
            if name in IDENTITY_SEQUENCES:
                self._high[name] = max(self._high.get(name, 0), value)

    def keep(self, conn: sqlite3.Connection) -> None:
        """After: none of them given again."""
        raise_sequences(conn, self._high)


# Two small key-value tables: `meta` (run state such as the clock) and
# `platform` (what the fixtures say: pricing, world settings).
def _get(conn: sqlite3.Connection, table: str, key: str) -> Any:
    row = conn.execute(f"SELECT value FROM {table} WHERE key = ?", [key]).fetchone()
    return None if row is None else json.loads(row[0])


def _set(conn: sqlite3.Connection, table: str, key: str, value: Any) -> None:
    conn.execute(
        f"INSERT INTO {table} (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, json.dumps(value)],
    )


def get_meta(conn: sqlite3.Connection, key: str) -> Any:
    return _get(conn, "meta", key)


def set_meta(conn: sqlite3.Connection, key: str, value: Any) -> None:
    _set(conn, "meta", key, value)


def catalog_edition(conn: sqlite3.Connection) -> int:
    """How many times the catalog (models, providers, pricing, replies) has changed: a
    server reads it to learn that another process (`emulator seed`) changed it."""
    return int(get_meta(conn, "catalog_edition") or 0)


def count_catalog_change(conn: sqlite3.Connection) -> None:
    """In the transaction that changes the catalog."""
    set_meta(conn, "catalog_edition", catalog_edition(conn) + 1)


def get_platform(conn: sqlite3.Connection, key: str) -> Any:
    return _get(conn, "platform", key)


def set_platform(conn: sqlite3.Connection, key: str, value: Any) -> None:
    _set(conn, "platform", key, value)


def get_world(conn: sqlite3.Connection) -> int:
    """Which state the database holds (m0017): one more after each reset or restore."""
    return int(conn.execute("SELECT value FROM _world").fetchone()[0])


def next_world(conn: sqlite3.Connection, at_least: int = 0) -> int:
    """Count a reset or restore (in the caller's transaction): the state's new number,
    above `at_least` (a restored file brings back the number it was saved with)."""
    row = conn.execute(
        "UPDATE _world SET value = max(value, ?) + 1 RETURNING value", [at_least]
    ).fetchone()
    return int(row[0])


def new_id(conn: sqlite3.Connection, ids: Ids, prefix: str) -> str:
    """The next deterministic id of a kind, counted in the caller's transaction."""
    return ids.make(prefix, next_sequence(conn, prefix))


def give_back(conn: sqlite3.Connection, unused: list[tuple[str, int, int]]) -> None:
    """Set each sequence back to the last number taken of its block, where it still
    stands at the block's end (no other process took one since): the numbers go on from
    there, as if no block had been reserved (a restart, a snapshot saved)."""
    for name, first_free, reserved_to in unused:
        conn.execute(
            "UPDATE sequences SET value = ? WHERE name = ? AND value = ?",
            [first_free - 1, name, reserved_to],
        )


class SequenceBlock:
    """Sequence numbers of one kind reserved `size` at a time, for the hot path: one
    write per `size` ids instead of one per id. Numbers stay consecutive and start
    from 1 after a reset, so ids stay deterministic; a restart skips to the next block."""

    def __init__(self, store: Store, name: str, size: int = 64) -> None:
        self._store = store
        self._name = name
        self._size = size
        self._lock = threading.Lock()
        self._next = self._end = 0

    def next(self) -> int:
        with self._lock:
            if self._next >= self._end:
                with self._store.write() as conn:
                    # Inside a caller's transaction that rolls back, the block goes too.
                    self._store.on_rollback(self._drop)
                    row = conn.execute(
                        "INSERT INTO sequences (name, value) VALUES (?, ?) ON CONFLICT(name) "
                        "DO UPDATE SET value = value + ? RETURNING value",
                        [self._name, self._size, self._size],
                    ).fetchone()
                self._end = int(row[0]) + 1
                self._next = self._end - self._size
            value = self._next
            self._next += 1
            return value

    def unused(self) -> tuple[str, int, int] | None:
        """(name, first number not taken, the database's value) of a block in use: read
        under the store's lock, which every allocation holds too."""
        if self._next >= self._end:
            return None
        return self._name, self._next, self._end - 1

    def reset(self) -> None:
        """After a reset or a restore, which hold the store's lock. Not under ours: a
        `next` holding it may be waiting for the store's (that was a deadlock). One
        running in between may still take a number of the old block: its request runs
        in the replaced state, and writes nothing into the new one (`Runtime.world`)."""
        self._drop()

    def _drop(self) -> None:
        # Without the lock: called by the store, under its own lock, which every
        # allocation holds too (taking ours here could deadlock with one waiting).
        self._next = self._end = 0
