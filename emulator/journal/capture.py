"""Writing the journal: every request under /api/, as it was sent and answered
(bodies up to a cap), with its duration and caller.

Litestar's routes are recorded by an ASGI layer that taps their messages; the
direct routes (`emulator.direct`) hand over their request and reply as they
are (`record_direct`), which costs a fifth as much."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from litestar.types import ASGIApp, Message, Receive, ReceiveMessage, Scope, Send

from emulator.journal.book import BODY_CAP, Entry, Journal

if TYPE_CHECKING:
    from emulator.clock import Clock

JOURNALED_PREFIX = "/api/"


def with_journal(inner: ASGIApp, journal: Journal, clock: Clock) -> ASGIApp:
    if journal.size == 0:
        return inner

    async def handler(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(JOURNALED_PREFIX):  # type: ignore[comparison-overlap]
            await inner(scope, receive, send)
            return
        started = time.perf_counter()
        state = scope.setdefault("state", {})
        entry = Entry(
            id=state.get("request_id", ""),
            at_ts=clock.now(),
            method=state.get("sent_method") or scope["method"],  # type: ignore[typeddict-item]
            path=scope["path"],
            query=scope.get("query_string", b"").decode("latin-1"),
            raw_request_headers=scope["headers"],  # filtered when read, not here
            request_body=b"",
        )
        request_chunks: list[bytes] = []
        response_chunks: list[bytes] = []
        sizes = [0, 0]

        async def receive_recorded() -> ReceiveMessage:
            message = await receive()
            if message["type"] == "http.request" and sizes[0] < BODY_CAP:
                body = message.get("body", b"")
                request_chunks.append(body[: BODY_CAP - sizes[0]])
                sizes[0] += len(body)
            return message

        async def send_recorded(message: Message) -> None:
            if message["type"] == "http.response.start":
                entry.status = message["status"]
                entry.raw_response_headers = message.get("headers", ())
            elif message["type"] == "http.response.body":
                body = message.get("body", b"")
                if sizes[1] < BODY_CAP:
                    response_chunks.append(body[: BODY_CAP - sizes[1]])
                sizes[1] += len(body)
            await send(message)

        try:
            await inner(scope, receive_recorded, send_recorded)
        finally:
            caller = state.get("caller_ids")  # (account id, key id), set by the auth hook
            if caller is not None:
                entry.account_id, entry.key_id = caller
            entry.provider = state.get("provider")
            entry.request_body = b"".join(request_chunks)
            entry.response_body = b"".join(response_chunks)
            entry.truncated = sizes[0] > BODY_CAP or sizes[1] > BODY_CAP
            entry.duration_ms = (time.perf_counter() - started) * 1000
            journal.record(entry)

    return handler


def record_direct(
    journal: Journal,
    scope: Scope,
    at: float,
    started: float,
    request_body: bytes,
    status: int,
    headers: list[tuple[bytes, bytes]],
    response: list[bytes],
) -> None:
    """The entry of a request a direct route answered (`response`: its body's chunks)."""
    state = scope["state"]
    account_id, key_id = state.get("caller_ids") or (None, None)
    response_body = b"".join(response)
    journal.record(
        Entry(
            id=state.get("request_id", ""),
            at_ts=at,
            method=state.get("sent_method") or scope["method"],  # type: ignore[typeddict-item]
            path=scope["path"],
            query=scope.get("query_string", b"").decode("latin-1"),
            raw_request_headers=scope["headers"],
            request_body=request_body[:BODY_CAP],  # the same object when shorter
            account_id=account_id,
            key_id=key_id,
            status=status,
            raw_response_headers=headers,
            response_body=capped_reply(response_body),
            truncated=len(request_body) > BODY_CAP or len(response_body) > BODY_CAP,
            duration_ms=(time.perf_counter() - started) * 1000,
            provider=state.get("provider"),
        )
    )


class _CappedReply:
    """A reply's body cut at the cap. A direct route's cached answer is the same
    object on every request (the model list is over the cap): its cut is made once,
    not copied again for each request (64 KiB a time, most of the route's cost)."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last = (b"", b"")  # (a body over the cap, its cut): one tuple, swapped whole

    def __call__(self, body: bytes) -> bytes:
        if len(body) <= BODY_CAP:
            return body
        last_body, cut = self._last
        if body is not last_body:
            cut = body[:BODY_CAP]
            self._last = (body, cut)
        return cut


capped_reply = _CappedReply()


async def teed(stream: AsyncIterator[bytes], kept: list[bytes]) -> AsyncIterator[bytes]:
    """`stream` as it is, its chunks also kept in `kept` (up to the journal's cap)."""
    size = 0
    try:
        async for chunk in stream:
            if size <= BODY_CAP:
                kept.append(chunk)
                size += len(chunk)
            yield chunk
    finally:  # a client that left: close the stream now (its usage is recorded on close)
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
