"""Serving a gateway request: route, call providers in their own format, translate back.

A request is tried on each candidate route in turn (`routing.py`); each try
is a route attempt. The first provider that answers serves it; if none
does, the answer is 503 `upstream_failed` with the attempts in the error's
metadata. Every request writes one usage event, and settles or releases its hold
(`usage_records`); what it holds and is charged is `charges`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from emulator import __version__
from emulator.auth.credentials import Caller
from emulator.billing import holds
from emulator.bodies import OpenWireModel
from emulator.errors import EmulatorError, PremiumApprovalRequired, UpstreamError
from emulator.faults import apply as fault_apply
from emulator.gateway import (
    audio,
    auto_router,
    free_tier,
    logprobs,
    middle_out,
    prompt_cache,
    server_tools,
    web_search,
)
from emulator.gateway.canonical import Completion, Delta, Reasoning, Request, effort_tokens
from emulator.gateway.catalog import CatalogView
from emulator.gateway.charges import fees_of, output_limit, worst_hold
from emulator.gateway.providers import EVENTS, WIRE, FakeProvider, ProviderFailed
from emulator.gateway.requirements import able_routes
from emulator.gateway.routing import ProviderPrefs, Route, model_variant, route_candidates
from emulator.gateway.schema_checks import check_output_schema, check_tools
from emulator.gateway.stops import cut_completion, cut_deltas
from emulator.gateway.usage_records import record_failure
from emulator.gateway.wire import chat_chunks
from emulator.ids import LazyRng

if TYPE_CHECKING:
    from emulator.runtime import Runtime

FINGERPRINT = f"emulator-{__version__}"
STOP_FORMATS = frozenset({"chat", "messages"})  # the provider formats that carry `stop`


@dataclass
class Call:
    """One gateway request on its way through the routes."""

    endpoint: str
    model: str
    fallbacks: list[str]
    prefs: ProviderPrefs
    request: Request
    stream: bool
    metadata: dict[str, Any]
    attempts: list[dict[str, Any]] = field(default_factory=list)
    hold: holds.Hold | None = None
    compression: bool | None = None  # middle-out: asked, refused, or by the route's context
    auto_allowed: tuple[str, ...] | None = None  # `openrouter/auto`: what it may pick
    # OpenRouter's `debug.echo_upstream_body` (streams only): the provider's request.
    echo_upstream: bool = False
    upstream: dict[str, Any] | None = None
    web: web_search.WebSearch | None = None  # the `web` plugin or `:online`
    # The server tools besides web search that the model calls before it answers.
    server_tools: dict[str, OpenWireModel] = field(default_factory=dict)
    origin: str = ""  # where the client reached us, for the tools' links ("": settings')
    # Run in a stream's settling transaction when it ended whole (its idempotent record).
    on_whole: list[Callable[[], None]] = field(default_factory=list)


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class Served:
    id: str
    created: int
    route: Route
    completions: list[Completion]
    deltas: list[Delta]  # for streams: what the provider streamed, translated
    web_results: tuple[web_search.WebResult, ...] = ()  # the search the prompt held
    tool_runs: tuple[server_tools.Run, ...] = ()  # the server tools' calls, in order


def serve(rt: Runtime, caller: Caller, call: Call) -> Served:
    """Try the routes in turn; the first that answers serves the call."""
    view = rt.catalog.view()
    call.request, found, runs = _tools_read(
        rt, call.request, call.web, call.server_tools, call.origin
    )
    if call.model == auto_router.AUTO:  # the router's pick stands for it from here on
        call.model = auto_router.choose(view, call.request, call.auto_allowed, premium_ok(caller))
    routes = route_candidates(view, call.model, call.fallbacks, call.prefs)
    routes, call.request = able_routes(
        view, routes, call.request, call.endpoint, call.prefs, call.compression
    )
    _check_premium(caller, view, routes, call.model, call.fallbacks)
    # A request for a free variant (its first route, after routing) counts against the
    # free tier; one the hold then refuses gives its count back.
    counted = free_tier.admit(rt, caller.account_id) if free_tier.is_free(routes[0]) else None
    fetched, drawn = server_tools.billed_fetches(runs), server_tools.tool_micros(runs)
    held = worst_hold(routes, call.request, fees_of(view), len(found), fetched, drawn)
    try:
        # A whole answer served inside a transaction (answers.respond) is settled in it:
        # no one can see its hold in between, so the row is written once, closed.
        call.hold = holds.hold(
            rt,
            caller.account_id,
            caller.key,
            held,
            call.metadata.get("idempotency_key"),
            write=call.stream or not rt.store.in_transaction,
            output_limit="max_output_tokens" if call.endpoint == "responses" else "max_tokens",
            scopes=caller.scopes,
        )
    except EmulatorError:
        if counted is not None:
            rt.limiter.uncount(counted)
        raise
    for route in routes:
        behavior = view.providers[route.provider].body.get("behavior", "ok")
        provider = FakeProvider(
            route.provider, route.wire_format, route.status, behavior, view.replies
        )
        if route.cache_read_micros_per_mtok is not None:  # the route caches prompts
            provider.cache = prompt_cache.PromptCache(rt, caller.account_id, route)
        try:
            if fault_apply.route_fails(route.model, route.provider):
                raise ProviderFailed("fault_injected", f"A fault rule failed {route.provider}.")
            completions, deltas = _try(rt, provider, route, call)
        except ProviderFailed as failure:
            call.attempts.append(_attempt(route, "failed", failure.code))
            continue
        call.attempts.append(_attempt(route, "succeeded", None))
        served_at = int(rt.clock.now())
        ident = rt.generation_id()
        return Served(ident, served_at, route, completions, deltas, found, runs)
    event_id = record_failure(rt, caller, call)
    raise UpstreamError(
        f"Every route for {call.model!r} failed ({len(call.attempts)} attempts). Try again, "
        "or add fallback `models`.",
        metadata={"route_attempts": call.attempts},
        headers={"X-Generation-Id": event_id},  # names its failed usage event
    )


def _try(
    rt: Runtime, provider: FakeProvider, route: Route, call: Call
) -> tuple[list[Completion], list[Delta]]:
    completions, deltas = _ask(rt, provider, route, call)
    if call.request.logprobs is not None and route.wire_format in logprobs.FORMATS:
        for completion in completions:  # an answer without text has no tokens to list
            if completion.logprobs is None:
                completion.logprobs = ()
    stops = call.request.stop
    if stops and route.wire_format not in STOP_FORMATS:  # the gateway cuts it itself
        family = route.wire_format
        completions = [cut_completion(c, stops, family) for c in completions]
        deltas = cut_deltas(deltas, stops, family) if deltas else deltas
    return completions, deltas


def _ask(
    rt: Runtime, provider: FakeProvider, route: Route, call: Call
) -> tuple[list[Completion], list[Delta]]:
    wire = WIRE[route.wire_format]
    model = free_tier.upstream(route.model)  # what the provider calls the model
    native = wire.render_request(capped(call.request, route), model, stream=call.stream)
    if call.echo_upstream:  # the serving attempt's is the last one kept
        call.upstream = native
    if call.stream:
        if route.wire_format == "chat":  # the chat format carries `n` itself
            chunks = provider.stream(native, _rng(rt, route, call, 0))
            return [], list(chat_chunks.parse_chunks(chunks))
        deltas: list[Delta] = []
        for i in range(call.request.n):  # one stream per answer, each told its choice
            events = provider.stream(native, _rng(rt, route, call, i))
            parsed = EVENTS[route.wire_format].parse_events(events)
            deltas += (replace(d, choice=i) for d in parsed)
        return [], deltas
    if route.wire_format == "chat":  # the chat format carries `n` itself
        return wire.parse_response(provider.complete(native, _rng(rt, route, call, 0))), []
    completions = [
        wire.parse_response(provider.complete(native, _rng(rt, route, call, i)))[0]
        for i in range(call.request.n)
    ]
    return completions, []


def _rng(rt: Runtime, route: Route, call: Call, index: int) -> LazyRng:
    # Keyed by the model, not the provider: a fallback to another host of the
    # same model says the same thing.
    # `label` keys the other generators of the request (`LazyRng.fork`).
    model = free_tier.upstream(route.model)  # a free variant says what its model says
    return LazyRng(
        lambda label="completion": rt.ids.rng(
            label, model, repr(call.request) + audio.key(call.request), index
        )
    )


# A failed attempt is a refused connection or an error at once, not a generation:
# it reports a few milliseconds, whatever the provider's fixture latency is.
FAILED_ATTEMPT_LATENCY_MS = 5


def _attempt(route: Route, status: str, error: str | None) -> dict[str, Any]:
    return {
        "provider": route.provider,
        "model": route.model,
        "wire_format": route.wire_format,
        "status": status,
        "error_code": error,
        "latency_ms": route.latency_ms if status == "succeeded" else FAILED_ATTEMPT_LATENCY_MS,
    }


def premium_ok(caller: Caller) -> bool:
    """Whether the caller's account is approved for premium models."""
    return bool(caller.owner and caller.owner.premium_approved)


