"""The thin HTTP glue every route shares: the auth hook, dependencies, JSON answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import UnionType
from typing import Annotated, Any

import msgspec
from litestar import Request, Response
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import QueryParameter
from litestar.response import Stream
from litestar.types import Receive
from pydantic import BaseModel

from emulator.auth.credentials import Caller, RouteAuth, RouteKind, authenticate, check_admin
from emulator.bodies import WireModel
from emulator.errors import EmulatorError, InternalError, UnsupportedMediaType
from emulator.faults import apply as fault_apply
from emulator.faults import header as fault_header
from emulator.faults.rules import Subject
from emulator.gateway.routing import provider_slugs
from emulator.query_checks import QUERY_RULES, check_query
from emulator.runtime import Runtime

JSON = "application/json"
API_PREFIX = "/api/v1"
DOCS_PREFIX = "/schema"
DEFAULT_RPM = 600
# Query parameters of every list (SPEC section 8), documented with their bounds.
Cursor = Annotated[
    str | None, QueryParameter(description="The `next_cursor` of the previous page, unchanged.")
]


# Handler parameters filled by the app's dependencies (`rt`, `caller`).
RuntimeDep = NamedDependency[Runtime]
CallerDep = NamedDependency[Caller]
BEARER: list[dict[str, list[str]]] = [{"bearer": []}]


def auth_opt(kind: RouteKind, *scopes: str) -> dict[str, Any]:
    """Route metadata read by `authenticate_request`: e.g. `opt=auth_opt("api_key", "video")`."""
    return {"auth": RouteAuth(kind, scopes)}


def runtime_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Runtime:
    rt: Runtime = connection.app.state.runtime
    return rt


async def authenticate_request(connection: Request[Any, Any, Any]) -> None:
    """Before every litestar handler (and before its body is read): authenticate by the
    route's `opt["auth"]`. A litestar guard would do the same, but costs a copy of the
    handler on every request."""
    auth: RouteAuth | None = connection.route_handler.opt.get("auth")
    if auth is None:
        if connection.url.path.startswith(DOCS_PREFIX):
            return
        # Fail closed: every route of ours must say what it takes.
        raise InternalError(f"The route {connection.url.path} declares no auth; this is a bug.")
    if auth.kind == "optional" and not _may_fault(runtime_of(connection), _sent_fault(connection)):
        _check_query(connection)
        return  # before the headers are parsed: the catalog is hot
    if auth.by_query is not None:
        auth = auth.for_query(connection.query_params.keys())
    await admit(
        runtime_of(connection),
        auth,
        connection.scope["state"],  # litestar's `connection.state`, without its wrapper
        connection.headers,
        connection.method,
        connection.url.path,
        connection.body,
        connection.receive,
    )
    _check_query(connection)


def _check_query(connection: Request[Any, Any, Any]) -> None:
    """What litestar's conversion lets through: `limit=2.0`, `limit=5&limit=50`
    (`query_checks`)."""
    if connection.scope["query_string"]:
        rules = connection.route_handler.opt.get(QUERY_RULES)
        if rules is not None and (rules.names or rules.closed):
            check_query(rules, connection.query_params.multi_items())


async def admit(
    rt: Runtime,
    auth: RouteAuth,
    state: dict[str, Any],
    headers: Mapping[str, str],
    method: str,
    path: str,
    read_body: Callable[[], Awaitable[bytes]],
    receive: Receive,
) -> None:
    """What every route does before its handler, litestar's or a direct one: refuse a
    compressed body, check the credential, count the request against the rate
    limits, apply the faults. The
    caller lands in `state` (`caller`, and `caller_ids` for the journal)."""
    encoding = headers.get("content-encoding")
    if encoding is not None:
        _check_encoding(encoding)
    if auth.kind == "optional":  # no caller: the catalog; faults apply all the same
        if _may_fault(rt, fault_header.HEADER in headers):
            await _apply_faults(rt, None, headers, method, path, read_body, receive)
        else:
            fault_apply.begin(None)
        return
    if auth.kind == "admin":
        check_admin(
            rt.settings.admin_token,
            headers.get("authorization"),
            headers.get("x-emulator-admin-token"),
        )
        return
    credential = headers.get("authorization") or _api_key_header(headers)
    try:
        caller = authenticate(rt.store, rt.keys, rt.clock, auth, credential)
    except EmulatorError as refused:
        state["caller_ids"] = refused.refused_key
        raise
    state["caller"] = caller
    state["caller_ids"] = (caller.account_id, caller.key.id if caller.key else None)
    state["authenticated"] = (rt.world, auth, credential)
    if auth.scopes == GATEWAY_SCOPES:  # one shared with video keys counts itself
        count_request(rt, caller, state)
    if _may_fault(rt, fault_header.HEADER in headers):
        await _apply_faults(rt, caller, headers, method, path, read_body, receive)
    else:  # nearly every request: no coroutine made
        fault_apply.begin(None)


def _may_fault(rt: Runtime, header_sent: bool) -> bool:
    """Whether a fault rule, or the fault header (when faults are allowed), may act on a
    request."""
    return bool(rt.faults.rules) or (rt.settings.allow_faults and header_sent)


_FAULT_HEADER = fault_header.HEADER.lower().encode()


def _sent_fault(connection: Request[Any, Any, Any]) -> bool:
    """Whether the fault header came, read from the raw headers (litestar's, parsed,
    would cost the hot catalog)."""
    return any(name == _FAULT_HEADER for name, _ in connection.scope["headers"])


async def _apply_faults(
    rt: Runtime,
    caller: Caller | None,
    headers: Mapping[str, str],
    method: str,
    path: str,
    read_body: Callable[[], Awaitable[bytes]],
    receive: Receive,
) -> None:
    """The fault rules and header, before the handler (an error, a delay), and what they
    leave for later points (routes, streams, jobs)."""
    fault = headers.get(fault_header.HEADER) if rt.settings.allow_faults else None
    model = None
    if method == "POST":  # read now: an injected error still journals it
        body = await read_body()
        model = model_of(body) if rt.faults.needs_model() else None
    key = caller.key if caller else None
    subject = Subject(
        path=path,
        method=method,
        account_id=caller.account_id if caller else None,
        key_id=key.id if key else None,
        key_hash=key.secret_hash if key else None,
        model=model,
    )
    header_faults = fault_header.parse(fault, provider_slugs(rt.catalog.view())) if fault else ()
    faults = fault_apply.RequestFaults(rt.faults, subject, tuple(header_faults))
    fault_apply.begin(faults)
    await fault_apply.before_handler(faults, read_body, receive)


def _check_encoding(encoding: str) -> None:
    """Bodies are read as sent: a compressed one is refused, not read as garbled JSON."""
    if encoding.strip().lower() not in ("", "identity"):
        raise UnsupportedMediaType(
            f"Content-Encoding {encoding.strip()!r} is not supported: send the body "
            "uncompressed (no Content-Encoding header).",
            param="Content-Encoding",
        )


def model_of(body: bytes) -> str | None:
    """The `model` of a JSON body, if it has one (for rules that match on it), or the
    first of its `models` when it sends only those."""
    try:
        data = msgspec.json.decode(body)
    # Not UTF-8, or nested too deep: the route's own parsing answers 400 for it.
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    model = data.get("model")
    if model is None:  # `models` alone: the first of them serves (README, routing)
        models = data.get("models")
        model = models[0] if isinstance(models, list) and models else None
    return model if isinstance(model, str) else None


GATEWAY_SCOPES = ("ai.gateway",)


def count_request(rt: Runtime, caller: Caller, state: dict[str, Any]) -> None:
    """Count a gateway request against the key's and the account's rate limits (429 past
    them); its answer carries the standing (`X-RateLimit-*`)."""
    standing = rt.limiter.admit(rt.clock.now(), rate_limits(caller))
    state["rate_limit_headers"] = standing.headers()


def rate_limits(caller: Caller) -> list[tuple[str, int]]:
    """The key's own limit, if it has one, and the account's (read with the key)."""
    rpm = caller.owner.rate_limit_rpm if caller.owner else DEFAULT_RPM
    limits = [(f"account:{caller.account_id}", rpm)]
    if caller.key is not None and caller.key.rate_limit_rpm:
        limits.append((f"key:{caller.key.id}", caller.key.rate_limit_rpm))
    return limits


def provide_runtime(request: Request[Any, Any, Any]) -> Runtime:
    return runtime_of(request)


def caller_of(request: Request[Any, Any, Any]) -> Caller:
    """Who `admit` authenticated for this request, in the state there is now."""
    return current_caller(runtime_of(request), request.scope["state"])


def current_caller(rt: Runtime, state: dict[str, Any]) -> Caller:
    """The request's caller. A reset or a restore may have replaced the state since the
    request was admitted (while its body came, or a fault delayed it): its credential is
    then checked again in the new one, where its key or account may be gone (401),
    rather than used there as it was (a 500 on a missing account, or a charge to it)."""
    caller: Caller = state["caller"]
    world, auth, credential = state["authenticated"]
    if world != rt.world:
        caller = authenticate(rt.store, rt.keys, rt.clock, auth, credential)
        state["caller"], state["authenticated"] = caller, (rt.world, auth, credential)
    return caller


provide_caller = caller_of


def _api_key_header(headers: Mapping[str, str]) -> str | None:
    """Anthropic's SDK sends its key as `x-api-key`: taken as a bearer token."""
    key = headers.get("x-api-key")
    return f"Bearer {key}" if key else None


