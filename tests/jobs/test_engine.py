"""The job engine's status: a pure function of the schedule and the clock."""

from __future__ import annotations

import itertools
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.clock import parse_iso
from emulator.jobs.engine import Schedule, planned_failure, schedule_for, state_at
from emulator.store.jobs import JobRow

JOB = JobRow(
    id="vgen_1", account_id="acct", key_id=None, family="video_generation",
    kind="generation", model="m", inputs={}, outputs={}, created_at="", created_ts=1000.0,
    queued_s=10.0, processing_s=40.0, fail_ts=None, error_code=None, error_message=None,
    done_ts=None, charge_micros=0, refunded=False,
    provider_task_id=None, external_task_id=None,
)  # fmt: skip


def test_a_job_walks_queued_processing_completed() -> None:
    assert state_at(JOB, 1000.0).status == "queued"
    assert state_at(JOB, 1009.9).status == "queued"
    middle = state_at(JOB, 1030.0)
    assert (middle.status, middle.progress, middle.eta_seconds) == ("processing", 50, 20.0)
    done = state_at(JOB, 1050.0)
    assert (done.status, done.progress, done.eta_seconds) == ("completed", 100, None)
    assert done.finished_at == "1970-01-01T00:17:30.000Z"


@given(st.lists(st.floats(min_value=0, max_value=100), min_size=2, max_size=20))
def test_progress_never_goes_back(offsets: list[float]) -> None:
    order = ["queued", "processing", "completed"]
    states = [state_at(JOB, 1000.0 + t) for t in sorted(offsets)]
    for before, after in itertools.pairwise(states):
        assert after.progress >= before.progress
        assert order.index(after.status) >= order.index(before.status)


def test_a_planned_failure_fails_half_way_with_the_progress_reached() -> None:
    failing = replace(JOB, fail_ts=planned_failure(1000.0, Schedule(10.0, 40.0)))
    assert state_at(failing, 1029.0).status == "processing"
    failed = state_at(failing, 1031.0)
    assert (failed.status, failed.progress) == ("failed", 50)


def test_forced_outcomes_and_instant_speed() -> None:
    assert state_at(replace(JOB, done_ts=1001.0), 1001.0).status == "completed"
    assert state_at(replace(JOB, fail_ts=1001.0), 1001.0).progress == 0
    family = {"queued_s": 4, "processing_s": 20, "per_output_second_s": 2}
    assert schedule_for(family, 5, None) == Schedule(0.0, 0.0)
    assert schedule_for(family, 5, 2.0) == Schedule(2.0, 15.0)
    instant = replace(JOB, queued_s=0.0, processing_s=0.0)
    assert state_at(instant, 1000.0).status == "completed"
    # Failing at once, an instant job still fails half-way, as a timed one does.
    failed = state_at(replace(instant, fail_ts=planned_failure(1000.0, Schedule(0, 0))), 1000.0)
    assert (failed.status, failed.progress) == ("failed", 50)


# A schedule's draws: waiting, processing, the job speed, when it was made.
QUEUED = st.floats(0, 100, allow_nan=False)
SPEEDS = st.sampled_from([1, 2, 3, 7, 0.3])
CREATED = st.floats(0, 10**7, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(
    queued=QUEUED,
    processing=st.floats(0.001, 1000, allow_nan=False),
    speed=SPEEDS,
    created=CREATED,
    waited=st.floats(0, 1, allow_nan=False),
)
def test_advancing_by_the_eta_shown_ends_the_job(
    queued: float, processing: float, speed: float, created: float, waited: float
) -> None:
    job = replace(JOB, created_ts=created, queued_s=queued / speed, processing_s=processing / speed)
    now = created + waited * (job.queued_s + job.processing_s)
    state = state_at(job, now)
    if state.status != "completed":
        assert state.eta_seconds is not None and state.eta_seconds > 0
        assert state_at(job, now + state.eta_seconds).status == "completed"


@settings(max_examples=300, deadline=None)
@given(
    processing=st.floats(0, 0.002, allow_nan=False),
    offsets=st.lists(st.floats(0, 0.01, allow_nan=False), min_size=2, max_size=10),
)
def test_a_failing_job_of_under_a_millisecond_never_shows_completed(
    processing: float, offsets: list[float]
) -> None:
    """At a speed that makes processing shorter than the half millisecond a job's end is
    rounded by, the planned failure still comes first: completed is never shown, and
    the state once ended stays."""
    failing = replace(
        JOB,
        queued_s=0.0,
        processing_s=processing,
        fail_ts=planned_failure(1000.0, Schedule(0, processing)),
    )
    states = [state_at(failing, 1000.0 + t) for t in sorted(offsets)]
    assert "completed" not in [s.status for s in states]
    for before, after in itertools.pairwise(states):
        if before.status == "failed":
            assert after == before
    shown = state_at(failing, 1000.0)
    if shown.status != "failed":
        assert shown.eta_seconds is not None
        assert state_at(failing, 1000.0 + shown.eta_seconds).status == "failed"


@settings(max_examples=300, deadline=None)
@given(
    queued=QUEUED,
    processing=st.floats(0, 1000, allow_nan=False),
    speed=SPEEDS,
    created=CREATED,
)
def test_a_failed_job_is_failed_at_the_instant_it_shows(
    queued: float, processing: float, speed: float, created: float
) -> None:
    """`failed_at` is shown to the millisecond: a read at that instant finds the job
    failed (it showed processing there at fractional speeds), as the refund is dated."""
    schedule = Schedule(queued / speed, processing / speed)
    job = replace(
        JOB,
        created_ts=created,
        queued_s=schedule.queued_s,
        processing_s=schedule.processing_s,
        fail_ts=planned_failure(created, schedule),
    )
    shown = state_at(job, created + 10_000).finished_at
    assert shown is not None and state_at(job, parse_iso(shown)).status == "failed"
