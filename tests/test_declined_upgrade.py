"""Requests offering HTTP/2 (`Upgrade: h2c`, as Java's `HttpClient` and `curl --http2`
send them) are answered in HTTP/1.1 with their bodies read, on a connection that
goes on serving."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from emulator.testing import Tenant

H2C = {
    "Connection": "Upgrade, HTTP2-Settings",
    "Upgrade": "h2c",
    "HTTP2-Settings": "AAMAAABkAARAAAAAAAIAAAAA",
}
CHAT = {"model": "emulator/echo", "messages": [{"role": "user", "content": "over h2c"}]}


def connect(tenant: Tenant) -> http.client.HTTPConnection:
    url = urlsplit(tenant.base_url)
    return http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)


def answer(conn: http.client.HTTPConnection) -> tuple[int, dict]:
    response = conn.getresponse()
    return response.status, json.loads(response.read())


def headers(tenant: Tenant, **more: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tenant.api_key}", "Content-Type": "application/json", **more}


def pieces(body: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_after_an_upgrade_offer_is_read_and_the_connection_goes_on(
    tenant: Tenant, chunked: bool
) -> None:
    conn = connect(tenant)
    body = json.dumps(CHAT).encode()
    path = urlsplit(tenant.base_url).path + "/chat/completions"
    if chunked:  # each piece its own write: the body arrives over several reads
        conn.request("POST", path, pieces(body, 16), headers(tenant, **H2C), encode_chunked=True)
    else:
        conn.request("POST", path, body, headers(tenant, **H2C))
    status, answered = answer(conn)
    assert status == 200, answered
    assert answered["choices"][0]["message"]["content"] == "over h2c"
    # The same connection serves the next request, with or without an offer.
    for offer in ({}, H2C):
        conn.request("POST", path, body, headers(tenant, **offer))
        status, answered = answer(conn)
        assert status == 200 and answered["choices"][0]["message"]["content"] == "over h2c"
    conn.close()


def test_an_offer_without_a_body_is_served_and_the_connection_goes_on(tenant: Tenant) -> None:
    conn = connect(tenant)
    path = urlsplit(tenant.base_url).path + "/ai-gateway/balance"
    for offer in (H2C, {}, H2C):
        conn.request("GET", path, headers=headers(tenant, **offer))
        status, balance = answer(conn)
        assert status == 200 and balance["balance_micros"] == tenant.balance_micros
    conn.close()


def test_a_request_sent_before_the_answer_to_an_offer_is_refused(tenant: Tenant) -> None:
    """A client that offers an upgrade waits for the answer (RFC 9113, section 3.2):
    one that does not has its next request refused, not mistaken for the body."""
    url = urlsplit(tenant.base_url)
    body = json.dumps(CHAT).encode()
    head = (
        f"POST {url.path}/chat/completions HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {tenant.api_key}\r\nContent-Type: application/json\r\n"
        "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AA\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    follow = b"GET /api/v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection((url.hostname or "", url.port or 80), timeout=10) as sock:
        sock.sendall(head + chunked + follow)
        received = b""
        while chunk := sock.recv(65536):  # the server closes the connection
            received += chunk
    assert received.startswith(b"HTTP/1.1 200 OK")  # the whole request is answered
    assert b"HTTP/1.1 400 Bad Request" in received  # what came after it is not
