"""Requests that offer another protocol (`Upgrade: h2c`) are served as HTTP/1.1, body
and all.

Java's `HttpClient` offers HTTP/2 on every cleartext request (`Connection:
Upgrade, HTTP2-Settings`, `Upgrade: h2c`), and so does `curl --http2`. A server
may decline the offer and answer in HTTP/1.1 (RFC 9110, section 7.8), which is
what uvicorn means to do; but httptools stops reading at the end of such a
request's headers, so the app got the request without its body (uvicorn's
issue 2722). Here the body is read apart, by a parser of its own fed the
request's framing headers, and the connection then goes on with a fresh
parser. WebSocket upgrades are uvicorn's as before.
"""

from __future__ import annotations

import httptools
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT

from emulator.batched_writes import BatchedHttpToolsProtocol

_FRAMING = (b"content-length", b"transfer-encoding")
INVALID = "Invalid HTTP request received."  # uvicorn's words for a request it cannot parse


class UpgradeDecliningProtocol(BatchedHttpToolsProtocol):
    body_reader: _Body | None = None  # the body of a request whose upgrade was declined

    def data_received(self, data: bytes) -> None:
        if self.body_reader is not None:
            self._read_body(data)
            return
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.logger.warning(INVALID)
            self.send_400_response(INVALID)
        except httptools.HttpParserUpgrade as upgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
                return
            # Declined: what follows the headers is this request's body, then the next
            # request, read by a fresh parser (this one stays in its upgrade state).
            rest = data[upgrade.args[0] :]
            self.parser = httptools.HttpRequestParser(self)
            if _has_body(self.headers):
                self.body_reader = _Body(self, self.headers)
                self._read_body(rest)
            elif rest:
                self.data_received(rest)

    def on_message_complete(self) -> None:
        if self.parser.should_upgrade() and not self._should_upgrade() and _has_body(self.headers):
            return  # its body is still to come: `_Body` ends the request
        super().on_message_complete()

    def _read_body(self, data: bytes) -> None:
        reader = self.body_reader
        assert reader is not None
        try:
            reader.parser.feed_data(data)
        except httptools.HttpParserError:  # bad framing, or a request sent before the answer
            self.body_reader = None
            self.logger.warning(INVALID)
            self.send_400_response(INVALID)
            return
        if reader.done:
            self.body_reader = None


class _Body:
    """Reads one request's body into its cycle, as uvicorn's own `on_body` does."""

    def __init__(self, protocol: UpgradeDecliningProtocol, headers: list[tuple[bytes, bytes]]):
        self.protocol = protocol
        self.cycle = protocol.cycle
        self.done = False
        self.parser = httptools.HttpRequestParser(self)
        framing = [name + b": " + value + b"\r\n" for name, value in headers if name in _FRAMING]
        self.parser.feed_data(b"".join([b"POST / HTTP/1.1\r\n", *framing, b"\r\n"]))

    def on_message_begin(self) -> None:
        if self.done:  # the client did not wait for the answer: there is no telling where
            raise ValueError("a request after a declined upgrade, before its answer")

    def on_body(self, body: bytes) -> None:
        if self.cycle.response_complete:
            return
        self.cycle.body += body
        if len(self.cycle.body) > HIGH_WATER_LIMIT:
            self.protocol.flow.pause_reading()
        self.cycle.message_event.set()

    def on_message_complete(self) -> None:
        self.done = True
        self.cycle.more_body = False
        self.cycle.message_event.set()


def _has_body(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name == b"transfer-encoding" and b"chunked" in value.lower():
            return True
        if name == b"content-length" and value.strip() not in (b"", b"0"):
            return True
    return False
