"""What requests that no longer run left behind: ended when the state is loaded."""

from __future__ import annotations

import sqlite3

from emulator.gateway.background import failing
from emulator.store.reservations import fail_all_active
from emulator.store.responses import Run, unfinished_streams, update_response


def end_orphaned_requests(conn: sqlite3.Connection, reason: str, now: str) -> int:
    """A hold still `active` or an `Idempotency-Key` still in flight when a state is loaded
    (at start, or restored) belongs to a request of a process or a state that is gone:
    fail the hold (nothing was charged) and free the key, or it would answer 409 for a
    day; a streamed background response still running failed, or polls would see it
    `in_progress` for ever. Returns the holds failed."""
    conn.execute("DELETE FROM idempotency_keys WHERE state = 'in_flight'")
    for account_id, stored in unfinished_streams(conn):
        assert stored.run is not None  # only a background response runs
        message = f"The response's stream broke off: {reason}."
        # Kept as it began (`response.created`); the events sent after it are lost.
        began = [{"type": "response.created", "sequence_number": 0, "response": stored.response}]
        failed, events = failing(stored.response, began, "server_error", message)
        ended = Run(stored.run.created_ts, 0.0, 0.0)  # as a stream broken off is kept
        update_response(conn, account_id, failed, ended, events)
    return fail_all_active(conn, reason, now)
