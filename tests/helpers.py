"""Assertions shared by the tests."""

from __future__ import annotations

import base64
import io
import socket
import time
import wave
from typing import Any

import httpx
import jsonschema

from emulator.gateway.routing import Route
from emulator.testing import Tenant

# Between response.created and response.completed, a text answer streams these.
RESPONSES_STREAM_EVENTS = {
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
}


def a_route(**fields: Any) -> Route:
    """A route for tests of the rules on canonical requests: these fields, else plain."""
    plain: dict[str, Any] = {
        "model": "m",
        "provider": "p",
        "wire_format": "chat",
        "status": "up",
        "latency_ms": 1,
        "throughput_tps": 1,
        "max_output_tokens": 100,
        "context_length": 1000,
        "prompt_micros_per_mtok": 1,
        "completion_micros_per_mtok": 1,
    }
    return Route(**{**plain, **fields})


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_error(
    response: httpx.Response, status: int, code: str, type_: str | None = None
) -> dict[str, Any]:
    """The answer is the SPEC section 6 envelope with this status and code."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert {"message", "type", "code", "param"} <= set(error), error
    assert error["code"] == code, error
    if type_ is not None:
        assert error["type"] == type_, error
    assert isinstance(error["message"], str) and len(error["message"]) > 10
    return error


def mp4_boxes(data: bytes, start: int = 0, end: int | None = None) -> dict[str, bytes]:
    """The top-level boxes of an MP4 (or of a box's payload), by type."""
    import struct

    boxes: dict[str, bytes] = {}
    at, end = start, len(data) if end is None else end
    while at + 8 <= end:
        size, kind = struct.unpack(">I4s", data[at : at + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[at + 8 : at + 16])[0]
            header = 16
        if size < header:
            break
        boxes.setdefault(kind.decode("latin-1"), data[at + header : at + size])
        at += size
    return boxes


def mp4_facts(data: bytes) -> tuple[float, int, int]:
    """(duration in seconds, width, height) of an MP4, read from mvhd and tkhd."""
    import struct

    moov = mp4_boxes(data)["moov"]
    inner = mp4_boxes(moov)
    mvhd = inner["mvhd"]
    if mvhd[0] == 1:
        timescale, duration = struct.unpack(">IQ", mvhd[20:32])
    else:
        timescale, duration = struct.unpack(">II", mvhd[12:20])
    tkhd = mp4_boxes(inner["trak"])["tkhd"]
    width, height = struct.unpack(">II", tkhd[-8:])
    return duration / timescale, width >> 16, height >> 16


def scoped_client(tenant: Tenant, scope: str, product: str) -> httpx.Client:
    """A client with a new key of the tenant's that has only `scope`."""
    body = {"name": "scoped", "scopes": [scope], "product": product}
    with httpx.Client(base_url=tenant.base_url, headers=bearer(tenant.user_token)) as keys:
        created = keys.post("/keys", json=body)
    assert created.status_code == 201, created.text
    return httpx.Client(base_url=tenant.base_url, headers=bearer(created.json()["key"]))


def send_part_and_leave(
    url: str, path: str, token: str, body: bytes, chunked: bool = False
) -> None:
    """A POST whose client closes the socket before its body has all arrived: a
    Content-Length 50 bytes over what is sent, or chunks without the closing one."""
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    head = [f"POST {path} HTTP/1.1", f"Host: {host}", f"Authorization: Bearer {token}"]
    head += ["Content-Type: application/json", "Idempotency-Key: left-mid-body"]
    if chunked:
        head.append("Transfer-Encoding: chunked")
        sent = b"%x\r\n%s\r\n" % (len(body), body)
    else:
        head.append(f"Content-Length: {len(body) + 50}")
        sent = body
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall("\r\n".join(head).encode() + b"\r\n\r\n" + sent)
        time.sleep(0.05)  # the server reads what came before it sees the close


def every_page(url: str, limit: int, **params: Any) -> list[dict[str, Any]]:
    """Every item of a list (SPEC section 8), its pages followed from the first; each page
    holds at most `limit`."""
    items: list[dict[str, Any]] = []
    asked: dict[str, Any] = {**params, "limit": limit}
    while True:
        page = httpx.get(url, params=asked).json()
        assert len(page["data"]) <= limit
        items += page["data"]
        if not page["has_more"]:
            return items
        asked["cursor"] = page["next_cursor"]


def documented(document: dict[str, Any], response: httpx.Response, path: str) -> None:
    """`response` is the success its operation declares, and its body conforms."""
    method = response.request.method.lower()
    declared = document["paths"][path][method]["responses"]
    assert str(response.status_code) in declared, (path, method, response.text)
    schema = declared[str(response.status_code)]["content"]["application/json"]["schema"]
    assert "$ref" in schema or "oneOf" in schema, (path, method)
    whole = {**schema, "components": document["components"]}
    jsonschema.validate(response.json(), whole, cls=jsonschema.Draft202012Validator)


def claude_stream(claude: Any, **body: Any) -> tuple[list[Any], Any]:
    """Anthropic's SDK streaming `body` to `/messages`: its events and final message."""
    with claude.messages.stream(**body) as stream:
        events = list(stream)
        return events, stream.get_final_message()


def block_kinds(message: Any) -> list[str]:
    """The types of a messages answer's content blocks, in order."""
    return [block.type for block in message.content]


def wav(seconds: float, rate: int = 16000) -> str:
    """The base64 of a silent mono 16-bit WAV clip `seconds` long."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(bytes(int(seconds * rate) * 2))
    return base64.b64encode(out.getvalue()).decode()


def pdf_of(*pages: str) -> bytes:
    """A PDF whose pages show these texts, a line of each per text line (as a PDF tool
    writes them: a catalog, a page tree, a font, a content stream a page)."""
    count = len(pages)
    kids = " ".join(f"{4 + 2 * n} 0 R" for n in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for n, text in enumerate(pages):
        lines = []
        for row, line in enumerate(text.split("\n")):
            shown = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            lines.append(f"BT /F1 12 Tf 72 {720 - 14 * row} Td ({shown}) Tj ET")
        stream = "\n".join(lines).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * n} 0 R "
            "/Resources << /Font << /F1 3 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)
