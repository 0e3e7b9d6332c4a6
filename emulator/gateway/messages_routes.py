"""POST /api/v1/messages: OpenRouter's Anthropic-compatible API (Anthropic's SDK, Claude
Code), whole or as Anthropic's stream events, on any model and route.

The body is read as the `messages` format's (`wire/messages.py`, which also speaks to
the providers of that format), served like chat and responses, and answered in the
same format: content blocks, `stop_reason`, Anthropic's usage (cache tokens apart),
plus the provider and the charge as the other endpoints carry them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from litestar import Controller, Request, Response, post
from litestar.params import JSONBody

from emulator.auth.credentials import Caller, RouteAuth
from emulator.bodies import parse_body
from emulator.direct import DirectRequest, DirectRoute, serve_declared
from emulator.gateway import (
    body_checks,
    charges,
    native_fetch,
    native_search,
    service,
    source_citations,
    sources,
    usage_records,
)
from emulator.gateway.answers import Answer, gateway_reply
from emulator.gateway.canonical import Delta, Finish, ReasoningDelta
from emulator.gateway.messages_schemas import CountRequest, MessagesRequest, TokenCount
from emulator.gateway.records import MessageObject
from emulator.gateway.schema_checks import check_tools
from emulator.gateway.streaming import paced_stream, typed_sse_lines
from emulator.gateway.wire import messages, messages_events
from emulator.gateway.wire.responses_items import item_key
from emulator.openapi_answers import COUNTING, INFERENCE, WHOLE_OR_STREAMED, Streamed
from emulator.runtime import Runtime
from emulator.web import API_PREFIX, BEARER, CallerDep, Reply, RuntimeDep, answers

ENDPOINT = "messages"


def create_message(request: DirectRequest) -> Reply:
    data = parse_body(request.body, MessagesRequest)
    return gateway_reply(request, ENDPOINT, data, answer)


MESSAGES = DirectRoute(
    "POST", f"{API_PREFIX}/messages", RouteAuth("api_key", ("ai.gateway",)), create_message
)


class MessagesController(Controller):
    """The declaration (OpenAPI, 405s): `MESSAGES` serves it, in `emulator.direct`."""

    path = API_PREFIX
    opt = MESSAGES.opt
    security = BEARER
    tags = ["Gateway"]

    @post(
        "/messages",
        status_code=200,
        summary="A message in Anthropic's format (OpenRouter's Anthropic-compatible API)",
        responses={**answers(MessageObject, WHOLE_OR_STREAMED), **INFERENCE},
        operation_class=Streamed,
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[MessagesRequest],
    ) -> Response[Any]:
        return await serve_declared(request, MESSAGES)

    @post(
        "/messages/count_tokens",
        status_code=200,
        summary="Count a message request's input tokens, as the provider serving it would",
        responses=COUNTING,
    )
    async def count_tokens(
        self, rt: RuntimeDep, caller: CallerDep, data: JSONBody[CountRequest]
    ) -> TokenCount:
        body = data.model_dump(by_alias=True, exclude_none=True, include=_COUNTED)
        return count(rt, caller, body)


# The fields a count reads, not the others a message request may carry: those are not
# typed by `CountRequest` (`stop_sequences: -1` was a 500).
_COUNTED = set(CountRequest.model_fields)


def count(rt: Runtime, caller: Caller, body: dict[str, Any]) -> TokenCount:
    """Anthropic's `count_tokens`: the prompt's tokens as the first route's provider
    counts them (web search results included), which is what the request is billed."""
    body_checks.check_body(body, ENDPOINT)
    request = messages.parse_request({**body, "max_tokens": 1})
    check_tools(request, ENDPOINT)
    routes, request, _, _ = service.candidates(rt, caller, body, request)
    route = routes[0]
    tokens = charges.provider_prompt_tokens(request, route.wire_format)
    return TokenCount(input_tokens=tokens, provider=route.provider)


def message_id(generation_id: str) -> str:
    """A message's id, as Anthropic's start (`msg_`): the usage event's under that prefix."""
    return "msg_" + item_key(generation_id)


