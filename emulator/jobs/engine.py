"""A job's status, computed on read from its schedule and the virtual clock.

    created ──queued_s──▶ processing ──processing_s──▶ completed
                                  └── fail_ts ──▶ failed (progress as reached)

No background thread and no sleeping: the same job read at the same virtual
time gives the same answer, and advancing the clock moves every job at once.
A forced outcome (the control plane) or a failure known at creation (a prompt
with `[emulator:fail]`, a fault rule) is a time in the schedule like any other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from emulator.clock import iso
from emulator.store.jobs import JobRow

FAIL_MARKER = "[emulator:fail]"


@dataclass(frozen=True)
class Schedule:
    queued_s: float
    processing_s: float


def schedule_for(family: dict[str, float], output_seconds: float, speed: float | None) -> Schedule:
    """The family's fixture durations (video.yaml) scaled by `--job-speed`; `instant`
    (None) is zero."""
    if speed is None:
        return Schedule(0.0, 0.0)
    per_second = family.get("per_output_second_s", 0.0)
    processing = family.get("processing_s", 0.0) + per_second * output_seconds
    return Schedule(family.get("queued_s", 0.0) / speed, processing / speed)


def planned_failure(created_ts: float, schedule: Schedule) -> float:
    """When a job known to fail fails: half-way through processing, on the millisecond
    at or after it, so that a read at the `failed_at` shown (to the millisecond) finds
    it failed."""
    half_way = created_ts + schedule.queued_s + schedule.processing_s / 2
    return math.ceil(round(half_way * 1000, 6)) / 1000


@dataclass(frozen=True)
class JobState:
    status: str  # queued, processing, completed, failed
    progress: int  # 0-100
    eta_seconds: float | None  # until the end, while running
    started_at: str | None
    finished_at: str | None

    @property
    def terminal(self) -> bool:
        return self.status in ("completed", "failed")


_HALF_MS = 0.0005


def state_at(job: JobRow, now: float) -> JobState:
    start = job.created_ts + job.queued_s
    end = start + job.processing_s
    if job.done_ts is not None and job.done_ts <= now:
        return JobState("completed", 100, None, iso(min(start, job.done_ts)), iso(job.done_ts))
    if job.fail_ts is not None and job.fail_ts <= now:
        began = iso(start) if job.fail_ts >= start else None
        # Without processing time (`instant`) a failure is still half-way, as planned.
        reached = _progress(job, job.fail_ts) if job.processing_s > 0 else 50
        return JobState("failed", reached, None, began, iso(job.fail_ts))
    # Times are shown to the millisecond: a job within half of one of its start or end
    # has reached it, so that advancing the clock by the `eta_seconds` shown ends it.
    near = now + _HALF_MS
    if near < start:
        return JobState("queued", 0, round(end - now, 3), None, None)
    if near < end:
        return JobState("processing", _progress(job, now), round(end - now, 3), iso(start), None)
    if job.fail_ts is not None:
        # Its failure (planned before its end) is not reached yet: shown completed, a
        # job of under a millisecond would fail a moment later. The eta ends it.
        eta = max(0.001, round(job.fail_ts - now, 3))
        return JobState("processing", _progress(job, now), eta, iso(start), None)
    return JobState("completed", 100, None, iso(start), iso(end))


def _progress(job: JobRow, at: float) -> int:
    start = job.created_ts + job.queued_s
    if at < start:
        return 0
    if job.processing_s <= 0:
        return 100
    return int(min(99.0, 100 * (at - start) / job.processing_s))  # inf for a tiny one
