"""The one place that owns SQL: connection, migrations, fixtures, seeding, queries."""

from emulator.store.db import Store

__all__ = ["Store"]
