"""Responses written once per event-loop turn: same bytes, same order, still streamed."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from emulator.batched_writes import (
    _FLUSH_NOW_BYTES,
    BatchedHttpToolsProtocol,
    BatchedTransport,
    _Turn,
)
from emulator.server import uvicorn_config
from emulator.settings import Settings


class FakeSocket:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closing = False
        self.closed_after: list[bytes] | None = None

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closed_after = list(self.written)
        self.closing = True

    def get_extra_info(self, name: str) -> Any:
        return f"extra:{name}"


def batched(turn: _Turn) -> tuple[BatchedTransport, FakeSocket]:
    inner = FakeSocket()
    return BatchedTransport(inner, turn), inner  # type: ignore[arg-type]


def test_one_turns_writes_leave_together_after_the_turn() -> None:
    async def scenario() -> None:
        turn = _Turn()
        first, first_socket = batched(turn)
        second, second_socket = batched(turn)
        first.write(b"HTTP/1.1 200 OK\r\n\r\n")
        second.write(b"head-2 ")
        first.write(b"body-1")
        second.write(b"body-2")
        assert first_socket.written == [] and second_socket.written == []  # not yet
        await asyncio.sleep(0)  # the turn ends
        assert first_socket.written == [b"HTTP/1.1 200 OK\r\n\r\nbody-1"]
        assert second_socket.written == [b"head-2 body-2"]
        first.write(b"next")  # a later turn is a later write
        first.writelines([b" and", b" more"])
        await asyncio.sleep(0)
        assert first_socket.written[-1] == b"next and more"

    asyncio.run(scenario())


def test_close_sends_what_waits_first_and_a_large_write_goes_at_once() -> None:
    async def scenario() -> None:
        turn = _Turn()
        transport, inner = batched(turn)
        transport.write(b"last words")
        transport.close()
        assert inner.closed_after == [b"last words"]
        big, big_socket = batched(turn)
        big.write(b"x" * _FLUSH_NOW_BYTES)
        assert big_socket.written == [b"x" * _FLUSH_NOW_BYTES]  # flow control sees it now
        await asyncio.sleep(0)
        assert len(big_socket.written) == 1

    asyncio.run(scenario())


def test_a_closing_socket_gets_nothing_more_and_the_rest_is_the_sockets_own() -> None:
    async def scenario() -> None:
        transport, inner = batched(_Turn())
        transport.write(b"to a client that left")
        assert not transport.is_closing()
        inner.closing = True
        assert transport.is_closing()
        await asyncio.sleep(0)
        assert inner.written == []
        assert transport.get_extra_info("peername") == "extra:peername"

    asyncio.run(scenario())


def test_a_stream_still_arrives_chunk_by_chunk(slow_streams: str) -> None:
    body = {"model": "emulator/echo", "messages": [{"role": "user", "content": "one two three"}]}
    arrivals: list[float] = []
    with httpx.stream(
        "POST",
        f"{slow_streams}/api/v1/chat/completions",
        json=body | {"stream": True},
        headers={"Authorization": "Bearer sk-emu-demo-gateway"},
    ) as response:
        for line in response.iter_lines():
            if line:
                arrivals.append(time.perf_counter())
    assert len(arrivals) >= 4
    # Paced 40 ms apart: the first chunk came long before the last, not in one burst.
    assert arrivals[-1] - arrivals[0] >= 0.08


def test_many_concurrent_answers_each_reach_their_own_client(slow_streams: str) -> None:
    async def scenario() -> list[tuple[int, str]]:
        async with httpx.AsyncClient(
            base_url=f"{slow_streams}/api/v1",
            headers={"Authorization": "Bearer sk-emu-demo-gateway"},
        ) as client:

            async def ask(index: int) -> tuple[int, str]:
                text = f"echo number {index}"
                body = {"model": "emulator/echo", "messages": [{"role": "user", "content": text}]}
                reply = await client.post("/chat/completions", json=body)
                return reply.status_code, reply.json()["choices"][0]["message"]["content"]

            return await asyncio.gather(*(ask(i) for i in range(40)))

    answers = asyncio.run(scenario())
    assert answers == [(200, f"echo number {i}") for i in range(40)]


def test_the_server_writes_through_batched_transports() -> None:
    protocol = uvicorn_config(object(), Settings(db=":memory:")).http
    assert isinstance(protocol, type) and issubclass(protocol, BatchedHttpToolsProtocol)
