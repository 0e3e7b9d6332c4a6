"""Jobs: what was asked, its schedule and its outcome (status is computed on read)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

import msgspec

from emulator.store.db import newest_first


@dataclass(frozen=True)
class JobRow:
    id: str
    account_id: str
    key_id: str | None
    family: str
    kind: str
    model: str | None
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    created_at: str
    created_ts: float
    queued_s: float
    processing_s: float
    fail_ts: float | None
    error_code: str | None
    error_message: str | None
    done_ts: float | None
    charge_micros: int
    refunded: bool
    provider_task_id: str | None
    external_task_id: str | None


_COLUMNS = list(JobRow.__dataclass_fields__)


_SELECT = ", ".join(_COLUMNS)
_INPUTS, _OUTPUTS, _REFUNDED = (_COLUMNS.index(c) for c in ("inputs", "outputs", "refunded"))


def _row(row: sqlite3.Row | dict[str, Any]) -> JobRow:
    """A row selected as `_SELECT` (in the dataclass's field order), taken by position."""
    values = list(row.values() if isinstance(row, dict) else row)
    values[_INPUTS] = msgspec.json.decode(values[_INPUTS])
    values[_OUTPUTS] = msgspec.json.decode(values[_OUTPUTS] or "{}")
    values[_REFUNDED] = bool(values[_REFUNDED])
    return JobRow(*values)


def insert_job(conn: sqlite3.Connection, job: JobRow) -> None:
    values = {**job.__dict__, "inputs": json.dumps(job.inputs), "outputs": json.dumps(job.outputs)}
    values["refunded"] = int(job.refunded)
    marks = ", ".join("?" for _ in _COLUMNS)
    conn.execute(
        f"INSERT INTO jobs ({', '.join(_COLUMNS)}) VALUES ({marks})",
        [values[c] for c in _COLUMNS],
    )


# A charged job that has failed by `?` (now) and is not refunded yet.
REFUND_DUE = "refunded = 0 AND fail_ts <= ? AND charge_micros > 0"
_GET_JOB = f"SELECT {_SELECT} FROM jobs WHERE id = ? AND account_id = ? AND kind = ?"


def get_job(conn: sqlite3.Connection, account_id: str, job_id: str, kind: str) -> JobRow | None:
    row = conn.execute(_GET_JOB, [job_id, account_id, kind]).fetchone()
    return None if row is None else _row(row)


def job_by_id(conn: sqlite3.Connection, job_id: str) -> JobRow | None:
    row = conn.execute(f"SELECT {_SELECT} FROM jobs WHERE id = ?", [job_id]).fetchone()
    return None if row is None else _row(row)


def job_or_task(conn: sqlite3.Connection, any_id: str) -> JobRow | None:
    """A job by its id, or a provider task by its provider task id (both given by the
    service, unique across accounts; an external task id is only unique in its own)."""
    row = conn.execute(
        f"SELECT {_SELECT} FROM jobs WHERE id = ? OR provider_task_id = ? "
        "ORDER BY id = ? DESC LIMIT 1",
        [any_id, any_id, any_id],
    ).fetchone()
    return None if row is None else _row(row)


def find_task(conn: sqlite3.Connection, account_id: str, any_id: str) -> JobRow | None:
    """A provider task by its local, provider or external task id, in that order: an id
    the service gave wins over one a client chose."""
    row = conn.execute(
        f"SELECT {_SELECT} FROM jobs WHERE account_id = ? AND kind = 'provider_task' AND "
        "(id = ? OR provider_task_id = ? OR external_task_id = ?) "
        "ORDER BY id = ? DESC, provider_task_id = ? DESC, rowid DESC LIMIT 1",
        [account_id, any_id, any_id, any_id, any_id, any_id],
    ).fetchone()
    return None if row is None else _row(row)


def list_jobs(
    conn: sqlite3.Connection, account_id: str, kind: str, limit: int, before_seq: int | None
) -> list[tuple[int, JobRow]]:
    sql = f"SELECT rowid AS seq, {_SELECT} FROM jobs WHERE account_id = ? AND kind = ?"
    rows = newest_first(conn, sql, [account_id, kind], limit, before_seq)
    return [(seq, _row(row)) for seq, row in rows]


def force_outcome(
    conn: sqlite3.Connection,
    job_id: str,
    *,
    fail_ts: float | None,
    done_ts: float | None,
    error_code: str | None,
    error_message: str | None,
) -> None:
    conn.execute(
        "UPDATE jobs SET fail_ts = ?, done_ts = ?, error_code = ?, error_message = ? WHERE id = ?",
        [fail_ts, done_ts, error_code, error_message, job_id],
    )


def key_job_spend(
    conn: sqlite3.Connection, key_id: str, starts: list[str], now: float
) -> list[int]:
    """What a key's jobs created since each of `starts` charged, less those refunded or
    failed by `now` (their refund is due: the next read of the money writes it)."""
    since = "COALESCE(SUM(CASE WHEN created_at >= ? THEN charge_micros END), 0)"
    row = conn.execute(
        f"SELECT {', '.join(since for _ in starts)} FROM jobs WHERE key_id = ? "
        "AND refunded = 0 AND (fail_ts IS NULL OR fail_ts > ?)",
        [*starts, key_id, now],
    ).fetchone()
    return [int(value) for value in row]


def any_refund_due(conn: sqlite3.Connection, account_id: str, now: float) -> bool:
    row = conn.execute(
        f"SELECT 1 FROM jobs WHERE account_id = ? AND {REFUND_DUE} LIMIT 1",
        [account_id, now],
    ).fetchone()
    return row is not None


def refunds_due(conn: sqlite3.Connection, account_id: str, now: float) -> list[JobRow]:
    """Failed (by now) jobs of the account whose charge is not refunded yet."""
    rows = conn.execute(
        f"SELECT {_SELECT} FROM jobs WHERE account_id = ? AND {REFUND_DUE}",
        [account_id, now],
    ).fetchall()
    return [_row(row) for row in rows]


def mark_refunded(conn: sqlite3.Connection, job_id: str) -> None:
    conn.execute("UPDATE jobs SET refunded = 1 WHERE id = ?", [job_id])
