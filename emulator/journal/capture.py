"""The ASGI layer that writes the journal: every request under /api/, as it was
sent and answered (bodies up to a cap), with its duration and caller."""

from __future__ import annotations

import time
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
            at=clock.now_iso(),
            method=scope["method"],  # type: ignore[typeddict-item]
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
            entry.request_body = b"".join(request_chunks)
            entry.response_body = b"".join(response_chunks)
            entry.truncated = sizes[0] > BODY_CAP or sizes[1] > BODY_CAP
            entry.duration_ms = (time.perf_counter() - started) * 1000
            journal.record(entry)

    return handler
