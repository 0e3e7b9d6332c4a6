"""The journal's store: the last N requests to /api/*, in memory, newest first.

Recording is cheap (raw bytes, no parsing); what a reader wants to know (model,
provider, error code, idempotency key, replayed) is derived when read. Bodies
are kept up to a cap, and secrets are redacted when read: an API key or user
token never leaves the journal, only its hint.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import msgspec

from emulator.clock import iso

BODY_CAP = 64 * 1024
# An API key or user token: its prefix and at least one character. The fixtures'
# are short (`emu_user_demo`, `sk-emu-broke`), so no minimum length beyond that.
_SECRET = re.compile(rb"(sk-emu-|emu_user_)[A-Za-z0-9_-]+")
# Request and response headers worth keeping (never Authorization).
KEPT_REQUEST_HEADERS = (
    b"content-type", b"idempotency-key", b"x-emulator-fault", b"http-referer", b"x-title",
    b"user-agent",
)  # fmt: skip
KEPT_RESPONSE_HEADERS = (
    b"content-type", b"idempotent-replayed", b"x-generation-id", b"retry-after",
)  # fmt: skip


@dataclass(slots=True)
class Entry:
    id: str
    at_ts: float  # virtual clock; formatted (`at`) when read
    method: str
    path: str
    query: str
    raw_request_headers: Iterable[tuple[bytes, bytes]]
    request_body: bytes = b""
    account_id: str | None = None
    key_id: str | None = None
    status: int = 0
    raw_response_headers: Iterable[tuple[bytes, bytes]] = ()
    response_body: bytes = b""
    truncated: bool = False
    duration_ms: float = 0.0
    provider: str | None = None  # the one that served, as the gateway said (a stream may not)
    seq: int = 0  # the journal's order of recording, set by `Journal.record`: the cursor

    @property
    def at(self) -> str:
        return iso(self.at_ts)

    @property
    def request_headers(self) -> dict[str, str]:
        return _kept(self.raw_request_headers, KEPT_REQUEST_HEADERS)

    @property
    def response_headers(self) -> dict[str, str]:
        return _kept(self.raw_response_headers, KEPT_RESPONSE_HEADERS)

    def summary(self) -> dict[str, Any]:
        headers = self.response_headers
        streamed = headers.get("content-type", "").startswith("text/event-stream")
        request = _json(self.request_body)
        if streamed:
            response, error = _stream_facts(self.response_body)
        else:
            response = _json(self.response_body)
            error = response.get("error") if isinstance(response, dict) else None
        return {
            "object": "journal_entry",
            "id": self.id,
            "at": self.at,
            "method": self.method,
            "path": self.path,
            "query": redact(self.query.encode("latin-1")).decode("latin-1") or None,
            "status": self.status,
            "duration_ms": round(self.duration_ms, 3),
            "account_id": self.account_id,
            "key_id": self.key_id,
            "model": _field(request, "model"),
            "provider": self.provider or _field(response, "provider"),
            "idempotency_key": self.request_headers.get("idempotency-key"),
            "replayed": headers.get("idempotent-replayed") == "true",
            "error_code": error.get("code") if isinstance(error, dict) else None,
            "stream": streamed,
        }

    def detail(self) -> dict[str, Any]:
        return {
            **self.summary(),
            "request": {"headers": self.request_headers, "body": _text(self.request_body)},
            "response": {
                "headers": self.response_headers,
                "body": _text(self.response_body),
                "truncated": self.truncated,
            },
        }


def _kept(raw: Iterable[tuple[bytes, bytes]], names: tuple[bytes, ...]) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in raw if k.lower() in names}


def _json(body: bytes) -> Any:
    if not body or body[:1] not in (b"{", b"["):
        return None
    try:  # as the routes read it: a body they refuse (a lone surrogate, for one) is text
        return msgspec.json.decode(body)
    except (ValueError, RecursionError):  # kept as text: a journal shows what was sent
        return None


def _stream_facts(stream: bytes) -> tuple[Any, Any]:
    """A stream's first event (chat chunks and a responses stream's first `response` name
    the provider) and the last error it reports, in any of the three formats."""
    first = error = None
    for line in stream.split(b"\n"):
        if not line.startswith(b"data: {"):
            continue
        if first is not None and b'"error"' not in line and b"response.failed" not in line:
            continue
        data = _json(line[6:])
        if not isinstance(data, dict):
            continue
        if first is None:
            first = data.get("response", data)
        error = _event_error(data) or error
    return first, error


def _event_error(event: dict[str, Any]) -> dict[str, Any] | None:
    """The error of a chat chunk, a responses `error` or `response.failed` event, or a
    messages `error` event (whose `type` is its code)."""
    if event.get("type") == "response.failed":
        event = event.get("response") or {}
    elif event.get("type") == "error" and "code" in event:
        return event
    found = event.get("error")
    if isinstance(found, dict) and "code" not in found and "type" in found:
        return {"code": found["type"]}
    return found if isinstance(found, dict) else None


def _field(data: Any, name: str) -> Any:
    return data.get(name) if isinstance(data, dict) else None


def redact(body: bytes) -> bytes:
    """Every API key and user token in `body` cut to its prefix: `sk-emu-...[redacted]`."""
    return _SECRET.sub(lambda m: m.group(1) + b"...[redacted]", body)


def _text(body: bytes) -> Any:
    """A JSON body as JSON, anything else as text; secrets redacted either way."""
    clean = redact(body)
    parsed = _json(clean)
    if parsed is not None:
        return parsed
    return clean.decode("utf-8", errors="replace") if clean else None


@dataclass(frozen=True)
class Filters:
    path: str | None = None  # a glob
    method: str | None = None
    status: int | None = None
    key_id: str | None = None
    account_id: str | None = None
    # Inclusive bounds in the wire's form (`iso`, UTC, milliseconds), so that
    # comparing them with an entry's `at` compares instants.
    since: str | None = None
    until: str | None = None

    def accepts(self, e: Entry) -> bool:
        return (
            (self.path is None or fnmatchcase(e.path, self.path))
            and (self.method is None or e.method == self.method)
            and (self.status is None or e.status == self.status)
            and (self.key_id is None or e.key_id == self.key_id)
            and (self.account_id is None or e.account_id == self.account_id)
            and (self.since is None or e.at >= self.since)
            and (self.until is None or e.at <= self.until)
        )


class Journal:
    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: deque[Entry] = deque(maxlen=max(size, 1))
        self._lock = threading.Lock()
        self._recorded = 0  # never goes back (not even on `clear`), so a cursor stays valid

    def record(self, entry: Entry) -> None:
        if self.size:
            with self._lock:
                self._recorded += 1
                entry.seq = self._recorded
                self._entries.append(entry)

    def query(self, filters: Filters, limit: int, before: int | None = None) -> list[Entry]:
        """Up to `limit` matching entries, newest first; with `before`, only those
        recorded before the entry of that `seq`."""
        with self._lock:
            entries = list(self._entries)
        found = []
        for entry in reversed(entries):
            if before is not None and entry.seq >= before:
                continue
            if entry.status and filters.accepts(entry):
                found.append(entry)
                if len(found) == limit:
                    break
        return found

    def get(self, entry_id: str) -> Entry | None:
        with self._lock:
            return next((e for e in self._entries if e.id == entry_id), None)

    def clear(self) -> int:
        with self._lock:
            count = len(self._entries)
            self._entries.clear()
            return count
