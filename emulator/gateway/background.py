"""Responses made with `background: true`, as OpenAI's API runs them.

The create call answers at once with the response `queued`; polling `GET
/responses/{id}` then sees it `in_progress` and finally whole. The emulator
makes the answer (and bills it) when the request comes, as for any response,
and keeps it with a schedule on the virtual clock (the `background_response`
job family, scaled by `--job-speed`; `instant` answers it whole at once): what
a poll shows is a pure function of that schedule and the clock, as for jobs.
Until it is done it shows no output and no usage. Cancelling it before then
makes it `cancelled` for good; the charge stands, since the work was done.

A background response keeps its stream events (those it streamed, or, made
whole, those a stream of it would have sent), to be streamed again (`GET
...?stream=true`, from `starting_after` on). Streamed, it is kept running from
its first event, then whole when its stream ends (also when its client left:
it runs on), or `failed` when the stream broke off.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from emulator.errors import InvalidRequest
from emulator.gateway.canonical import Completion, Delta
from emulator.gateway.providers import stream_pieces
from emulator.gateway.wire import chat_chunks
from emulator.jobs.engine import schedule_for
from emulator.store.responses import Run, StoredResponse
from emulator.video.service import family, video_catalog

if TYPE_CHECKING:
    from emulator.runtime import Runtime

FAMILY = "background_response"
# What a response shows while it is queued or running: nothing of its answer yet.
_PENDING: dict[str, Any] = {"completed_at": None, "output": [], "output_text": "", "usage": None}
_OPENING = {"response.created", "response.queued", "response.in_progress"}


def run_for(rt: Runtime, body: dict[str, Any], stream: bool) -> Run | None:
    """The run of a background response made now (None: not background). Streamed, it
    is done when its stream ends (and running until then: `streaming`)."""
    if body.get("background") is not True:
        return None
    if stream:
        return Run(rt.clock.now(), 0.0, 0.0)
    durations = family(video_catalog(rt), FAMILY)
    schedule = schedule_for(durations, 0, rt.settings.job_speed)
    return Run(rt.clock.now(), schedule.queued_s, schedule.processing_s)


def streaming(run: Run) -> Run:
    """A streamed run while its stream goes on: running until it is kept whole."""
    return Run(run.created_ts, 0.0, math.inf)


def finished(whole: dict[str, Any], run: Run) -> dict[str, Any]:
    """The response as it is once done: completed at the end of its run (the second
    after, so no poll that saw it running is later)."""
    if whole["status"] != "completed":
        return whole
    return {**whole, "completed_at": math.ceil(run.created_ts + run.queued_s + run.processing_s)}


def deltas_of(completion: Completion, wire_format: str) -> Iterator[Delta]:
    """A whole answer as the serving provider would have streamed it."""
    text, thoughts = completion.text or "", completion.reasoning or ""
    return chat_chunks.deltas(
        completion, stream_pieces(text, wire_format), 0, stream_pieces(thoughts, wire_format)
    )


def ending_with(events: Iterator[dict[str, Any]], whole: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of a background response made whole: the last carries it as kept."""
    made = list(events)
    made[-1] = {**made[-1], "response": whole}
    return made


def broken_off(
    shell: dict[str, Any], sent: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A background stream that broke off (a fault cut it) once begun (`shell`: the
    response as it began): the response `failed`, and the events sent, then
    `response.failed`."""
    message = "The upstream stream broke off before the response was complete."
    return failing(shell, sent, "server_error", message)


def failing(
    whole: dict[str, Any], sent: list[dict[str, Any]], code: str, message: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The response `failed` with this error (no output, no usage), and the events `sent`
    before it failed, then `response.failed`."""
    error = {"code": code, "message": message}
    failed = {**whole, **_PENDING, "status": "failed", "incomplete_details": None, "error": error}
    number = sent[-1]["sequence_number"] + 1 if sent else 0
    return failed, [
        *sent,
        {"type": "response.failed", "sequence_number": number, "response": failed},
    ]


def opening(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events a background response sends before its answer begins."""
    return [e for e in events if e["type"] in _OPENING]


def failed_half_way(
    whole: dict[str, Any], run: Run, events: list[dict[str, Any]]
) -> tuple[dict[str, Any], Run, list[dict[str, Any]]]:
    """A background response a fault fails (`fail_job`, as a job's): `failed` half-way
    through its run, as a job known to fail does, after its opening events."""
    message = "The response failed (a `fail_job` fault failed it)."
    failed, sent = failing(whole, opening(events), "server_error", message)
    return failed, Run(run.created_ts, run.queued_s, run.processing_s / 2), sent


def status_at(run: Run, now: float) -> str:
    """`queued`, `in_progress`, `cancelled`, or `done` (the kept response's own status)."""
    if run.cancelled_ts is not None:
        return "cancelled"
    started = run.created_ts + run.queued_s
    if now < started:
        return "queued"
    return "in_progress" if now < started + run.processing_s else "done"


def view(stored: StoredResponse, now: float) -> dict[str, Any]:
    """The response as a poll at `now` sees it."""
    return stored.response if stored.run is None else seen(stored.response, stored.run, now)


def seen(whole: dict[str, Any], run: Run, now: float) -> dict[str, Any]:
    status = status_at(run, now)
    return whole if status == "done" else pending(whole, status)


def pending(whole: dict[str, Any], status: str) -> dict[str, Any]:
    return {**whole, **_PENDING, "status": status, "incomplete_details": None, "error": None}


def queued_first(events: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A background stream's events: `response.created` shows it queued and
    `response.queued` follows it, as OpenAI streams a background response."""
    created = next(events)
    queued = {**created["response"], "status": "queued"}
    yield {**created, "response": queued}
    number = created["sequence_number"] + 1
    yield {"type": "response.queued", "sequence_number": number, "response": queued}
    yield from ({**event, "sequence_number": event["sequence_number"] + 1} for event in events)


def replay(stored: StoredResponse, now: float, starting_after: int | None) -> list[Any]:
    """The events of a kept background response, after `starting_after`. One not done by
    the clock is streamed to its end at once, as if the client had waited."""
    whole = stored.response
    if stored.run is None:
        raise InvalidRequest(
            f"Response {whole['id']!r} cannot be streamed: only a response made with "
            "`background: true` can be. GET it without `stream`.",
            param="stream",
        )
    if status_at(stored.run, now) == "cancelled":
        raise InvalidRequest(
            f"Response {whole['id']!r} was cancelled: it has no events to stream.",
            param="stream",
        )
    if stored.events is None:
        raise InvalidRequest(
            f"Response {whole['id']!r} is still being streamed to the request that made it: "
            "its events can be streamed again once that stream ends.",
            param="stream",
        )
    after = -1 if starting_after is None else starting_after
    return [event for event in stored.events if event["sequence_number"] > after]
