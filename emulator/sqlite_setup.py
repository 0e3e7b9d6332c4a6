"""SQLite's process-wide settings, made before the first connection.

SQLite counts every allocation under a global mutex, for memory statistics
that nothing here reads; a billed chat request spends ~3 % of its instructions
there. They can only be turned off before SQLite initializes, which Python's
`_sqlite3` does when it is imported: so `emulator/__init__.py` calls this
before anything imports `sqlite3`. Where it cannot (SQLite already running in
the process, a Python that links SQLite statically, not Linux), nothing
changes but speed.
"""

from __future__ import annotations

import ctypes
import sys

_SQLITE_CONFIG_MEMSTATUS = 9
_LIBRARY = "libsqlite3.so.0"  # the soname `_sqlite3` links on Linux


def stop_memory_statistics() -> bool:
    """Whether SQLite took the setting."""
    # Linux only: there ctypes passes this variadic call's int as C does (not on
    # Apple's arm64), and the library has this name.
    if sys.platform != "linux" or "_sqlite3" in sys.modules:
        return False
    try:
        config = ctypes.CDLL(_LIBRARY).sqlite3_config
    except (OSError, AttributeError):
        return False
    return bool(config(_SQLITE_CONFIG_MEMSTATUS, ctypes.c_int(0)) == 0)
