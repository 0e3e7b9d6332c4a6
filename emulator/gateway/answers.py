"""Turning a served call into the HTTP answer, with idempotent replay around it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
from litestar import Request, Response
from litestar.response import Stream
from pydantic import BaseModel

from emulator.auth.credentials import Caller
from emulator.errors import UpstreamError
from emulator.gateway import idempotency
from emulator.web import attribution, caller_of, runtime_of

if TYPE_CHECKING:
    from emulator.runtime import Runtime

EVENT_STREAM = "text/event-stream"


@dataclass(frozen=True)
class Answer:
    headers: dict[str, str]
    body: dict[str, Any] | None = None  # a whole JSON answer...
    stream: AsyncIterator[bytes] | None = None  # ...or server-sent events


Produce = Callable[["Runtime", Caller, dict[str, Any], dict[str, Any]], Answer]


def gateway_response(
    request: Request[Any, Any, Any], endpoint: str, data: BaseModel, produce: Produce
) -> Response[Any]:
    """The shared shape of the inference routes: body, attribution, idempotency, answer."""
    # Taken from the request, not injected: two dependencies cost a task group.
    rt, caller = runtime_of(request), caller_of(request)
    body = data.model_dump(by_alias=True, exclude_none=True)
    metadata = attribution(request)
    key = request.headers.get("idempotency-key")
    return respond(
        rt, caller.account_id, endpoint, key, body, lambda: produce(rt, caller, body, metadata)
    )


def respond(
    rt: Runtime,
    account_id: str,
    endpoint: str,
    idempotency_key: str | None,
    body: dict[str, Any],
    produce: Callable[[], Answer],
) -> Response[Any]:
    claimed = idempotency.claim(rt, account_id, idempotency_key, endpoint, body)
    if isinstance(claimed, idempotency.Replay):
        headers = {
            **claimed.headers,
            "Idempotent-Replayed": "true",
            "content-type": claimed.content_type,
        }
        return Response(claimed.body, status_code=claimed.status, headers=headers)
    try:
        # One transaction from the hold to the settlement (for a stream: to the
        # generation): nothing waits in between, so nothing could see it half done.
        # An answer of "every route failed" keeps its release and usage event.
        with rt.store.write(keep=(UpstreamError,)):
            answer = produce()
    except BaseException:
        if claimed is not None:
            idempotency.release(rt, claimed)
        raise
    if answer.stream is not None:
        # Exactly `text/event-stream` (no charset): clients pick their parser by it.
        headers = {**answer.headers, "content-type": EVENT_STREAM, "cache-control": "no-cache"}
        chunks = answer.stream
        if claimed is not None:
            chunks = idempotency.recorded(rt, claimed, answer.headers, chunks)
        return Stream(chunks, media_type=EVENT_STREAM, headers=headers)
    encoded = msgspec.json.encode(answer.body)  # litestar's encoder: faster than json
    if claimed is not None:
        idempotency.done(rt, claimed, 200, "application/json", answer.headers, encoded)
    return Response(encoded, headers=answer.headers, media_type="application/json")
