"""What the control plane's fault, job, snapshot and journal routes answer, declared for
the OpenAPI document (their services build plain dicts; these only describe them, and
the tests check that they do)."""

from __future__ import annotations

from typing import Any, Literal

from emulator.bodies import WireModel
from emulator.store.fixture_models import ReplyFixture


class Deleted(WireModel):
    id: str
    object: str
    deleted: Literal[True]


class Cleared(WireModel):
    """A whole list emptied: how many items it held."""

    object: Literal["list"]
    deleted: int


class ForcedError(WireModel):
    code: str | None
    message: str | None


class ForcedJob(WireModel):
    """A job, or a background response, after `complete` or `fail`."""

    id: str
    object: Literal["job"]
    family: str
    status: Literal["queued", "processing", "completed", "failed"]
    progress: int | None
    error: ForcedError | None


class FaultMatchOut(WireModel):
    """What the rule matches: only the fields it was given (`api_key` as `(redacted)`)."""

    path: str | None = None
    method: str | None = None
    model: str | None = None
    provider: str | None = None
    key_id: str | None = None
    api_key: Literal["(redacted)"] | None = None
    account_id: str | None = None


class FaultActionOut(WireModel):
    """What the rule does: only the effects it has."""

    status: int | None = None
    type: str | None = None
    code: str | None = None
    message: str | None = None
    retry_after: int | None = None
    delay_ms: int | None = None
    fail_route: Literal[True] | None = None
    cut_stream_after: int | None = None
    fail_job: Literal[True] | None = None


class FaultRuleOut(WireModel):
    object: Literal["fault_rule"]
    id: str
    match: FaultMatchOut
    action: FaultActionOut
    times: int | None
    probability: float | None
    hits: int
    matched: int
    remaining: int | None
    created_at: str


class FaultRuleList(WireModel):
    object: Literal["list"]
    data: list[FaultRuleOut]
    has_more: bool
    next_cursor: str | None


class SnapshotOut(WireModel):
    object: Literal["snapshot"]
    name: str
    created_at: str
    size_bytes: int


class SnapshotList(WireModel):
    object: Literal["list"]
    data: list[SnapshotOut]
    has_more: bool
    next_cursor: str | None


class SnapshotRestored(SnapshotOut):
    restored: Literal[True]
    clock: str


class SnapshotDeleted(WireModel):
    object: Literal["snapshot"]
    name: str
    deleted: Literal[True]


class JournalEntry(WireModel):
    object: Literal["journal_entry"]
    id: str
    at: str
    method: str
    path: str
    query: str | None
    status: int
    duration_ms: float
    account_id: str | None
    key_id: str | None
    model: str | None
    provider: str | None
    idempotency_key: str | None
    replayed: bool
    error_code: str | None
    stream: bool


class JournalList(WireModel):
    object: Literal["list"]
    data: list[JournalEntry]
    has_more: bool
    next_cursor: str | None


class JournalRequest(WireModel):
    headers: dict[str, str]
    body: Any  # the JSON sent, or its text when it was not JSON


class JournalResponse(JournalRequest):
    truncated: bool


class JournalEntryDetail(JournalEntry):
    request: JournalRequest
    response: JournalResponse


class RepliesOut(WireModel):
    replies: list[ReplyFixture]
