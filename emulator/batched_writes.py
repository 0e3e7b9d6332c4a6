"""Responses leave in one burst per event-loop turn, not one write at a time.

uvicorn writes each response to its socket the moment the app sends it: under
load, every response is a system call that wakes the client on the other core,
and those wake-ups cost as much as a fast route. Like Redis, which writes its
replies just before it waits for new input, this transport keeps what one turn
of the loop wrote and sends it when that turn's work is done (one `call_soon`
for all connections): the same bytes, in the same order per connection, a few
microseconds later, and far fewer wake-ups. A large write (a video download,
a long stream) goes out at once, so flow control still sees it.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_FLUSH_NOW_BYTES = 64 * 1024


class _Turn:
    """The connections that wrote during this turn of one event loop."""

    __slots__ = ("_waiting",)

    def __init__(self) -> None:
        self._waiting: list[BatchedTransport] = []

    def add(self, transport: BatchedTransport) -> None:
        if not self._waiting:  # writes happen on the loop's own thread: it is running
            asyncio.get_running_loop().call_soon(self.flush)
        self._waiting.append(transport)

    def flush(self) -> None:
        waiting, self._waiting = self._waiting, []
        for transport in waiting:
            transport.flush()


class BatchedTransport:
    """A socket transport whose writes wait for the end of the loop's turn."""

    __slots__ = ("_inner", "_pending", "_size", "_turn")

    def __init__(self, inner: asyncio.Transport, turn: _Turn) -> None:
        self._inner = inner
        self._turn = turn
        self._pending: list[bytes] = []
        self._size = 0

    def write(self, data: bytes) -> None:
        if not self._pending:
            self._turn.add(self)
        self._pending.append(data)
        self._size += len(data)
        if self._size >= _FLUSH_NOW_BYTES:
            self.flush()

    def writelines(self, chunks: list[bytes]) -> None:  # in order with what waits
        for chunk in chunks:
            self.write(chunk)

    def flush(self) -> None:
        if not self._pending:
            return
        data = b"".join(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending.clear()
        self._size = 0
        if not self._inner.is_closing():
            self._inner.write(data)

    def close(self) -> None:
        self.flush()
        self._inner.close()

    def is_closing(self) -> bool:  # asked on every response: not through __getattr__
        return self._inner.is_closing()

    def __getattr__(self, name: str) -> Any:  # everything else is the socket's own
        return getattr(self._inner, name)


# One turn per event loop; a loop that is gone (a test's server) takes its own with it.
_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Turn] = weakref.WeakKeyDictionary()


class BatchedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, writing through a `BatchedTransport`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        turn = _turns.setdefault(self.loop, _Turn())
        super().connection_made(BatchedTransport(transport, turn))  # type: ignore[arg-type]
