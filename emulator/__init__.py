"""The Gateway & Studio emulator: a local-first, single-process emulator of the API."""

from __future__ import annotations

from typing import TYPE_CHECKING

from emulator.sqlite_setup import stop_memory_statistics

stop_memory_statistics()  # first: before anything imports sqlite3

__version__ = "0.1.0"

if TYPE_CHECKING:
    from litestar import Litestar

    from emulator.settings import Settings


def create_app(settings: Settings | None = None) -> Litestar:
    """Build the ASGI app (imported lazily so `import emulator` stays cheap)."""
    from emulator.app import create_app as _create_app

    return _create_app(settings)


__all__ = ["__version__", "create_app"]
