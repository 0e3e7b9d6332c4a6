"""Whether another live server serves the same state file.

A server starting on a file ends what requests of a server that died left behind
(active holds, in-flight `Idempotency-Key`s), but only when no other server is
serving the file: then those belong to requests still running. Each server holds
a shared `flock` on a file beside the state (`<db>-serve.lock`; SQLite's own
locks are on the database file, which `flock` must not share on every platform),
taken exclusively at start to tell whether it is alone. The kernel drops a lock
when its process ends, however it ends, so a crashed server never counts.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if sys.platform != "win32":  # Windows has no flock: there every server counts itself alone
    import fcntl


class ServeLease:
    """This server's share of a state file, held until the process ends."""

    def __init__(self, db: str) -> None:
        self._fd: int | None = None
        self.alone = True
        if sys.platform == "win32":
            return
        self._fd = os.open(_lock_file(db), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.alone = False

    def share(self) -> None:
        """Once start-up is done: let the next server share the file (and see this one)."""
        if sys.platform != "win32" and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_SH)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def served(db: str) -> bool:
    """Whether a live server holds its share of `db` (a command beside it asks)."""
    if sys.platform == "win32" or db == ":memory:":
        return False
    try:
        fd = os.open(_lock_file(db), os.O_RDONLY)  # flock needs no write access
    except OSError:  # none: no server has served the file
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the lock it may have taken
    return False


def _lock_file(db: str) -> Path:
    """Beside the file itself: one lock however the path names it (a symlink, `~`)."""
    state = Path(db).expanduser().resolve()
    return state.with_name(f"{state.name}-serve.lock")
