"""`Idempotency-Key`: the same key and body within 24 hours replays the first answer.

- Same key, same body, first answer done: the stored answer again, with
  `Idempotent-Replayed: true`; nothing is generated, charged or logged anew.
- Same key, another body: 422 `idempotency_key_mismatch`.
- Same key while the first request still runs (a stream): 409
  `idempotency_key_in_use`.
- Only successful answers are kept: after an error (a 4xx, a 503) the key
  is free again, so a corrected retry runs (as with a payment API).
Keys belong to an account and live 24 hours of the virtual clock.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from emulator.errors import Conflict, IdempotencyKeyMismatch, ValidationFailed
from emulator.store import idempotency as records

if TYPE_CHECKING:
    from emulator.runtime import Runtime

LIFETIME_S = 24 * 3600
MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class Replay:
    status: int
    content_type: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Claim:
    """A key this request now holds; `done` or `release` it."""

    account_id: str
    key: str
    world: int  # the state it was claimed in (`Runtime.world`)
    started: float  # its record's `created_at`: which record is this request's


def claim(
    rt: Runtime, account_id: str, key: str | None, endpoint: str, body: dict[str, Any]
) -> Claim | Replay | None:
    if key is None:
        return None
    if not key or len(key) > MAX_KEY_LENGTH:
        raise ValidationFailed(
            f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters.", param="Idempotency-Key"
        )
    digest = hashlib.sha256(
        (endpoint + json.dumps(body, sort_keys=True, separators=(",", ":"))).encode()
    ).hexdigest()
    now = rt.clock.now()
    with rt.store.write() as conn:
        record = records.get_record(conn, account_id, key)
        if record is not None and now - record.created_at < LIFETIME_S:
            if record.body_hash != digest:
                raise IdempotencyKeyMismatch(
                    "This Idempotency-Key was used with a different request body. Use a new "
                    "key for a new request.",
                    param="Idempotency-Key",
                )
            if record.state == "in_flight":
                raise Conflict(
                    "A request with this Idempotency-Key is still running; retry when it ends.",
                    param="Idempotency-Key",
                    headers={"Retry-After": "1"},
                )
            return Replay(
                record.status or 200, record.content_type or "", record.headers, record.body or b""
            )
        records.start_record(conn, account_id, key, endpoint, digest, now)
    return Claim(account_id, key, rt.world, now)


def done(
    rt: Runtime, claim_: Claim, status: int, content_type: str, headers: dict[str, str], body: bytes
) -> None:
    with rt.store.write() as conn:
        if claim_.world != rt.world:
            return  # a reset or restore replaced the state it was claimed in
        records.finish_record(
            conn, claim_.account_id, claim_.key, claim_.started, status, content_type, headers, body
        )


def release(rt: Runtime, claim_: Claim) -> None:
    with rt.store.write() as conn:
        if claim_.world != rt.world:
            return
        records.drop_record(conn, claim_.account_id, claim_.key, claim_.started)


async def recorded(
    rt: Runtime,
    claim_: Claim,
    headers: dict[str, str],
    chunks: AsyncIterator[bytes],
    made: list[bytes] | None,
    on_whole: list[Callable[[], None]],
) -> AsyncIterator[bytes]:
    """Pass a stream through, keeping its bytes for replay if it ends whole (not cut, its
    client still there: only successful answers are kept). The stream runs the hook this
    adds to `on_whole` in its settling transaction, so a crash cannot leave it charged
    and its key free. `made`: the stream runs on when its client leaves (a background
    response), making these lines: kept whole all the same."""
    kept: list[bytes] = []
    written = False

    def keep() -> None:
        nonlocal written
        whole = kept if made is None else made
        done(rt, claim_, 200, "text/event-stream", headers, b"".join(whole))
        written = True

    on_whole.append(keep)
    ended = False
    try:
        async for chunk in chunks:
            kept.append(chunk)
            yield chunk
        ended = True
    finally:
        if made is not None and not ended:
            close = getattr(chunks, "aclose", None)
            if close is not None:
                await close()  # it makes the rest of its lines, and settles, as it closes
        if not written:  # cut, or its client left: the key is free again
            release(rt, claim_)