def premium_unapproved(caller: Caller, view: CatalogView, routes: list[Route]) -> list[str]:
    """The premium models among `routes` this caller's account is not approved for."""
    if premium_ok(caller):
        return []
    return [r.model for r in routes if view.by_id[r.model]["premium"]]


def _check_premium(
    caller: Caller, view: CatalogView, routes: list[Route], model: str, fallbacks: list[str]
) -> None:
    premium = premium_unapproved(caller, view, routes)
    if premium:
        first = premium[0]
        asked = [i for i, m in enumerate(fallbacks) if model_variant(m)[0] == first]
        param = f"models[{asked[0]}]" if model_variant(model)[0] != first and asked else "model"
        raise PremiumApprovalRequired(
            f"{first!r} is a premium model and this account is not approved for premium "
            "models. Ask for approval (the emulator: POST /_emulator/accounts with "
            '"premium_approved": true), or choose another model.',
            param=param,
        )


def capped(request: Request, route: Route) -> Request:
    """What the route's provider is asked: no more than its model's output limit (it caps
    `max_tokens`), and the reasoning its model does unasked."""
    limit = output_limit(request, route)
    reasoning = reasoning_of(request, route)
    if request.max_tokens == limit and reasoning is request.reasoning:
        return request
    asked = request.with_max_tokens(limit)  # a copy: the call's request serves every route
    asked.reasoning = reasoning
    return asked


