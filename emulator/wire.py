"""The outermost layer of every answer: request id (also as Anthropic's `request-id` on
its format's routes), emulator version, CORS, and HEAD wherever GET is served.

It wraps the app's whole ASGI handler, so 404s and framework errors get the
same headers as routed answers, and it costs a few microseconds a request:
raw header tuples, no parsing unless a browser sent an `Origin`.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable
from typing import cast

from litestar.types import ASGIApp, Message, Receive, Scope, Send

from emulator import __version__
from emulator.control_origins import control_refusal
from emulator.errors import EmulatorError

EXPOSED = (
    b"X-Request-Id, X-Emulator-Version, X-Generation-Id, Retry-After, retry-after-ms, "
    b"X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Idempotent-Replayed, "
    b"x-should-retry, request-id, Content-Range, Accept-Ranges, ETag"
)
# Anthropic's SDKs read a request's id from `request-id` (`_request_id`, `requestID`).
ANTHROPIC_PATHS = "/api/v1/messages"
CONTROL_PATHS = "/_emulator"
ALLOWED_METHODS = b"GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"


def _single_slashes(scope: Scope) -> Scope:
    """The path as litestar routes it (`//` is `/`), for every layer before it: the
    journal, HEAD and OPTIONS, the direct routes and the rate limits see that path."""
    path = re.sub("/{2,}", "/", scope["path"])
    raw = re.sub(b"/{2,}", b"/", scope.get("raw_path") or path.encode())
    return cast(Scope, {**scope, "path": path, "raw_path": raw})


def with_wire_headers(
    inner: ASGIApp,
    new_request_id: Callable[[], str],
    allow: Callable[[str], str | None],
    control_origins: frozenset[str] | None = None,
    check_hosts: bool = False,
) -> ASGIApp:
    """`allow(path)` gives the `Allow` header of a path (None: no such route).
    `control_origins`: the origins named to call the control plane besides the
    loopback ones (`emulator.control_origins`); None when an admin token guards it.
    `check_hosts`: the control plane answers only under this machine's names."""
    version = (b"x-emulator-version", __version__.encode())

    async def handler(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # type: ignore[comparison-overlap]
            await inner(scope, receive, send)
            return
        if "//" in scope["path"]:
            scope = _single_slashes(scope)
        try:
            request_id = new_request_id()  # now and then a write: a block of numbers
        except sqlite3.DatabaseError as exc:
            await refuse_unavailable_state(exc, scope, receive, send, [version])
            return
        scope.setdefault("state", {})["request_id"] = request_id
        extra = [(b"x-request-id", request_id.encode()), version]
        if scope["path"].startswith(ANTHROPIC_PATHS):
            extra.append((b"request-id", extra[0][1]))
        origin = _header(scope, b"origin")
        if control_origins is not None and scope["path"].startswith(CONTROL_PATHS):
            host = _header(scope, b"host")
            refused = control_refusal(
                None if host is None else host.decode("latin-1"),
                None if origin is None else origin.decode("latin-1"),
                control_origins,
                check_hosts,
            )
            if refused is not None:  # no CORS headers: the page cannot read it either
                await _refuse(refused, extra, scope, receive, send)
                return
        if origin is not None:
            if scope.get("method") == "OPTIONS" and _header(
                scope, b"access-control-request-method"
            ):
                await _preflight(scope, send, extra)
                return
            extra += [
                (b"access-control-allow-origin", b"*"),
                (b"access-control-expose-headers", EXPOSED),
                (b"vary", b"Origin"),
            ]

        method = scope.get("method")
        methods = allow(scope["path"]) if method in ("OPTIONS", "HEAD") else None
        if methods is not None and method == "OPTIONS":
            # answered here: litestar's own OPTIONS may miss a method
            extra.append((b"allow", allow_header(methods.split(", ")).encode()))
            await _no_content(send, extra)
            return
        if methods is not None and method == "HEAD" and _get_only(methods):
            # RFC 9110 9.3.2: HEAD is GET without the body (`wait-on`, `curl -I` probe so).
            scope["state"]["sent_method"] = "HEAD"  # for the journal
            scope = cast(Scope, {**scope, "method": "GET"})
            send = _headers_only(send)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                rate = scope["state"].get("rate_limit_headers", ())  # set by the auth hook
                headers = [*message.get("headers", ()), *extra, *rate]
                if message["status"] == 405:
                    headers += _allow_of(scope["path"], headers, allow)
                message["headers"] = headers
            await send(message)

        await inner(scope, receive, send_with_headers)

    return handler


def _allow_of(
    path: str, headers: list[tuple[bytes, bytes]], allow: Callable[[str], str | None]
) -> list[tuple[bytes, bytes]]:
    """RFC 9110 15.5.6: a 405 lists the methods its path allows; one a fault rule
    injected too, as the framework's own does."""
    if any(name.lower() == b"allow" for name, _ in headers):
        return []
    methods = allow(path)
    return [(b"allow", allow_header(methods.split(", ")).encode())] if methods else []


def allow_header(methods: Iterable[str]) -> str:
    """An `Allow` header: sorted (the same in every process), HEAD wherever GET is."""
    named = {m.strip() for m in methods}
    if "GET" in named:
        named.add("HEAD")
    return ", ".join(sorted(named))


def _get_only(methods: str) -> bool:
    """A path whose GET answers HEAD here (a route that declares HEAD answers it itself)."""
    named = methods.split(", ")
    return "GET" in named and "HEAD" not in named


def _headers_only(send: Send) -> Send:
    """GET's status and headers (`Content-Length` too), and an empty body."""
    ended = False

    async def send_head(message: Message) -> None:
        nonlocal ended
        if message["type"] == "http.response.body":
            if ended:
                return
            ended = True
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    return send_head


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


async def _preflight(scope: Scope, send: Send, extra: list[tuple[bytes, bytes]]) -> None:
    """Browsers ask before a cross-origin call with a bearer: say yes to anything."""
    asked = _header(scope, b"access-control-request-headers") or b"*"
    headers = [
        *extra,
        (b"access-control-allow-origin", b"*"),
        (b"access-control-allow-methods", ALLOWED_METHODS),
        (b"access-control-allow-headers", asked),
        (b"access-control-max-age", b"600"),
    ]
    await _no_content(send, headers)


async def _refuse(
    error: EmulatorError,
    extra: list[tuple[bytes, bytes]],
    scope: Scope,
    receive: Receive,
    send: Send,
) -> None:
    """An error answered before the app, in its envelope, with the wire's headers."""
    from emulator.direct import send_reply  # imported here: it imports this module's users
    from emulator.web import error_reply

    reply = error_reply(error)
    reply.headers.update((name.decode(), value.decode()) for name, value in extra)
    await send_reply(reply, scope, receive, send)


async def refuse_unavailable_state(
    exc: sqlite3.DatabaseError,
    scope: Scope,
    receive: Receive,
    send: Send,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """The state file failed before the app could answer (another program holds its
    lock): 503 `state_unavailable` in the envelope, as the app's handlers say it.
    Anything else SQLite raised is a bug and goes on up."""
    from emulator.error_handlers import is_state_trouble, state_unavailable

    if not is_state_trouble(exc):
        raise exc
    error = state_unavailable(str(scope.get("method", "")), scope["path"], exc)
    extra = extra or [(b"x-emulator-version", __version__.encode())]
    await _refuse(error, extra, scope, receive, send)


async def _no_content(send: Send, headers: list[tuple[bytes, bytes]]) -> None:
    # No Content-Length: a 204 must not send one (RFC 9110 8.6); uvicorn frames it bare.
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def route_methods(routes: list[tuple[str, set[str]]]) -> Callable[[str], str | None]:
    """The methods of the route a concrete path lands on, as litestar routes it:
    a literal segment wins over a parameter (`/voices/presets` before `/voices/{id}`).
    The table is built on the first OPTIONS or HEAD request, not at start-up."""
    table: list[tuple[re.Pattern[str], list[bool], str]] = []

    def build() -> None:
        for template, methods in routes:
            parts = template.strip("/").split("/")
            pattern = "/".join(
                (".+" if ":path}" in part else "[^/]+") if part.startswith("{") else re.escape(part)
                for part in parts
            )
            literal = [not part.startswith("{") for part in parts]
            table.append((re.compile(f"^/{pattern}/?$"), literal, ", ".join(sorted(methods))))

    def allow(path: str) -> str | None:
        if not table:
            build()
        matches = [(literal, methods) for regex, literal, methods in table if regex.match(path)]
        return max(matches)[1] if matches else None

    return allow
