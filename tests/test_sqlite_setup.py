"""SQLite's memory statistics are off in a process that imports the emulator first."""

from __future__ import annotations

import subprocess
import sys

import pytest

_PROBE = """
import ctypes
import emulator
from emulator.settings import Settings
from emulator.runtime import open_runtime

rt = open_runtime(Settings(db=":memory:"))
with rt.store.write() as conn:
    conn.execute("CREATE TABLE probe (x)")
    conn.executemany("INSERT INTO probe VALUES (?)", [(i,) for i in range(1000)])
used = ctypes.CDLL("libsqlite3.so.0").sqlite3_memory_used
used.restype = ctypes.c_int64
print(used())
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the setting is made on Linux only")
def test_memory_statistics_are_off_when_the_emulator_is_imported_first() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    # With statistics on, SQLite reports tens of kilobytes in use here.
    assert out.stdout.strip() == "0"


def test_it_changes_nothing_once_sqlite_is_running() -> None:
    import sqlite3  # noqa: F401  (already imported by the test session, as a server's may be)

    from emulator.sqlite_setup import stop_memory_statistics

    assert stop_memory_statistics() is False