def attribution(headers: Mapping[str, str], state: dict[str, Any]) -> dict[str, Any]:
    """What a usage event records of the request's headers."""
    return {
        "idempotency_key": headers.get("idempotency-key"),
        "http_referer": headers.get("http-referer"),
        # The OpenRouter SDK sends its own spelling of the title header.
        "x_title": headers.get("x-title") or headers.get("x-openrouter-title"),
        "request_id": state.get("request_id"),
    }


@dataclass(slots=True)  # not frozen: a frozen init costs a microsecond
class Reply:
    """An answer before it meets a framework: a litestar route returns `.response()`,
    a direct route (`emulator.direct`) sends it as it is."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    media_type: str = JSON
    stream: AsyncIterator[bytes] | None = None  # server-sent events instead of `body`

    def stream_headers(self) -> dict[str, str]:
        # Exactly the media type (no charset): clients pick their parser by it.
        return {**self.headers, "content-type": self.media_type}

    def response(self) -> Response[Any]:
        if self.stream is not None:
            return Stream(
                self.stream,
                status_code=self.status,
                media_type=self.media_type,
                headers=self.stream_headers(),
            )
        return Response(
            self.body, status_code=self.status, headers=self.headers, media_type=self.media_type
        )


def error_reply(error: EmulatorError) -> Reply:
    return Reply(msgspec.json.encode(error.envelope()), error.status, error.headers)


def json_bytes(body: bytes, status: int = 200) -> Response[bytes]:
    """An already-encoded JSON answer (cached catalog pages)."""
    return Response(content=body, status_code=status, media_type=JSON)


class ErrorBody(WireModel):
    message: str
    type: str
    code: str
    param: str | None
    metadata: dict[str, Any] | None = None


class ErrorEnvelope(WireModel):
    """Every error answer: SPEC section 6."""

    error: ErrorBody


def answers(
    model: type[BaseModel] | UnionType, description: str, status: int = 200
) -> dict[int, ResponseSpec]:
    """The success a route answers (a model, or a union of them: `oneOf`), for the
    OpenAPI document (its body built as a dict)."""
    container: Any = model  # litestar takes a union too, though its types say not
    spec = ResponseSpec(data_container=container, description=description, generate_examples=False)
    return {status: spec}
