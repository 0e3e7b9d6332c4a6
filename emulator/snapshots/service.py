"""Save and restore the whole state with SQLite's backup API.

Named snapshots are in-memory copies, for tests and demos within one run;
`--snapshot-on-exit PATH` and `--restore PATH` carry a state across runs as a
database file. A restore holds the store's lock: requests wait for it and
then see the restored world, never half of it. What the process keeps beside
the database (cached keys, blocks of ids, rate windows, the clock) follows.

A snapshot file is written in rollback-journal mode, and a file read for a
restore is put in that mode first: the copy of a WAL database says "WAL" in
its header, and copied as is into an in-memory state (`--db :memory:`, a
`memdb` file, which has no WAL) it made every read fail with "unable to open
database file".
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from emulator.errors import NotFound
from emulator.store.meta import get_meta, get_platform, give_back
from emulator.store.migrations import migrate
from emulator.store.orphans import end_orphaned_requests

if TYPE_CHECKING:
    from emulator.runtime import Runtime

# Not starting with a dot or a dash: `.` and `..` are dot segments, which clients
# resolve away from the URL (`/snapshots/..` is `/_emulator/`), never to be restored.
NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
# The file format version numbers of a database's header: 1 rollback journal, 2 WAL.
_FORMAT_VERSIONS = slice(18, 20)


class SnapshotError(Exception):
    """A file given to restore is not a snapshot (the CLI prints the message)."""


@dataclass
class Snapshot:
    name: str
    created_at: str
    conn: sqlite3.Connection
    seq: int = 0  # its place among the saves: what a list's cursor keeps

    def wire(self) -> dict[str, Any]:
        # The pages in use: free ones left by data deleted earlier (a reset) would make
        # the same state's size depend on what came before it.
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        pages -= self.conn.execute("PRAGMA freelist_count").fetchone()[0]
        size = self.conn.execute("PRAGMA page_size").fetchone()[0]
        return {
            "object": "snapshot",
            "name": self.name,
            "created_at": self.created_at,
            "size_bytes": pages * size,
        }


class Snapshots:
    def __init__(self) -> None:
        self._saved: dict[str, Snapshot] = {}
        self._lock = threading.Lock()
        self._saves = 0

    def save(self, rt: Runtime, name: str) -> Snapshot:
        """Copy the state under `name` (checked by the route's body: NAME)."""
        copy = sqlite3.connect(":memory:", check_same_thread=False)
        with rt.store.read() as conn:
            conn.backup(copy)
            # The copy's sequences as far as ids were used: after a restore of it, the
            # ids are those this server goes on giving, which keeps its blocks.
            give_back(copy, rt.unused_ids())
            copy.commit()
        with self._lock:
            self._saves += 1
            snapshot = Snapshot(name, rt.clock.now_iso(), copy, self._saves)
            old = self._saved.pop(name, None)
            self._saved[name] = snapshot  # saving a name again replaces it
        if old is not None:
            old.conn.close()
        return snapshot

    def list(self) -> list[Snapshot]:
        with self._lock:
            return list(self._saved.values())

    def get(self, name: str) -> Snapshot:
        with self._lock:
            found = self._saved.get(name)
        if found is None:
            raise NotFound(f"No snapshot {name!r}.", param="name")
        return found

    def delete(self, name: str) -> None:
        with self._lock:
            found = self._saved.pop(name, None)
        if found is None:
            raise NotFound(f"No snapshot {name!r}.", param="name")
        found.conn.close()


def restore_from(rt: Runtime, source: sqlite3.Connection) -> None:
    # One hold of the store's lock throughout: no request sees the copied file before
    # it is migrated and numbered as a new state.
    with rt.store.read() as conn:
        rt.store.check_outside()  # first what another process did (a reset), if anything
        rt.identities.note(conn)
        source.backup(conn)
        rt.identities.keep(conn)
        with rt.store.write() as conn:
            migrate(conn)  # a snapshot file of an earlier version lacks the tables added since
            rt.after_restore(conn, get_meta(conn, "clock") or {})
            # The requests that were running when the snapshot was taken are not running
            # in this state: their holds would stay active, their keys in flight, forever.
            end_orphaned_requests(
                conn, "released at restore: its request ran in the state saved", rt.clock.now_iso()
            )
        rt.save_clock()  # the snapshot's clock in this server's mode, for commands beside it


def save_file(rt: Runtime, path: Path) -> None:
    """The state into the file at `path`, whole or not at all: written beside it, then
    moved over it, so a stop cut short never leaves an earlier snapshot half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with closing(sqlite3.connect(partial)) as target:
            with rt.store.read() as conn:
                conn.backup(target)
                give_back(target, rt.unused_ids())
                target.commit()
            target.execute("PRAGMA journal_mode = DELETE")  # one file, no -wal beside it
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def restore_file(rt: Runtime, path: Path) -> None:
    with closing(read_snapshot(path)) as source:
        restore_from(rt, source)


def read_snapshot(path: Path) -> sqlite3.Connection:
    """The snapshot file at `path`, checked, as an in-memory copy in rollback mode."""
    copy = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        _load_snapshot(path, copy)
    except BaseException:
        copy.close()
        raise
    _to_rollback_mode(copy)
    return copy


def _load_snapshot(path: Path, copy: sqlite3.Connection) -> None:
    try:
        with closing(sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)) as file:
            file.backup(copy)
        tables = {row[0] for row in copy.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as exc:  # "file is not a database"
        raise SnapshotError(f"{path} is not a snapshot: {exc}") from exc
    if "platform" not in tables or get_platform(copy, "world") is None:
        raise SnapshotError(f"{path} is not a snapshot: it holds no emulator state")


def _to_rollback_mode(conn: sqlite3.Connection) -> None:
    """SQLite's documented way to use a WAL database's image without its WAL: the
    header's format versions set to 1. (`serialize` is there since SQLite 3.36, as
    memdb files are; before, an in-memory state is a shared cache, which reads it.)"""
    if hasattr(conn, "serialize"):
        image = bytearray(conn.serialize())
        image[_FORMAT_VERSIONS] = b"\x01\x01"
        conn.deserialize(bytes(image))
