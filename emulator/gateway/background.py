"""Responses made with `background: true`, as OpenAI's API runs them.

The create call answers at once with the response `queued`; polling `GET
/responses/{id}` then sees it `in_progress` and finally whole. The emulator
makes the answer (and bills it) when the request comes, as for any response,
and keeps it with a schedule on the virtual clock (the `background_response`
job family, scaled by `--job-speed`; `instant` answers it whole at once): what
a poll shows is a pure function of that schedule and the clock, as for jobs.
Until it is done it shows no output and no usage. Cancelling it before then
makes it `cancelled` for good; the charge stands, since the work was done.

A background response can be streamed again (`GET ...?stream=true`, from
`starting_after` on): its events are made again from the kept response.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from emulator.errors import InvalidRequest
from emulator.gateway.providers import stream_pieces
from emulator.gateway.wire import chat, responses, responses_events
from emulator.jobs.engine import schedule_for
from emulator.store.responses import Run, StoredResponse
from emulator.video.service import family, video_catalog

if TYPE_CHECKING:
    from emulator.runtime import Runtime

FAMILY = "background_response"
# What a response shows while it is queued or running: nothing of its answer yet.
_PENDING: dict[str, Any] = {"completed_at": None, "output": [], "output_text": "", "usage": None}
# The fields of a response that `render_events` writes itself; the rest it is given.
_RENDERED = frozenset(
    {"id", "object", "created_at", "completed_at", "status", "model", "output"}
    | {"output_text", "error", "incomplete_details", "usage"}
)


def wanted(body: dict[str, Any]) -> bool:
    return body.get("background") is True


def new_run(rt: Runtime) -> Run:
    """The schedule of a background response made now."""
    durations = family(video_catalog(rt), FAMILY)
    schedule = schedule_for(durations, 0, rt.settings.job_speed)
    return Run(rt.clock.now(), schedule.queued_s, schedule.processing_s)


def finished(whole: dict[str, Any], run: Run) -> dict[str, Any]:
    """The response as it is once done: completed at the end of its run."""
    if whole["status"] != "completed":
        return whole
    return {**whole, "completed_at": int(run.created_ts + run.queued_s + run.processing_s)}


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
    after = -1 if starting_after is None else starting_after
    return [event for event in queued_first(_events(whole)) if event["sequence_number"] > after]


def _events(whole: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The typed events of a whole response, made again from it; the last one carries
    the response itself."""
    completion = responses.parse_response(whole)[0]
    deltas = chat.deltas(
        completion,
        stream_pieces(completion.text or "", "responses"),
        0,
        stream_pieces(completion.reasoning or "", "responses"),
    )
    extra = {key: value for key, value in whole.items() if key not in _RENDERED}
    for event in responses_events.render_events(
        deltas, id=whole["id"], model=whole["model"], created=whole["created_at"], extra=extra
    ):
        if event["type"] in ("response.completed", "response.incomplete"):
            event = {**event, "response": whole}
        yield event
