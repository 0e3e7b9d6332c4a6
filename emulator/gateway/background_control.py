"""The control plane's `complete` and `fail` for a background response, as for a job
(`POST /_emulator/jobs/{resp_id}/complete|fail`): the outcome happens now.

Completing one ends its run now, with its answer as made. Failing one makes it
`failed` (the error given, `server_error` by default), with no output, and its
stream, streamed again, ends with `response.failed` after its first events; the
charge stands, as for a cancel (the answer was made, and billed, when the request
came). One that has already ended keeps its outcome, as a job does: the same again
changes nothing, the other is 409 `job_already_ended`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.errors import Conflict, NotFound
from emulator.gateway import background
from emulator.store.responses import (
    Run,
    StoredResponse,
    delete_output_items,
    find_response,
    update_response,
)

if TYPE_CHECKING:
    from emulator.runtime import Runtime


def force(
    rt: Runtime, response_id: str, outcome: str, code: str | None, message: str | None
) -> dict[str, Any]:
    now = rt.clock.now()
    with rt.store.write() as conn:
        found = find_response(conn, response_id)
        if found is None:
            raise NotFound(
                f"No job or background response {response_id!r}: the response must be kept "
                "(`store` not false, or `background: true`) and not deleted.",
                param="id",
            )
        account_id, stored = found
        ended = stored.response
        status = _status(stored, now)
        if status in ("queued", "in_progress"):
            assert stored.run is not None and stored.events is not None  # by _status
            run = _ended(stored.run, now)
            if outcome == "complete":
                ended = background.finished(ended, run)
                events = background.ending_with(iter(stored.events), ended)
            else:
                code = code or "server_error"
                message = message or "The response was failed by the control plane."
                opening = background.opening(stored.events)
                ended, events = background.failing(ended, opening, code, message)
                delete_output_items(conn, account_id, response_id)
            update_response(conn, account_id, ended, run, events)
            status = ended["status"]
        elif status != ("completed" if outcome == "complete" else "failed"):
            raise _ended_otherwise(response_id, status, outcome)
    return {
        "id": response_id,
        "object": "job",
        "family": background.FAMILY,
        "status": status,
        "progress": 100 if status == "completed" else None,
        "error": ended["error"] if status == "failed" else None,
    }


def _status(stored: StoredResponse, now: float) -> str:
    """`queued` or `in_progress` (forceable), else how it ended; 409 for one still being
    streamed to the request that made it."""
    if stored.run is None:
        return str(stored.response["status"])  # made in the foreground: ended as made
    if stored.events is None:
        raise Conflict(
            f"Response {stored.response['id']!r} is still being streamed to the request "
            "that made it: cut its stream (`X-Emulator-Fault: cut=N`, or a rule's "
            "`cut_stream_after`) to see it fail.",
            param="id",
            code="job_already_ended",
        )
    status = background.status_at(stored.run, now)
    return str(stored.response["status"]) if status == "done" else status


def _ended(run: Run, now: float) -> Run:
    """The run ending now: queued for as long as it was, running until now."""
    elapsed = max(now - run.created_ts, 0.0)
    queued = min(run.queued_s, elapsed)
    return Run(run.created_ts, queued, elapsed - queued)


def _ended_otherwise(response_id: str, status: str, outcome: str) -> Conflict:
    return Conflict(
        f"Response {response_id!r} already ended: it is {status}, and an ended response "
        f"keeps its outcome, so it cannot {outcome} now. Force a background response "
        "while it is queued or in progress.",
        param="id",
        code="job_already_ended",
    )
