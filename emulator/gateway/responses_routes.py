"""POST /api/v1/responses and /responses/input_tokens."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from litestar import Controller, Request, Response, post
from litestar.params import JSONBody

from emulator.auth.credentials import Caller, RouteAuth
from emulator.bodies import parse_body
from emulator.direct import DirectRequest, DirectRoute, serve_declared
from emulator.faults import apply as fault_apply
from emulator.gateway import (
    background,
    body_checks,
    charges,
    server_tool_items,
    service,
    stored_responses,
    usage_records,
    web_citations,
)
from emulator.gateway.answers import Answer, gateway_reply
from emulator.gateway.canonical import Delta
from emulator.gateway.canonical import Request as CanonicalRequest
from emulator.gateway.records import ResponseObject
from emulator.gateway.responses_schemas import InputTokens, InputTokensRequest, ResponsesRequest
from emulator.gateway.schema_checks import check_tools
from emulator.gateway.streaming import paced_stream, typed_sse_lines
from emulator.gateway.web_search import query_of
from emulator.gateway.wire import responses, responses_events, responses_items
from emulator.openapi_answers import COUNTING, INFERENCE, WHOLE_OR_STREAMED, Streamed
from emulator.runtime import Runtime
from emulator.web import API_PREFIX, BEARER, CallerDep, Reply, RuntimeDep, answers

# The catalog tokenizer family whose count is exact; others are estimated with it.
EXACT_FAMILY = "responses"
# The `include` value that asks for the reasoning's `encrypted_content`.
SEALED = "reasoning.encrypted_content"
# The events that end a response's stream whole.
_ENDS = ("response.completed", "response.incomplete")


def create_response(request: DirectRequest) -> Reply:
    data = parse_body(request.body, ResponsesRequest)
    return gateway_reply(request, "responses", data, answer)


RESPONSES = DirectRoute(
    "POST", f"{API_PREFIX}/responses", RouteAuth("api_key", ("ai.gateway",)), create_response
)


class ResponsesController(Controller):
    """The declarations (OpenAPI, 405s): `RESPONSES` serves it, in `emulator.direct`."""

    path = API_PREFIX
    opt = RESPONSES.opt
    security = BEARER
    tags = ["Gateway"]

    @post(
        "/responses",
        status_code=200,
        summary="A response, whole or as typed stream events",
        responses={**answers(ResponseObject, WHOLE_OR_STREAMED), **INFERENCE},
        operation_class=Streamed,
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[ResponsesRequest],
    ) -> Response[Any]:
        return await serve_declared(request, RESPONSES)

    @post(
        "/responses/input_tokens",
        status_code=200,
        summary="Count input tokens: exact for responses-format providers, else an estimate",
        responses=COUNTING,
    )
    async def input_tokens(
        self, rt: RuntimeDep, caller: CallerDep, data: JSONBody[InputTokensRequest]
    ) -> InputTokens:
        talk = stored_responses.conversation(
            rt, caller.account_id, data.model_dump(by_alias=True, exclude_none=True)
        )
        body_checks.check_body(talk.body, "responses", talk.history)
        body = talk.whole()
        request = responses.parse_request(body)
        check_tools(request, "responses")
        routes, request, _, _ = service.candidates(rt, caller, body, request)
        route = routes[0]
        exact = route.wire_format == EXACT_FAMILY
        count = charges.provider_prompt_tokens(request, EXACT_FAMILY)
        return InputTokens(
            input_tokens=count, exact=exact, provider=route.provider, tokenizer=EXACT_FAMILY
        )


def answer(
    rt: Runtime, caller: Caller, body: dict[str, Any], metadata: dict[str, Any], origin: str
) -> Answer:
    talk = stored_responses.conversation(rt, caller.account_id, body)
    body = talk.body
    body_checks.check_body(body, "responses", talk.history)
    request = responses.parse_request(talk.whole())
    call = service.new_call("responses", body, request, metadata, origin)
    served = service.serve(rt, caller, call)
    answer_headers, provider = {"X-Generation-Id": served.id}, served.route.provider
    extra = {"provider": provider, **responses.request_echo(body)}
    ident = responses_items.response_id(served.id)
    model, created = served.route.model, served.created
    shown = _shown(body, call.request)
    run = background.run_for(rt, body, call.stream)
    items = _tool_items(call, served, ident)
    kept = None
    if stored_responses.stores(body):
        kept = stored_responses.Kept(caller.account_id, body["input"], rt.world, run)

    def typed(deltas: Iterator[Delta]) -> Iterator[dict[str, Any]]:
        """The answer's stream events: as sent, and as a background response keeps them."""
        events = responses_events.render_events(
            deltas, id=ident, model=model, created=created, extra=extra, shown=shown
        )
        if served.web_results:
            events = web_citations.annotated_events(events, served.web_results)
        if items:
            events = server_tool_items.with_items(events, items, served.tool_runs)
        return events if run is None else background.queued_first(events)

    if call.stream:

        def render(deltas: Iterator[Delta]) -> Iterator[bytes]:
            events = typed(deltas)
            if call.upstream is not None:
                events = _debug_first(events, call.upstream)
            return typed_sse_lines(_priced(rt, call, served, events, kept))

        made: list[bytes] | None = None if run is None else []  # runs on: kept whole
        paced = paced_stream(rt, caller, call, served, render, made=made)
        return Answer(
            answer_headers, stream=paced, made=made, provider=provider, on_whole=call.on_whole
        )
    completion = served.completions[0]
    whole = responses.render_response(
        completion, id=ident, model=model, created=created, extra=extra, shown=shown
    )
    if served.web_results:
        web_citations.annotate_output(whole["output"], served.web_results)
    whole["output"][:0] = items
    spent = usage_records.Spent(
        completion.input_tokens,
        completion.output_tokens,
        completion.reasoning_tokens,
        completion.finish_reason,
        cache=completion.cache,
        stop_sequence=completion.stop_sequence,
        media=charges.media_of(whole["usage"]["output_tokens_details"], len(completion.images)),
    )
    charge = usage_records.record_usage(rt, caller, call, served, spent)
    whole["usage"] |= charges.usage_money(
        charge, served.route, spent.prompt, spent.completion, "responses", spent.cache,
        spent.media,
    ) | usage_records.tool_use(call, served)  # fmt: skip
    if run is None:
        if kept is not None:
            stored_responses.keep(rt, kept, whole)
        return Answer(answer_headers, body=whole, provider=provider)
    whole = background.finished(whole, run)
    deltas = background.deltas_of(completion, served.route.wire_format)
    events = background.ending_with(typed(deltas), whole)
    if fault_apply.job_fails(body.get("model")):  # the charge stands, as a cancel's
        whole, run, events = background.failed_half_way(whole, run, events)
    if kept is not None:  # always: a background response is kept, to be polled
        stored_responses.keep(rt, kept, whole, events, run)
    seen = background.seen(whole, run, rt.clock.now())
    return Answer(answer_headers, body=seen, provider=provider)


