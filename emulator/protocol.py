"""The HTTP protocol `emulator serve` runs: batched writes, declined upgrades served
with their bodies, and malformed requests answered in the error envelope.

A request that is not valid HTTP/1.1 (an unknown method such as `FOO`, a control
character in a header, raw non-ASCII bytes in the path) never reaches the app:
httptools refuses it while parsing. uvicorn then answers with a plain-text
400; here the answer is SPEC section 6's envelope (400
`invalid_request_error` / `malformed_http_request`; a URL too long to parse is
414 `uri_too_long`) with the headers every answer carries, so a client that
parses errors as JSON reads this one too.

A malformed request pipelined behind whole ones (on one keep-alive connection)
waits for their answers: they are answered first, in order, then the 400, then
the connection closes (uvicorn closed it at once, so a request already served
and billed lost its answer, and the client read the 400 as that answer).
"""

from __future__ import annotations

import json
from typing import Any

from emulator import __version__
from emulator.declined_upgrade import UpgradeDecliningProtocol
from emulator.errors import InvalidRequest

MALFORMED = (
    "The request is not valid HTTP/1.1: its request line or a header could not be "
    "parsed (an unknown method, a control character in a header, or raw non-ASCII "
    "bytes in the path). Percent-encode the path and send standard methods and headers."
)

# httptools parses a URL's parts with 16-bit offsets: a longer one cannot be served.
MAX_URL = 65_535
TOO_LONG = (
    "The request's URL is {} bytes long; at most 65535 are served. Send long values in "
    "a JSON body, not in the query string."
)


class EmulatorHttpProtocol(UpgradeDecliningProtocol):
    malformed_waits = False  # a 400 to send once the requests before it are answered

    def data_received(self, data: bytes) -> None:
        if not self.malformed_waits:  # after a malformed request nothing more is read
            super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete and not cycle.more_body:
            # A whole request before it is still being answered: answer it first.
            self.malformed_waits = True
            self.flow.pause_reading()
            return
        self._send_malformed()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.malformed_waits and not self.pipeline and self.cycle.response_complete:
            self._unset_keepalive_if_required()
            if not self.transport.is_closing():
                self._send_malformed()

    def _send_malformed(self) -> None:
        if len(getattr(self, "url", b"")) > MAX_URL:
            status = b"414 URI Too Long"
            error = InvalidRequest(TOO_LONG.format(len(self.url)), code="uri_too_long")
        else:
            status = b"400 Bad Request"
            error = InvalidRequest(MALFORMED, code="malformed_http_request")
        body = json.dumps(error.envelope()).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            (b"x-emulator-version", __version__.encode()),
        ]
        request_id = _new_request_id(self.config.app)
        if request_id is not None:
            headers.append((b"x-request-id", request_id.encode()))
        lines = [b"HTTP/1.1 " + status + b"\r\n"]
        for name, value in [*self.server_state.default_headers, *headers]:
            lines.append(name + b": " + value + b"\r\n")
        self.transport.write(b"".join([*lines, b"\r\n", body]))
        self.transport.close()


def _new_request_id(app: Any) -> str | None:
    """The next request id of the emulator this protocol serves (None for another app)."""
    runtime = getattr(getattr(app, "state", None), "runtime", None)
    return None if runtime is None else str(runtime.ids.request_id())
