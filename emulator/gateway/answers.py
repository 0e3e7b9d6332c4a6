"""Turning a served call into the HTTP answer, with idempotent replay around it."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
from pydantic import BaseModel

from emulator.auth.credentials import Caller
from emulator.errors import UpstreamError
from emulator.gateway import idempotency
from emulator.web import JSON, Reply, attribution

if TYPE_CHECKING:
    from emulator.direct import DirectRequest
    from emulator.runtime import Runtime

EVENT_STREAM = "text/event-stream"


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class Answer:
    headers: dict[str, str]
    body: dict[str, Any] | None = None  # a whole JSON answer...
    stream: AsyncIterator[bytes] | None = None  # ...or server-sent events
    made: list[bytes] | None = None  # a stream that runs on without its client: its lines
    on_whole: list[Callable[[], None]] | None = None  # the stream's `Call.on_whole`
    provider: str | None = None  # the one that served it (for the journal)


# (runtime, caller, body, metadata, origin): `origin` is where the client reached us, for
# the links a server tool writes ("" without tools: none is written).
Produce = Callable[["Runtime", Caller, dict[str, Any], dict[str, Any], str], Answer]


def gateway_reply(
    request: DirectRequest, endpoint: str, data: BaseModel, produce: Produce
) -> Reply:
    """The shared shape of the inference routes: body, attribution, idempotency, answer."""
    rt, caller = request.rt, request.caller
    body = data.model_dump(by_alias=True, exclude_none=True)
    state = request.scope["state"]
    metadata = attribution(request.headers, state)
    origin = request.base_url() if body.get("tools") else ""

    def produced() -> Answer:
        answer = produce(rt, caller, body, metadata, origin)
        state["provider"] = answer.provider
        return answer

    return respond(
        rt, caller.account_id, endpoint, request.headers.get("idempotency-key"), body, produced
    )


def respond(
    rt: Runtime,
    account_id: str,
    endpoint: str,
    idempotency_key: str | None,
    body: dict[str, Any],
    produce: Callable[[], Answer],
) -> Reply:
    claimed = idempotency.claim(rt, account_id, idempotency_key, endpoint, body)
    if isinstance(claimed, idempotency.Replay):
        headers = {**claimed.headers, "Idempotent-Replayed": "true"}
        return Reply(claimed.body, claimed.status, headers, claimed.content_type)
    try:
        # One transaction from the hold to the settlement (for a stream: to the
        # generation): nothing waits in between, so nothing could see it half done.
        # An answer of "every route failed" keeps its release and usage event.
        with rt.store.write(keep=(UpstreamError,)), _collector_paused():
            answer = produce()
            if answer.stream is None:
                encoded = msgspec.json.encode(answer.body)  # litestar's encoder: faster
                if claimed is not None:
                    # Kept in the charge's transaction: a crash between the two would
                    # leave the request charged with its key unanswered, and the
                    # client's retry charged again.
                    idempotency.done(rt, claimed, 200, JSON, answer.headers, encoded)
    except BaseException:
        if claimed is not None:
            idempotency.release(rt, claimed)
        raise
    if answer.stream is not None:
        headers = {**answer.headers, "cache-control": "no-cache"}
        chunks = answer.stream
        if claimed is not None:
            # Kept with its headers as sent: a replay says `no-cache` too.
            assert answer.on_whole is not None, "a stream's answer carries its call's on_whole"
            made, on_whole = answer.made, answer.on_whole
            chunks = idempotency.recorded(rt, claimed, headers, chunks, made, on_whole)
        return Reply(headers=headers, media_type=EVENT_STREAM, stream=chunks)
    return Reply(encoded, headers=answer.headers)


class _collector_paused:  # lower case: used as a function would be
    """The cyclic garbage collector off while an answer is made: a large one (n choices of
    thousands of tokens, each with 20 alternatives: millions of dicts, none in a cycle)
    would otherwise set it scanning the growing heap again and again, most of the time
    the answer takes, and the server answers nothing else meanwhile. Refcounting frees
    the answer as ever; what cycles a request leaves are collected after it. A class:
    on every request, a generator's context manager costs several calls more."""

    __slots__ = ("_paused",)

    def __enter__(self) -> None:
        # Not if paused already (another thread's answer), or at start-up.
        self._paused = gc.isenabled()
        if self._paused:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._paused:
            gc.enable()
