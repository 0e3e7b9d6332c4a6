"""Creating, reading, forcing and listing jobs; their money.

A job is charged to the account's USD balance when it is created (a ledger
entry, `kind: job_charge`), in the transaction that creates it, after the
same available-balance check as the gateway (balance less active holds): 402
`insufficient_credits` when short. A failed job is refunded exactly (`kind:
job_refund`). Failures are known ahead (a prompt with `[emulator:fail]`, a
fault rule) or forced; the refund is written by the first read of the account's
money at or after the failure (the balance, a hold, a new job, the account
view), dated at the failure, so the ledger never shows a refund before the job
failed. Job reads write nothing: a record shows `refunded` from its state.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from emulator.billing.money import insufficient_credits
from emulator.billing.spend import check_spend
from emulator.clock import iso
from emulator.errors import Conflict, NotFound, quoted
from emulator.gateway import background_control
from emulator.jobs.engine import Schedule, planned_failure, state_at
from emulator.paging import check_limit, decode_seq_cursor, page, seq_cursor
from emulator.store import jobs as job_rows
from emulator.store.accounts import add_ledger_entry
from emulator.store.jobs import JobRow
from emulator.store.reservations import available

if TYPE_CHECKING:
    from emulator.auth.credentials import Caller
    from emulator.runtime import Runtime

T = TypeVar("T")


def create_job(
    rt: Runtime,
    caller: Caller,
    *,
    prefix: str,
    family: str,
    kind: str,
    model: str | None,
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    schedule: Schedule,
    price_micros: int,
    failure: Callable[[], tuple[str, str] | None],
    advice: str,
    external_task_id: str | None = None,
    job_id: str | None = None,
) -> JobRow:
    """Queue a job and charge it, in one transaction; a known failure is scheduled.
    `failure` is asked once the job is accepted, so a fault rule failing jobs counts a
    hit only on one made. `advice` ends the 402 when the balance is short: what else
    the caller can do."""
    now = rt.clock.now()
    job_id = job_id or rt.new_id(prefix)
    with rt.store.write() as conn:
        if external_task_id is not None:
            _check_unique(conn, caller.account_id, external_task_id)
        settle_refunds(rt, conn, caller.account_id)
        if price_micros:  # the key's spend limit covers its jobs too
            key, scopes = caller.key, caller.scopes
            check_spend(conn, rt.keys, key, price_micros, now, "this job costs", scopes)
        left = available(conn, caller.account_id) or 0
        if price_micros > left:
            raise insufficient_credits(price_micros, left, advice)
        fails = failure()
        job = JobRow(
            id=job_id,
            account_id=caller.account_id,
            key_id=caller.key.id if caller.key else None,
            family=family,
            kind=kind,
            model=model,
            inputs=inputs,
            outputs=outputs,
            created_at=iso(now),
            created_ts=now,
            queued_s=schedule.queued_s,
            processing_s=schedule.processing_s,
            fail_ts=planned_failure(now, schedule) if fails else None,
            error_code=fails[0] if fails else None,
            error_message=fails[1] if fails else None,
            done_ts=None,
            charge_micros=price_micros,
            refunded=False,
            provider_task_id=rt.new_id("vp") if kind == "provider_task" else None,
            external_task_id=external_task_id,
        )
        job_rows.insert_job(conn, job)
        if price_micros:
            add_ledger_entry(
                conn,
                rt.ids,
                account_id=caller.account_id,
                asset="usd_micros",
                kind="job_charge",
                amount=-price_micros,
                reference=job_id,
                now=job.created_at,
                entry_id=rt.new_id("le"),
            )
        settle_refunds(rt, conn, caller.account_id)  # `instant` failures fail now
    return job


def _check_unique(conn: sqlite3.Connection, account_id: str, external_task_id: str) -> None:
    """An external task id names one task of the account (as the provider requires), and
    no id the service gave one of them: `GET /vidprov/tasks/{id}` must find it."""
    taken = job_rows.find_task(conn, account_id, external_task_id)
    if taken is not None:
        raise Conflict(
            f"The external task id {quoted(external_task_id)} already names task "
            f"{taken.id!r} of this account: choose one unique to each task.",
            param="external_task_id",
            code="duplicate_external_task_id",
        )


def settle_refunds(rt: Runtime, conn: sqlite3.Connection, account_id: str) -> None:
    """Refund the account's jobs that have failed by now and are not refunded yet."""
    now = rt.clock.now()
    for job in job_rows.refunds_due(conn, account_id, now):
        add_ledger_entry(
            conn,
            rt.ids,
            account_id=account_id,
            asset="usd_micros",
            kind="job_refund",
            amount=job.charge_micros,
            reference=job.id,
            now=iso(max(job.fail_ts or now, job.created_ts)),
            entry_id=rt.new_id("le"),
        )
        job_rows.mark_refunded(conn, job.id)


