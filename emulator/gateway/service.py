"""Serving a gateway request: route, call providers in their own format, translate back.

A request is tried on each candidate route in turn (`routing.py`); each try
is a route attempt. The first provider that answers serves it; if none
does, the answer is 503 `upstream_failed` with the attempts in the error's
metadata. Every request writes one usage event, and settles or releases its hold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from emulator import __version__
from emulator.auth.credentials import Caller
from emulator.billing import holds
from emulator.billing.money import usd_number
from emulator.billing.pricing import (
    Charge,
    Fees,
    MediaBill,
    charge_for,
    completion_cost_mtok,
    prompt_cost_mtok,
)
from emulator.bodies import OpenWireModel, validate
from emulator.errors import (
    EmulatorError,
    InvalidRequest,
    PremiumApprovalRequired,
    UpstreamError,
    ValidationFailed,
)
from emulator.faults import apply as fault_apply
from emulator.gateway import (
    audio,
    audio_output,
    auto_router,
    chat_schemas,
    free_tier,
    image_output,
    logprobs,
    middle_out,
    prompt_cache,
    responses_schemas,
    server_tools,
    web_search,
)
from emulator.gateway.canonical import (
    CacheUse,
    Completion,
    Delta,
    Finish,
    Reasoning,
    Request,
    effort_tokens,
)
from emulator.gateway.catalog import CatalogView
from emulator.gateway.content import prompt_tokens
from emulator.gateway.providers import EVENTS, WIRE, FakeProvider, ProviderFailed
from emulator.gateway.requirements import able_routes
from emulator.gateway.routing import ProviderPrefs, Route, model_variant, route_candidates
from emulator.gateway.schema_checks import check_output_schema, check_tools
from emulator.gateway.stops import cut_completion, cut_deltas
from emulator.gateway.tool_turns import check_tool_turns
from emulator.gateway.wire.chat import REASONING_FIELDS as CHAT_REASONING_FIELDS
from emulator.gateway.wire.responses import is_sealed
from emulator.ids import LazyRng
from emulator.store.usage import UsageEvent

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
    call.request, found, runs = _tools_read(rt, call.request, call.web, call.server_tools)
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
    fetched = server_tools.billed_fetches(runs)
    held = worst_hold(routes, call.request, fees_of(view), len(found), fetched)
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
            return [], list(wire.parse_chunks(provider.stream(native, _rng(rt, route, call, 0))))
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
    limit = _output_limit(request, route)
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
) -> tuple[list[Route], Request, int, int]:
    """For a quote or a token count, without serving anything: the routes that would be
    tried (before the request's needs narrow them), the request as they would read it
    (web search results and server tools' results in it), how many search results those
    are and how many pages were fetched at a charge (each is charged)."""
    model, fallbacks, search = web_search.from_body(body, request.messages)
    tools = server_tools.called(body, request.messages)
    request, found, ran = _tools_read(rt, request, search, tools)
    view = rt.catalog.view()
    allowed = auto_router.allowed_patterns(body)
    model = auto_router.resolve(view, model, request, allowed, premium_ok(caller))
    prefs = ProviderPrefs.from_body(body.get("provider"))
    routes = route_candidates(view, model, fallbacks, prefs)
    return routes, request, len(found), server_tools.billed_fetches(ran)


def _tools_read(
    rt: Runtime,
    request: Request,
    search: web_search.WebSearch | None,
    tools: dict[str, OpenWireModel],
) -> tuple[Request, tuple[web_search.WebResult, ...], tuple[server_tools.Run, ...]]:
    """The request with what the gateway's server tools returned in its prompt (the web
    search's results, then the other tools'), read before anything is counted: input
    tokens. Also what the search found and the other tools' calls."""
    found: tuple[web_search.WebResult, ...] = ()
    if search is not None:
        request, found = web_search.inject(request, search, rt.clock.now_iso()[:10])
    runs: tuple[server_tools.Run, ...] = ()
    if tools:
        runs = server_tools.runs(tools, request.messages, rt.clock.now())
        request = server_tools.inject(request, runs)
    return request, found, runs


def provider_prompt_tokens(request: Request, wire_format: str) -> int:
    """The prompt's tokens as a provider of `wire_format` counts them: the request said
    in its format and read back (the responses and messages formats join the system
    messages into one, which frames them once). Exact, and slower than `prompt_tokens`,
    which the hold takes (it can only count more)."""
    wire = WIRE[wire_format]
    return prompt_tokens(wire.parse_request(wire.render_request(request, "m")), wire_format)


def _reshaped(request: Request) -> bool:
    """Whether a provider may read the prompt as more tokens than `prompt_tokens` counts
    (which counts plain messages as no fewer): tools and tool calls are said again in the
    provider's format (a schema's defaults added, arguments made a JSON object and
    written back)."""
    return bool(request.tools) or any(m.tool_calls for m in request.messages)


def hides_reasoning(request: Request, route: Route) -> bool:
    """Whether the route's model reasons without returning it (`exclude`, or a model
    that reasons unasked and keeps it): taken and billed, not shown."""
    reasoning = reasoning_of(request, route)
    return reasoning is not None and reasoning.exclude


def _output_limit(request: Request, route: Route) -> int:
    return min(request.max_tokens or route.max_output_tokens, route.max_output_tokens)


def worst_hold(
    routes: list[Route], request: Request, fees: Fees, searched: int = 0, fetched: int = 0
) -> int:
    """The hold before the first attempt: the most any of the routes can charge
    (`searched`: web search results in the prompt, `fetched`: pages the web fetch tool
    read, each charged)."""
    reshaped = _reshaped(request)
    return max(worst_case(route, request, fees, searched, reshaped, fetched) for route in routes)


def worst_case(
    route: Route,
    request: Request,
    fees: Fees,
    searched: int = 0,
    reshaped: bool | None = None,
    fetched: int = 0,
) -> int:
    """The most this route can charge for the request (`reshaped`: `_reshaped(request)`,
    when known)."""
    prompt = prompt_tokens(request, route.wire_format)
    if reshaped is None:
        reshaped = _reshaped(request)
    if reshaped:  # then also as the provider reads it, and the larger
        prompt = max(prompt, provider_prompt_tokens(request, route.wire_format))
    output = _output_limit(request, route) * request.n
    media: tuple[MediaBill, ...] = ()
    if request.images_out is not None:  # each answer's image, beside its text
        drawn = image_output.tokens_asked(request)
        output += drawn
        media = media_bills(route, OutputMedia(image_tokens=drawn))
    elif request.audio_out is not None:  # within the output: at most all of it sound
        media = media_bills(route, OutputMedia(audio_tokens=output), worst=True)
    # A cache read costs no more than the prompt (fixtures); a write at a breakpoint can.
    prompt_price = route.prompt_micros_per_mtok
    explicit = route.wire_format == prompt_cache.EXPLICIT_FORMAT
    if explicit and route.cache_read_micros_per_mtok is not None:
        prompt_price = prompt_cache.worst_prompt_price(route, request)
    price = prompt_price, route.completion_micros_per_mtok
    charge = charge_for(
        prompt, output, *price, fees, search_results=searched, web_fetches=fetched, media=media
    )
    return charge.charge_micros


@dataclass(frozen=True, slots=True)
class OutputMedia:
    """Of an answer's output tokens, those priced apart: its generated images (how many,
    and their tokens, `gateway.image_output`) and its sound's (`gateway.audio_output`)."""

    images: int = 0
    image_tokens: int = 0
    audio_tokens: int = 0


def media_of(details: dict[str, Any], images: int = 0) -> OutputMedia | None:
    """The tokens priced apart that a chat usage's `completion_tokens_details` tells."""
    image_tokens, audio_tokens = details.get("image_tokens", 0), details.get("audio_tokens", 0)
    if not image_tokens and not audio_tokens:  # nearly every answer
        return None
    return OutputMedia(images if image_tokens else 0, image_tokens, audio_tokens)


def media_bills(
    route: Route, media: OutputMedia | None, worst: bool = False
) -> tuple[MediaBill, ...]:
    """Generated images' and sound's tokens at the route's prices for them (none: the
    completion's). `worst`: a hold's bound, never below the completion's price."""
    if media is None:
        return ()
    bills = []
    for tokens, price in (
        (media.image_tokens, route.image_output_micros_per_mtok),
        (media.audio_tokens, route.audio_output_micros_per_mtok),
    ):
        if tokens and price is not None:
            price = max(price, route.completion_micros_per_mtok) if worst else price
            bills.append(MediaBill(tokens, price))
    return tuple(bills)


def fees_of(view: CatalogView) -> Fees:
    return view.fees


@dataclass(slots=True)
class Spent:
    """What an answer used: its tokens (reasoning among the output, the cache's use among
    the prompt), why it ended, and for a stream how (`complete`, `cut` by a fault,
    `client_left`)."""

    prompt: int
    completion: int
    reasoning: int = 0
    finish: str | None = None
    stream_end: str | None = None
    cache: CacheUse | None = None
    stop_sequence: str | None = None  # the request's that ended the answer, if told
    media: OutputMedia | None = None  # of `completion`, the tokens priced apart


def record_usage(rt: Runtime, caller: Caller, call: Call, served: Served, spent: Spent) -> Charge:
    """Settle the hold at the real charge and write the usage event, in one transaction."""
    route = served.route
    prompt, completion = spent.prompt, spent.completion
    charge = charge_of(rt, served, prompt, completion, spent.cache, spent.media)
    event = _event(caller, call, served.id, "succeeded", rt.clock.now_iso())
    media = spent.media
    if media is not None and media.images:  # GET /generation's `num_media_completion`
        event.metadata["images_out"] = media.images
        event.metadata["image_tokens"] = media.image_tokens
    if spent.stream_end is not None:
        event.metadata["stream_end"] = spent.stream_end
    event.model, event.provider = route.model, route.provider
    event.prompt_tokens, event.completion_tokens = prompt, completion
    event.reasoning_tokens, event.finish_reason = spent.reasoning, spent.finish
    event.stop_sequence = spent.stop_sequence
    heard = audio.clips(call.request.messages)
    if heard:  # OpenRouter's `num_input_audio_prompt` (GET /generation)
        event.metadata["audio_inputs"] = len(heard)
    if spent.cache is not None:
        event.cached_tokens, event.cache_write_tokens = spent.cache.read, spent.cache.written
    event.web_search_results = len(served.web_results)
    event.web_fetches = server_tools.billed_fetches(served.tool_runs)
    event.total_tokens = prompt + completion
    event.provider_cost_micros = charge.provider_cost_micros
    event.platform_fee_micros = charge.platform_fee_micros
    event.charge_micros = charge.charge_micros
    event.margin_micros = charge.margin_micros
    assert call.hold is not None
    holds.settle(rt, call.hold, event)
    holds.cut_to_hold(call.hold, charge)  # the answer says what settling charged
    return charge


def charge_of(
    rt: Runtime,
    served: Served,
    prompt: int,
    completion: int,
    cache: CacheUse | None = None,
    media: OutputMedia | None = None,
) -> Charge:
    """What the served route charges for these tokens (SPEC section 5; `media`: of
    `completion`, the generated images' and sound's)."""
    route = served.route
    price = route.prompt_micros_per_mtok, route.completion_micros_per_mtok
    bill = None if cache is None else prompt_cache.bill(cache, route)
    fees = fees_of(rt.catalog.view())
    fetched = server_tools.billed_fetches(served.tool_runs)
    bills = media_bills(route, media)
    searched = len(served.web_results)
    return charge_for(prompt, completion, *price, fees, bill, searched, fetched, bills)


def streamed_usage(
    rt: Runtime,
    call: Call,
    served: Served,
    prompt: int,
    completion: int,
    endpoint: str,
    media: OutputMedia | None = None,
) -> dict[str, Any]:
    """A stream's last usage's money (`usage_money`), priced before the stream is
    settled: what settling will charge."""
    cache = served_cache(served)
    charge = charge_of(rt, served, prompt, completion, cache, media)
    if call.hold is not None:
        holds.cut_to_hold(call.hold, charge)
    money = usage_money(charge, served.route, prompt, completion, endpoint, cache, media)
    return money | tool_use(call, served)


def tool_search(call: Call, served: Served) -> tuple[web_search.WebResult, ...]:
    """What the model's web search tool found (nothing when the search, if any, was the
    `web` plugin's or `:online`'s, which the model did not call)."""
    return served.web_results if call.web is not None and call.web.tool else ()


def tool_use(call: Call, served: Served) -> dict[str, Any]:
    """OpenRouter's `usage.server_tool_use_details` on chat and responses answers whose
    model called a server tool (web search's tool among them; not its plugin)."""
    if not served.tool_runs and not served.web_results:  # nearly every request
        return {}
    searched = bool(tool_search(call, served))
    details = server_tools.usage_details(served.tool_runs, searched)
    if details is None or call.endpoint == "messages":
        return {}
    return {"server_tool_use_details": details}


def served_cache(served: Served) -> CacheUse | None:
    """What the served answer's prompt read from and wrote to the provider's cache."""
    if served.completions:
        return served.completions[0].cache
    return next((d.cache for d in served.deltas if isinstance(d, Finish)), None)


def record_failure(rt: Runtime, caller: Caller, call: Call) -> str:
    """Every route failed: release the hold (status `failed`) and log a failed event,
    whose id is returned."""
    event = _event(caller, call, rt.generation_id(), "failed", rt.clock.now_iso())
    assert call.hold is not None
    holds.release(rt, call.hold, event, "every route failed")
    return event.id


# How each endpoint's `usage.cost_details` names the provider's prompt and output
# costs (OpenRouter's chat and responses schemas, which its SDKs require).
COST_PARTS = {
    "chat.completions": ("upstream_inference_prompt_cost", "upstream_inference_completions_cost"),
    "responses": ("upstream_inference_input_cost", "upstream_inference_output_cost"),
    "messages": ("upstream_inference_input_cost", "upstream_inference_output_cost"),
}


def usage_money(
    charge: Charge,
    route: Route,
    prompt: int,
    completion: int,
    endpoint: str = "chat.completions",
    cache: CacheUse | None = None,
    media: OutputMedia | None = None,
) -> dict[str, Any]:
    """What chat and responses answers add to `usage`: the charge, in USD and micros, and
    OpenRouter's accounting: the provider's cost (`upstream_inference_cost`, rounded up
    to the micro as billed) and its prompt and output parts (exact, in USD; the prompt's
    at the cache's prices for the tokens read from or written to it)."""
    prompt_part, output_part = COST_PARTS[endpoint]
    prompt_cost = prompt * route.prompt_micros_per_mtok
    if cache is not None:
        prompt_cost = prompt_cost_mtok(
            prompt, route.prompt_micros_per_mtok, prompt_cache.bill(cache, route)
        )
    return {
        "cost": usd_number(charge.charge_micros),
        "is_byok": False,
        "cost_details": {
            "upstream_inference_cost": usd_number(charge.provider_cost_micros),
            prompt_part: prompt_cost / 1e12,
            output_part: (
                completion_cost_mtok(
                    completion, route.completion_micros_per_mtok, media_bills(route, media)
                )
                if media is not None
                else completion * route.completion_micros_per_mtok
            )
            / 1e12,
        },
        "charge_micros": charge.charge_micros,
    }


def _event(caller: Caller, call: Call, event_id: str, status: str, now: str) -> UsageEvent:
    return UsageEvent(
        id=event_id,
        account_id=caller.account_id,
        key_id=caller.key.id if caller.key else None,
        created_at=now,
        endpoint=call.endpoint,
        model=model_variant(call.model)[0],  # the catalog id, as a served request's
        provider=None,
        status=status,
        prompt_tokens=0,
        completion_tokens=0,
        total_tokens=0,
        provider_cost_micros=0,
        platform_fee_micros=0,
        charge_micros=0,
        margin_micros=0,
        route_attempts=call.attempts,
        metadata={**call.metadata, "stream": call.stream},
    )


def new_call(
    endpoint: str, body: dict[str, Any], request: Request, metadata: dict[str, Any]
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
    )


def check_body(body: dict[str, Any], endpoint: str, history: Sequence[dict[str, Any]] = ()) -> None:
    """What a request body of `endpoint` is checked for beyond its model's schema, in the
    request and in its quote alike: the reasoning and sampling fields when it sends them,
    and tool calls paired with their results (`history`: a responses request's earlier
    turns, from `previous_response_id`). A messages body's own fields are its schema's."""
    _check_reasoning(body, endpoint)
    if endpoint == "chat.completions":
        if not chat_schemas.SAMPLING_FIELDS.isdisjoint(body):
            validate(body, chat_schemas.SamplingFields)  # apart, as the reasoning fields
        _check_chat_pairs(body)
    elif endpoint == "responses" and "modalities" in body:
        _no_media_here(body["modalities"])
    check_tool_turns(body, endpoint, history)


def _no_media_here(modalities: Any) -> None:
    """Images and sound are generated for chat only (`gateway.image_output`,
    `gateway.audio_output`): a responses request that asks for them is told so, rather
    than answered in text as if it had not."""
    if not isinstance(modalities, list):
        return
    if "image" in modalities:
        raise InvalidRequest(
            "Image output (`modalities` with `image`) is emulated on POST "
            "/api/v1/chat/completions only: ask there, where the answer's "
            "`message.images` carries it.",
            param="modalities",
        )
    if "audio" in modalities:
        raise InvalidRequest(
            "Audio output (`modalities` with `audio`) is emulated on POST "
            "/api/v1/chat/completions only (streamed): ask there, where the chunks' "
            "`delta.audio` carries it.",
            param="modalities",
        )


def _check_chat_pairs(body: dict[str, Any]) -> None:
    """Chat fields that need another one."""
    if "top_logprobs" in body and not body.get("logprobs"):
        raise ValidationFailed(
            "top_logprobs needs `logprobs: true`: set it, or leave top_logprobs out.",
            param="top_logprobs",
        )
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema" and not (fmt.get("json_schema") or {}).get("schema"):
        raise ValidationFailed(
            "response_format json_schema needs `json_schema.schema`.",
            param="response_format.json_schema.schema",
        )
    if "modalities" in body and not body.get("stream"):
        audio_output.check_streamed(body)


def _check_reasoning(body: dict[str, Any], endpoint: str) -> None:
    """The reasoning fields, when a body has them: checked apart from the request's model,
    so that the requests without them (nearly all) pay one look-up for them. A responses
    input's reasoning items sent back must carry their `encrypted_content` as given."""
    if endpoint == "responses":
        if "reasoning" in body:
            validate(body, responses_schemas.ReasoningFields)
        if not isinstance(body["input"], str):
            _check_sent_back_reasoning(body["input"])
    elif endpoint == "chat.completions" and not CHAT_REASONING_FIELDS.isdisjoint(body):
        validate(body, chat_schemas.ReasoningFields)


def _check_sent_back_reasoning(items: list[dict[str, Any]]) -> None:
    """The real API refuses an `encrypted_content` it cannot read."""
    for index, item in enumerate(items):
        blob = item.get("encrypted_content") if item.get("type") == "reasoning" else None
        if blob is not None and not (isinstance(blob, str) and is_sealed(blob)):
            raise InvalidRequest(
                f"The encrypted_content of the reasoning item input[{index}] cannot be "
                "read: send it back exactly as it came in the response's output.",
                param=f"input[{index}].encrypted_content",
                code="invalid_encrypted_content",
            )