def answer(
    rt: Runtime, caller: Caller, body: dict[str, Any], metadata: dict[str, Any], origin: str
) -> Answer:
    body_checks.check_body(body, ENDPOINT)
    call = service.new_call(ENDPOINT, body, messages.parse_request(body), metadata, origin)
    served = service.serve(rt, caller, call)
    ident, model = message_id(served.id), served.route.model
    hidden = service.hides_reasoning(call.request, served.route)
    omitted = (body.get("thinking") or {}).get("display") == "omitted"
    structured = call.request.response_format is not None  # cites nothing
    search = native_search.shown(
        call.web, served.web_results, call.request.messages, ident, rt.clock, structured
    )
    found = sources.found(body["messages"])
    cited: list[source_citations.Citable] = [*found]
    cited += search.sources() if search else []
    # Anthropic's server tools' blocks: the search's, then each fetch's.
    fetched = native_fetch.fetches(served.tool_runs)
    shown = search.blocks() if search else []
    if fetched:
        now, cites = rt.clock.now_iso(), native_fetch.cites(body)
        shown += native_fetch.blocks(served.tool_runs, ident, now, cites)
        documents = sum(isinstance(source, sources.Document) for source in found)
        cited += native_fetch.cited_pages(served.tool_runs, documents, cites and not structured)
    used = native_search.usage(search is not None, fetched)
    headers = {"X-Generation-Id": served.id}
    if call.stream:

        def render(deltas: Iterator[Delta]) -> Iterator[bytes]:
            if hidden:
                deltas = (d for d in deltas if not isinstance(d, ReasoningDelta))
            finish = next(d for d in served.deltas if isinstance(d, Finish))
            events = messages_events.render_events(
                deltas,
                id=ident,
                model=model,
                start=(finish.input_tokens, finish.cache),
                provider=served.route.provider,
                omit_thinking=omitted,
            )
            events = source_citations.cite_stream(events, served.deltas, cited)
            if shown:
                events = native_search.add_events(events, shown, used)
            return typed_sse_lines(_priced(rt, call, served, events))

        stream = paced_stream(rt, caller, call, served, render)
        provider = served.route.provider
        return Answer(headers, stream=stream, provider=provider, on_whole=call.on_whole)
    completion = served.completions[0]
    if hidden:
        completion = replace(completion, reasoning=None)
    whole = messages.render_response(completion, id=ident, model=model, omit_thinking=omitted)
    source_citations.cite_content(whole["content"], cited)
    if shown:
        native_search.add_blocks(whole["content"], shown)
        whole["usage"]["server_tool_use"] = used
    whole["provider"] = served.route.provider
    spent = usage_records.Spent(
        completion.input_tokens,
        completion.output_tokens,
        completion.reasoning_tokens,
        completion.finish_reason,
        cache=completion.cache,
        stop_sequence=completion.stop_sequence,
    )
    charge = usage_records.record_usage(rt, caller, call, served, spent)
    whole["usage"] |= charges.usage_money(
        charge, served.route, spent.prompt, spent.completion, ENDPOINT, spent.cache
    )
    return Answer(headers, body=whole, provider=served.route.provider)


def _priced(
    rt: Runtime, call: service.Call, served: service.Served, events: Iterator[Any]
) -> Iterator[Any]:
    """The last usage (`message_delta`'s) carries the charge, as a whole answer's does;
    a `ping` follows `message_start`, as Anthropic's API sends one."""
    for event in events:
        if event["type"] == "message_start":
            yield event
            event = {"type": "ping"}
        elif event["type"] == "message_delta":
            usage = event["usage"]
            prompt, _ = messages.prompt_of(usage)
            tokens = prompt, usage["output_tokens"]
            usage |= usage_records.streamed_usage(rt, call, served, *tokens, ENDPOINT)
        yield event