def settled_read(rt: Runtime, account_id: str, read: Callable[[sqlite3.Connection], T]) -> T:
    """`read` of the account's money, after refunding what has failed by now; a plain
    read (no write transaction) when nothing is due, as almost always."""
    with rt.store.read() as conn:
        if not job_rows.any_refund_due(conn, account_id, rt.clock.now()):
            return read(conn)
    with rt.store.write() as conn:
        settle_refunds(rt, conn, account_id)
        return read(conn)


def read_job(rt: Runtime, account_id: str, job_id: str, kind: str) -> JobRow:
    with rt.store.read() as conn:
        job = job_rows.get_job(conn, account_id, job_id, kind)
    if job is None:
        raise NotFound(f"No {kind.replace('_', ' ')} {job_id!r} in this account.", param="id")
    return job


def find_task(rt: Runtime, account_id: str, any_id: str) -> JobRow:
    with rt.store.read() as conn:
        job = job_rows.find_task(conn, account_id, any_id)
    if job is None:
        raise NotFound(
            f"No provider task {any_id!r} in this account (looked up as a local, provider "
            "and external task id).",
            param="id",
        )
    return job


def list_jobs(
    rt: Runtime,
    account_id: str,
    kind: str,
    limit: int | None,
    cursor: str | None,
    render: Any,
) -> dict[str, Any]:
    size = check_limit(limit, default=20, maximum=100)
    before = decode_seq_cursor(cursor, kind)
    with rt.store.read() as conn:
        rows = job_rows.list_jobs(conn, account_id, kind, size + 1, before)
    return page(
        rows,
        size,
        cursor_of=lambda item: seq_cursor(kind, item[0]),
        render=lambda item: render(item[1]),
    )


def find_video(rt: Runtime, account_id: str, video_id: str) -> JobRow | None:
    """The account's job whose output is the video `video_id`: a generation by its id, or
    a provider task by any of its ids or the id of its result video (`vp_...-0`)."""
    with rt.store.read() as conn:
        job = job_rows.get_job(conn, account_id, video_id, "generation")
        job = job or job_rows.find_task(conn, account_id, video_id)
        if job is None and video_id.endswith("-0"):
            job = job_rows.find_task(conn, account_id, video_id.removesuffix("-0"))
    return job


def force(
    rt: Runtime, job_id: str, outcome: str, code: str | None, message: str | None
) -> dict[str, Any]:
    """The control plane's `complete` or `fail`: the outcome happens now; the job as it is
    then. A job that has already ended keeps its outcome: asked for that outcome again
    (a job that `--job-speed instant` finished, say), nothing changes; asked for the
    other, 409. A background response (`resp_...`) is forced the same way."""
    if job_id.startswith("resp_"):
        return background_control.force(rt, job_id, outcome, code, message)
    now = rt.clock.now()
    with rt.store.write() as conn:
        job = job_rows.job_or_task(conn, job_id)
        if job is None:
            raise NotFound(
                f"No job {job_id!r}: name a generation or task by its id, or a provider "
                "task by its provider task id (an external task id is its account's own).",
                param="id",
            )
        if not _ended_as(job, now, outcome):
            if outcome == "complete":
                changes: dict[str, Any] = {"done_ts": now, "fail_ts": None}
                changes |= {"error_code": None, "error_message": None}
            else:
                changes = {
                    "done_ts": None,
                    "fail_ts": now,
                    "error_code": code or "job_failed",
                    "error_message": message or "The job was failed by the control plane.",
                }
            job_rows.force_outcome(conn, job.id, **changes)
            job = replace(job, **changes)
        settle_refunds(rt, conn, job.account_id)
    state = state_at(job, now)
    failed = state.status == "failed"
    return {
        "id": job.id,
        "object": "job",
        "family": job.family,
        "status": state.status,
        "progress": state.progress,
        "error": {"code": job.error_code, "message": job.error_message} if failed else None,
    }


def _ended_as(job: JobRow, now: float, outcome: str) -> bool:
    """Whether the job has already ended with `outcome`; 409 if it ended otherwise."""
    state = state_at(job, now)
    if not state.terminal:
        return False
    if state.status == ("completed" if outcome == "complete" else "failed"):
        return True
    raise Conflict(
        f"Job {job.id!r} already ended: {state.status} at {state.finished_at}, and an "
        f"ended job keeps its outcome, so it cannot {outcome} now. Force a job while it "
        "is queued or processing (create a new one, or force it before moving the clock).",
        param="id",
        code="job_already_ended",
    )
