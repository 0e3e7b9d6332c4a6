"""Requests that are not HTTP: refused by the parser, answered in the error envelope."""

from __future__ import annotations

import importlib.util
import json
import socket
from contextlib import closing

import pytest

from emulator.protocol import EmulatorHttpProtocol
from emulator.server import BackgroundServer
from emulator.settings import Settings
from emulator.testing import EmulatorHandle, Tenant


def _raw(emulator: EmulatorHandle, request: bytes) -> tuple[str, dict[str, str], bytes]:
    host, port = emulator.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):  # the server closes the connection
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return status, headers, body


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"FOO /api/v1/models HTTP/1.1\r\nHost: x\r\n\r\n",  # unknown method
        b"GET /api/v1/models HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n",  # control char
        b"GET /api/v1/\xffmodels HTTP/1.1\r\nHost: x\r\n\r\n",  # raw non-ASCII path
        b"not http at all\r\n\r\n",
    ],
)
def test_malformed_requests_get_the_error_envelope(
    emulator: EmulatorHandle, request_bytes: bytes
) -> None:
    status, headers, body = _raw(emulator, request_bytes)
    assert status == "HTTP/1.1 400 Bad Request"
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    assert headers["x-request-id"].startswith("req_")
    assert "x-emulator-version" in headers
    assert int(headers["content-length"]) == len(body)
    error = json.loads(body)["error"]
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "malformed_http_request"
    assert error["param"] is None
    assert "not valid HTTP/1.1" in error["message"]


def test_a_url_too_long_to_parse_is_414_in_the_envelope(emulator: EmulatorHandle) -> None:
    path = b"/api/v1/generation/" + b"x" * 66_000
    status, headers, body = _raw(emulator, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == "HTTP/1.1 414 URI Too Long" and headers["x-request-id"].startswith("req_")
    error = json.loads(body)["error"]
    assert (error["type"], error["code"]) == ("invalid_request_error", "uri_too_long")
    assert "66019 bytes" in error["message"] and "JSON body" in error["message"]


def test_the_server_still_answers_after_a_malformed_request(emulator: EmulatorHandle) -> None:
    _raw(emulator, b"FOO / HTTP/1.1\r\nHost: x\r\n\r\n")
    status, _, body = _raw(
        emulator, b"GET /api/v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    assert status == "HTTP/1.1 200 OK"
    assert json.loads(body)["object"] == "list"


def test_a_malformed_request_pipelined_behind_a_whole_one_waits_for_its_answer(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    # uvicorn answered the 400 at once and closed: the chat request was served and
    # billed, but its answer was lost and the client read the 400 in its place.
    body = json.dumps({"model": "emulator/echo", "messages": [{"role": "user", "content": "hi"}]})
    chat = (
        f"POST /api/v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {tenant.api_key}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    status, _, rest = _raw(emulator, chat + chat + b"FOO / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == "HTTP/1.1 200 OK"
    answers = rest.split(b"HTTP/1.1 ")
    assert [a[:3] for a in answers[1:]] == [b"200", b"400"]
    assert b'"content":"hi"' in answers[0] and b'"content":"hi"' in answers[1]
    assert b'"code": "malformed_http_request"' in answers[2]
    with tenant.client() as c:
        assert len(c.get("/ai-gateway/usage").json()["data"]) == 2


def test_without_uvloop_the_protocol_still_serves_on_asyncio(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As on Windows, where uvloop does not exist but httptools does."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvloop" else real(name, *a)
    )
    server = BackgroundServer(Settings(db=":memory:"))
    assert server.server.config.loop == "asyncio"
    assert server.server.config.http is EmulatorHttpProtocol
    server.start()
    try:
        with closing(EmulatorHandle(server.url)) as handle:
            status, _, body = _raw(handle, b"FOO / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert status == "HTTP/1.1 400 Bad Request"
            assert json.loads(body)["error"]["code"] == "malformed_http_request"
            status, _, body = _raw(
                handle, b"GET /api/v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            assert status == "HTTP/1.1 200 OK" and json.loads(body)["object"] == "list"
    finally:
        server.stop()
