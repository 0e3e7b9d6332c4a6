"""Schema changes, only through registered migrations, each in the caller's transaction.

Tables are declared with sqlite-utils; a migration runs once and is recorded
in `_migrations`. The migrations themselves are in `schema_steps`: add a new
one at its end; never edit an applied one.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from emulator.store.schema_steps import MIGRATIONS

__all__ = ["MIGRATIONS", "data_tables", "migrate"]


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply pending migrations (the caller holds the transaction); return their names."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY)")
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    pending = [(name, fn) for name, fn in MIGRATIONS if name not in done]
    if not pending:
        return []
    db = _sqlite_utils().Database(conn)
    for name, fn in pending:
        fn(db)
        conn.execute("INSERT INTO _migrations (name) VALUES (?)", [name])
    return [name for name, _ in pending]


def _sqlite_utils() -> Any:
    """Imported only when the schema changes, and without numpy.

    sqlite-utils imports numpy when it is installed, only to map numpy types we
    never store; that costs 0.1 s of a sub-second cold start. Numpy stays
    importable for everyone else once sqlite-utils is loaded.
    """
    import sys

    if "sqlite_utils" in sys.modules or "numpy" in sys.modules:
        import sqlite_utils

        return sqlite_utils
    sys.modules["numpy"] = None  # type: ignore[assignment]
    try:
        import sqlite_utils
    finally:
        del sys.modules["numpy"]
    return sqlite_utils


def data_tables(conn: sqlite3.Connection) -> list[str]:
    """Every table a reset wipes: not SQLite's, not ours named `_...` (migrations, epoch)."""
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_%' ESCAPE '\\'"
    )
    return [row[0] for row in rows]