def reasoning_of(request: Request, route: Route) -> Reasoning | None:
    """The reasoning the route's model does: what the request asks for, else what the
    model does unasked (`default_reasoning`: `hidden` is billed and not returned). A model
    that cannot reason drops the request's settings, as its providers do."""
    if not route.reasons:
        return None
    unasked = route.default_reasoning
    if request.reasoning is not None or unasked is None or request.reasoning_unasked == "off":
        return request.reasoning
    hidden = unasked == "hidden" or request.reasoning_unasked == "hidden"
    return Reasoning(effort_tokens(None), exclude=hidden)


def candidates(
    rt: Runtime, caller: Caller, body: dict[str, Any], request: Request
) -> tuple[list[Route], Request, int, tuple[server_tools.Run, ...]]:
    """For a quote or a token count, without serving anything: the routes that would be
    tried (before the request's needs narrow them), the request as they would read it
    (web search results and server tools' results in it), how many search results those
    are and the server tools' calls (pages fetched and images drawn are charged)."""
    model, fallbacks, search = web_search.from_body(body, request.messages)
    tools = server_tools.called(body, request.messages)
    request, found, ran = _tools_read(rt, request, search, tools)
    view = rt.catalog.view()
    allowed = auto_router.allowed_patterns(body)
    model = auto_router.resolve(view, model, request, allowed, premium_ok(caller))
    prefs = ProviderPrefs.from_body(body.get("provider"))
    routes = route_candidates(view, model, fallbacks, prefs)
    return routes, request, len(found), ran


def _tools_read(
    rt: Runtime,
    request: Request,
    search: web_search.WebSearch | None,
    tools: dict[str, OpenWireModel],
    origin: str = "",
) -> tuple[Request, tuple[web_search.WebResult, ...], tuple[server_tools.Run, ...]]:
    """The request with what the gateway's server tools returned in its prompt (the web
    search's results, then the other tools'), read before anything is counted: input
    tokens. Also what the search found and the other tools' calls."""
    found: tuple[web_search.WebResult, ...] = ()
    if search is not None:
        request, found = web_search.inject(request, search, rt.clock.now_iso()[:10])
    runs: tuple[server_tools.Run, ...] = ()
    if tools:
        where = origin or rt.settings.origin
        setting = server_tools.Setting(rt.clock.now(), rt.catalog.view(), where)
        runs = server_tools.runs(tools, request.messages, setting)
        request = server_tools.inject(request, runs)
    return request, found, runs


def hides_reasoning(request: Request, route: Route) -> bool:
    """Whether the route's model reasons without returning it (`exclude`, or a model
    that reasons unasked and keeps it): taken and billed, not shown."""
    reasoning = reasoning_of(request, route)
    return reasoning is not None and reasoning.exclude


def new_call(
    endpoint: str,
    body: dict[str, Any],
    request: Request,
    metadata: dict[str, Any],
    origin: str = "",
) -> Call:
    """A call from a client body already read into `request`."""
    check_tools(request, endpoint)
    check_output_schema(request, endpoint)
    model, fallbacks, web = web_search.from_body(body, request.messages)
    return Call(
        endpoint=endpoint,
        model=model,
        fallbacks=fallbacks,
        prefs=ProviderPrefs.from_body(body.get("provider")),
        request=request,
        stream=bool(body.get("stream")),
        metadata=metadata,
        compression=middle_out.asked(body),
        auto_allowed=auto_router.allowed_patterns(body),
        echo_upstream=bool(
            body.get("stream") and (body.get("debug") or {}).get("echo_upstream_body")
        ),
        web=web,
        server_tools=server_tools.called(body, request.messages),
        origin=origin,
    )