def _tool_items(call: service.Call, served: service.Served, ident: str) -> list[dict[str, Any]]:
    """The output items of the server tools the model called (its search by the web
    search tool among them; the `web` plugin's is not a call)."""
    found = usage_records.tool_search(call, served)
    if not found and not served.tool_runs:
        return []
    openai = call.web is not None and call.web.openai
    return server_tool_items.output_items(
        ident, served.tool_runs, query_of(call.request.messages), found, openai
    )


def _debug_first(events: Iterator[Any], upstream: dict[str, Any]) -> Iterator[Any]:
    """OpenRouter's `response.debug` event with the provider's request, as early as the
    format allows: right after `response.created`, which the SDKs' stream helpers need
    first (number 1: the others follow it)."""
    created = next(events)
    yield created
    debug = {"echo_upstream_body": upstream}
    number = created["sequence_number"] + 1
    yield {"type": "response.debug", "sequence_number": number, "debug": debug}
    for event in events:
        yield {**event, "sequence_number": event["sequence_number"] + 1}


def _shown(body: dict[str, Any], request: CanonicalRequest) -> responses_items.Shown:
    """The reasoning's text is its summary only when the client asked for one, and its
    `encrypted_content` only when `include` asks for it."""
    summary = request.reasoning is not None and request.reasoning.summary is not None
    return responses_items.Shown(summary, SEALED in (body.get("include") or ()))


def _priced(
    rt: Runtime,
    call: service.Call,
    served: service.Served,
    events: Iterator[Any],
    kept: stored_responses.Kept | None,
) -> Iterator[Any]:
    """The final response's usage carries the charge, as a whole answer's does; a stored
    response is kept once it is complete. A background one is kept from its first
    event on (running), then with its events, or failed when its stream was cut."""
    charged = _charged(rt, call, served, events)
    if kept is None or kept.run is None:
        for event in charged:
            if kept is not None and event["type"] in _ENDS:
                stored_responses.keep(rt, kept, event["response"])
            yield event
        return
    made: list[dict[str, Any]] = []  # its events, to be streamed again
    shell: dict[str, Any] | None = None  # as it began: kept, it can be polled
    ended = False
    try:
        for event in charged:
            made.append(event)
            if event["type"] == "response.created":
                shell = event["response"]
                running = background.streaming(kept.run)
                stored_responses.keep(rt, kept, shell, run=running)
            elif event["type"] in _ENDS:
                ended = True
                if event["type"] == "response.completed":  # an incomplete one has none
                    event["response"]["completed_at"] = math.ceil(rt.clock.now())
                stored_responses.keep_streamed(rt, kept, event["response"], made)
            yield event
    except GeneratorExit:  # cut: the event made last was not sent
        made.pop()
        raise
    finally:
        if shell is not None and not ended:
            stored_responses.keep_streamed(rt, kept, *background.broken_off(shell, made))


def _charged(
    rt: Runtime, call: service.Call, served: service.Served, events: Iterator[Any]
) -> Iterator[Any]:
    """The final response's usage carries the charge, as a whole answer's does."""
    for event in events:
        if event["type"] in _ENDS:
            usage = event["response"]["usage"]
            tokens = usage["input_tokens"], usage["output_tokens"]
            media = charges.media_of(usage["output_tokens_details"])
            usage |= usage_records.streamed_usage(rt, call, served, *tokens, "responses", media)
        yield event
