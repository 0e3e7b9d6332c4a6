"""What requests that no longer run left behind: ended when the state is loaded."""

from __future__ import annotations

import sqlite3

from emulator.store.reservations import fail_all_active


def end_orphaned_requests(conn: sqlite3.Connection, reason: str, now: str) -> int:
    """A hold still `active` or an `Idempotency-Key` still in flight when a state is loaded
    (at start, or restored) belongs to a request of a process or a state that is gone:
    fail the hold (nothing was charged) and free the key, or it would answer 409 for a
    day. Returns the holds failed."""
    conn.execute("DELETE FROM idempotency_keys WHERE state = 'in_flight'")
    return fail_all_active(conn, reason, now)
