"""Hot routes served straight on ASGI, in front of litestar.

Clients call a few routes in tight loops: chat completions, responses, the poll
of a generation, and the catalog every SDK reads first. On a bare route,
litestar's per-request machinery (routing tree, signature model, dependency
injection, response object) costs two thirds of the time; these routes skip
it. Everything else is as for any route: `web.admit` authenticates, counts the
request and applies the faults, errors go out in the same envelope, and the
outer layers (request id, journal, CORS) wrap them like the rest.

They are still declared to litestar, which builds the OpenAPI document from
the declarations and answers the other methods of their paths (405,
OPTIONS). They write their own journal entries, from the request and reply
they hold. A declaration's handler hands its request to the direct handler
(`serve_declared`), so the route also works in an app without this layer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import msgspec
from litestar import Request, Response
from litestar.response.streaming import ASGIStreamingResponse
from litestar.types import ASGIApp, Receive, Scope, Send

from emulator.auth.credentials import Caller, RouteAuth
from emulator.error_handlers import translate, validation_error
from emulator.errors import MAX_BODY_BYTES, ClientClosedRequest, body_too_large
from emulator.journal.capture import record_direct, teed
from emulator.query_checks import QueryRules, check_query, takes_integer
from emulator.web import Reply, admit, current_caller, error_reply, runtime_of

if TYPE_CHECKING:
    from emulator.runtime import Runtime

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


@dataclass(slots=True)  # not frozen: a frozen init costs a microsecond
class DirectRequest:
    rt: Runtime
    scope: Scope
    headers: dict[str, str]  # lower-case names
    body: bytes
    param: str  # the path parameter of a route that ends in one, else ""

    @property
    def caller(self) -> Caller:
        return current_caller(self.rt, self.scope["state"])

    def query(self, name: str, annotation: Any) -> Any:
        """Query parameter `name` as `annotation`, converted and checked as litestar does
        for a route's parameter, an integer as written and sent once (`query_checks`);
        None when not sent."""
        written = self.scope.get("query_string", b"")
        if not written:  # the usual case: nothing to parse, for each of a route's names
            return None
        query = parse_qsl(written.decode("latin-1"), keep_blank_values=True)
        raw = dict(query).get(name)
        if raw is None:
            return None
        integers = frozenset([name]) if takes_integer(annotation) else frozenset()
        check_query(QueryRules(frozenset([name]), integers), query)
        try:
            return msgspec.convert(raw, annotation, strict=False)
        except msgspec.ValidationError as exc:
            message = str(exc).split(" - ")[0]
            raise validation_error([{"key": name, "message": message, "source": "query"}]) from exc

    def base_url(self) -> str:
        """Where the client reached us (for the URLs of media), as litestar's `base_url`."""
        scope = self.scope
        host = self.headers.get("host")
        if host is None:
            name, port = scope.get("server") or ("127.0.0.1", 8787)
            host = f"{name}:{port}"
        return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}".rstrip("/")


@dataclass(frozen=True)
class DirectRoute:
    method: str
    path: str  # exact, or ending in "/{}": one path parameter as the last segment
    auth: RouteAuth
    handle: Callable[[DirectRequest], Reply]

    @property
    def opt(self) -> dict[str, Any]:
        """The litestar declaration's metadata: the same auth."""
        return {"auth": self.auth}


def with_direct_routes(inner: ASGIApp, rt: Runtime, routes: Sequence[DirectRoute]) -> ASGIApp:
    """Serve `routes` here; every other request goes on to `inner` (litestar)."""
    exact = {(r.method, r.path): r for r in routes if not r.path.endswith("/{}")}
    prefixed = [(r.method, r.path[:-2], r) for r in routes if r.path.endswith("/{}")]

    def match(method: str, path: str) -> tuple[DirectRoute, str] | None:
        route = exact.get((method, path))
        if route is not None:
            return route, ""
        for route_method, prefix, route in prefixed:
            if route_method == method and path.startswith(prefix):
                param = path[len(prefix) :]
                if param and "/" not in param:
                    return route, param
        return None

    async def handler(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # type: ignore[comparison-overlap]
            await inner(scope, receive, send)
            return
        path = scope["path"]
        if len(path) > 1 and path[-1] == "/":  # litestar ignores a trailing slash too
            path = path[:-1]
        found = match(scope["method"], path)  # type: ignore[typeddict-item]
        if found is None:
            await inner(scope, receive, send)
            return
        route, param = found
        scope["path"] = path  # one path for fault rules and the journal
        started, at = time.perf_counter(), rt.clock.now()
        body: list[bytes] = []  # the request's, once read
        reply = await _answer(rt, route, param, scope, receive, body)
        if not rt.journal.size:
            await send_reply(reply, scope, receive, send)
            return
        sent: list[bytes] = [reply.body]
        if reply.stream is not None:
            sent.clear()
            reply.stream = teed(reply.stream, sent)
        try:
            await send_reply(reply, scope, receive, send)
        finally:
            headers = [(b"content-type", reply.media_type.encode()), *_encoded(reply)]
            request_body = body[0] if body else b""
            record_direct(rt.journal, scope, at, started, request_body, reply.status, headers, sent)

    return handler


async def _answer(
    rt: Runtime,
    route: DirectRoute,
    param: str,
    scope: Scope,
    receive: Receive,
    body: list[bytes],
) -> Reply:
    method, path = scope["method"], scope["path"]  # type: ignore[typeddict-item]
    # A header sent twice: the first, as litestar's routes read it (one credential wherever).
    sent = reversed(list(scope["headers"]))
    headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in sent}

    async def read_body() -> bytes:
        if not body:
            body.append(await _read_body(headers, receive))
        return body[0]

    try:
        state = scope.setdefault("state", {})
        await admit(rt, route.auth, state, headers, method, path, read_body, receive)
        raw = await read_body() if method in _BODY_METHODS else b""
        return route.handle(DirectRequest(rt, scope, headers, raw, param))
    except Exception as exc:  # the envelope, as litestar's exception handlers give it
        return error_reply(translate(method, path, exc))


async def _read_body(headers: dict[str, str], receive: Receive) -> bytes:
    announced = headers.get("content-length", "")
    if announced.isdigit() and int(announced) > MAX_BODY_BYTES:
        raise body_too_large()
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client left before sending it all
            raise ClientClosedRequest()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise body_too_large()
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def send_reply(reply: Reply, scope: Scope, receive: Receive, send: Send) -> None:
    if reply.stream is not None:
        # litestar's streaming response: it also stops the stream when the client leaves.
        streaming = ASGIStreamingResponse(
            iterator=reply.stream,
            status_code=reply.status,
            headers=reply.stream_headers(),
        )
        await streaming(scope, receive, send)
        return
    headers = [
        (b"content-type", reply.media_type.encode()),
        (b"content-length", str(len(reply.body)).encode()),
        *_encoded(reply),
    ]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body, "more_body": False})


def _encoded(reply: Reply) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode(), value.encode()) for name, value in reply.headers.items()]


async def serve_declared(request: Request[Any, Any, Any], route: DirectRoute) -> Response[Any]:
    """The litestar declaration's handler: litestar has authenticated the request."""
    direct = DirectRequest(
        runtime_of(request),
        request.scope,
        dict(request.headers.items()),
        await request.body(),
        next(iter(request.path_params.values()), ""),
    )
    return route.handle(direct).response()
