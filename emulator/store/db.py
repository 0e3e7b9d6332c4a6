"""One SQLite connection per emulator, shared by every thread under one lock.

A file database runs in WAL mode so that the CLI (`emulator topup`, `keys
create`) can write while a server runs. `:memory:` is a named file in SQLite's
`memdb` file system (a shared cache on SQLite < 3.36): one in-memory database
for the whole process, however many connections or threads open it by name,
kept alive by this connection.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from emulator.settings import MEMORY_DB

_memory_names = itertools.count(1)


def _has_memdb() -> bool:
    """SQLite builds since 3.36 have it; older ones fall back to a shared cache."""
    try:
        sqlite3.connect("file:/emulator-probe?vfs=memdb", uri=True).close()
    except sqlite3.OperationalError:
        return False
    return True


_HAS_MEMDB = _has_memdb()


def _memory_uri() -> str:
    name = f"emulator-{os.getpid()}-{next(_memory_names)}"
    return f"file:/{name}?vfs=memdb" if _HAS_MEMDB else f"file:{name}?mode=memory&cache=shared"


def _connect(path: str) -> tuple[sqlite3.Connection, str]:
    if path == MEMORY_DB:
        uri = _memory_uri()
    else:
        folder = Path(path).expanduser().parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # the CLI says it in one line, as SQLite's own refusals
            raise sqlite3.OperationalError(
                f"cannot create the folder {folder}: {exc.strerror or exc}"
            ) from exc
        uri = Path(path).expanduser().resolve().as_uri()
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("PRAGMA foreign_keys = ON")
    if path != MEMORY_DB:
        _refuse_anothers(conn, path)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        # Checkpoint every 4,000 pages (16 MiB of WAL) instead of SQLite's 1,000: the
        # pages every request rewrites (the account, index roots) are copied and
        # synced a quarter as often; a chat request costs ~10 % less.
        conn.execute("PRAGMA wal_autocheckpoint = 4000")
    return conn, uri


def _refuse_anothers(conn: sqlite3.Connection, path: str) -> None:
    """A file with tables but not our migrations' is another program's database (a
    mistyped `--db`): never take it over, since a reset wipes every table it finds.
    Checked before WAL mode is set, which would change the file for good."""
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    if tables and "_migrations" not in tables:
        conn.close()
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise sqlite3.OperationalError(
            f"{path} is not an emulator state file (it holds the tables {shown}); "
            "name a new file or one the emulator made"
        )


def newest_first(
    conn: sqlite3.Connection,
    select: str,
    params: list[Any],
    limit: int,
    before_seq: int | None,
) -> list[tuple[int, dict[str, Any]]]:
    """A page of `select` (`SELECT rowid AS seq, ... WHERE ...`), newest first: rows
    inserted before `before_seq`, as (seq, the row without seq). Every list pages so."""
    if before_seq is not None:
        select += " AND rowid < ?"
        params = [*params, before_seq]
    cursor = conn.execute(f"{select} ORDER BY rowid DESC LIMIT ?", [*params, limit])
    rows = [dict(row) for row in cursor]
    return [(row.pop("seq"), row) for row in rows]


class Store:
    def __init__(self, path: str) -> None:
        self.path = path
        self.conn, self.uri = _connect(path)
        self._lock = threading.RLock()
        self._on_rollback: list[Callable[[], None]] = []
        self._reading = _Read(self)
        self._outside: Callable[[sqlite3.Connection], None] | None = None
        self._seen_version = -1

    def watch_outside(self, listener: Callable[[sqlite3.Connection], None]) -> None:
        """Call `listener` (under the lock, with the connection) when another connection,
        another process (`emulator reset` beside a server), has committed since it last
        ran: at the start of each write transaction, and on `check_outside`."""
        with self._lock:
            self._outside = listener
            self._seen_version = self._version()

    def check_outside(self) -> None:
        """Run the listener now if another connection has committed (a request's start)."""
        if self._outside is not None:
            with self._lock:
                self._if_outside()

    def _if_outside(self) -> None:
        version = self._version()
        if version != self._seen_version and self._outside is not None:
            self._seen_version = version
            self._outside(self.conn)

    def _version(self) -> int:
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def write(self, keep: tuple[type[BaseException], ...] = ()) -> _Write:
        """A write transaction (BEGIN IMMEDIATE); nested calls join the outer one.

        An exception rolls it back, except those in `keep`: answers such as "every
        route failed", whose records must stay. They are committed, then raised."""
        return _Write(self, keep)

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def _end(self, statement: str) -> None:
        hooks, self._on_rollback = self._on_rollback, []
        self.conn.execute(statement)
        if statement == "ROLLBACK":
            for hook in hooks:
                hook()

    def on_rollback(self, hook: Callable[[], None]) -> None:
        """Run `hook` if the current transaction rolls back (in-memory state that
        mirrors what it wrote, such as a block of sequence numbers)."""
        self._on_rollback.append(hook)

    def read(self) -> _Read:
        """The connection, under the store's lock, for reads."""
        return self._reading

    def close(self) -> None:
        with self._lock:
            self.conn.close()


# Context managers as classes, not generators: several run on every request, and a
# generator-based one costs about a microsecond more each.
class _Read:
    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store

    def __enter__(self) -> sqlite3.Connection:
        self._store._lock.acquire()
        return self._store.conn

    def __exit__(self, *_: object) -> None:
        self._store._lock.release()


class _Write:
    __slots__ = ("_keep", "_outer", "_store")

    def __init__(self, store: Store, keep: tuple[type[BaseException], ...]) -> None:
        self._store, self._keep, self._outer = store, keep, False

    def __enter__(self) -> sqlite3.Connection:
        store = self._store
        store._lock.acquire()
        if not store.conn.in_transaction:  # else: join the outer transaction
            try:
                store.conn.execute("BEGIN IMMEDIATE")
            except BaseException:
                store._lock.release()
                raise
            self._outer = True
            if store._outside is not None:
                try:
                    store._if_outside()
                except BaseException:
                    store._end("ROLLBACK")
                    store._lock.release()
                    raise
        return store.conn

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        store = self._store
        try:
            if self._outer:
                keep = kind is None or issubclass(kind, self._keep)
                store._end("COMMIT" if keep else "ROLLBACK")
        finally:
            store._lock.release()
