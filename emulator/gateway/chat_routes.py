"""POST /api/v1/chat/completions: parse, serve, answer whole or as a stream."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from litestar import Controller, Request, Response, post
from litestar.params import JSONBody

from emulator.auth.credentials import Caller, RouteAuth
from emulator.bodies import parse_body
from emulator.direct import DirectRequest, DirectRoute, serve_declared
from emulator.gateway import (
    audio,
    body_checks,
    charges,
    files,
    kept_audio,
    service,
    usage_records,
    web_citations,
)
from emulator.gateway.answers import Answer, gateway_reply
from emulator.gateway.canonical import Delta, ReasoningDelta
from emulator.gateway.chat_schemas import ChatCompletionRequest
from emulator.gateway.records import ChatCompletion
from emulator.gateway.streaming import paced_stream, sse_lines
from emulator.gateway.wire import chat, chat_chunks
from emulator.openapi_answers import INFERENCE, WHOLE_OR_STREAMED, Streamed
from emulator.runtime import Runtime
from emulator.web import API_PREFIX, BEARER, Reply, answers


def chat_completions(request: DirectRequest) -> Reply:
    data = parse_body(request.body, ChatCompletionRequest)
    return gateway_reply(request, "chat.completions", data, complete)


CHAT_COMPLETIONS = DirectRoute(
    "POST",
    f"{API_PREFIX}/chat/completions",
    RouteAuth("api_key", ("ai.gateway",)),
    chat_completions,
)


class ChatController(Controller):
    """The declaration (OpenAPI, 405s): `CHAT_COMPLETIONS` serves it, in `emulator.direct`."""

    path = API_PREFIX
    opt = CHAT_COMPLETIONS.opt
    security = BEARER
    tags = ["Gateway"]

    @post(
        "/chat/completions",
        status_code=200,
        summary="A chat completion, whole or streamed",
        responses={**answers(ChatCompletion, WHOLE_OR_STREAMED), **INFERENCE},
        operation_class=Streamed,
    )
    async def create(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[ChatCompletionRequest],
    ) -> Response[Any]:
        return await serve_declared(request, CHAT_COMPLETIONS)


def complete(
    rt: Runtime, caller: Caller, body: dict[str, Any], metadata: dict[str, Any], origin: str
) -> Answer:
    body = kept_audio.read_back(rt, caller.account_id, body)
    call = build_call(body, metadata, origin)
    served = service.serve(rt, caller, call)
    extra = {"provider": served.route.provider, "system_fingerprint": service.FINGERPRINT}
    ident, model, created = served.id, served.route.model, served.created
    answer_headers = {"X-Generation-Id": ident}
    parsed = files.parsed_files(body["messages"])  # the PDFs read, handed back
    hidden = service.hides_reasoning(call.request, served.route)
    served_as = served.route.wire_format
    # The answer's own fields, whole or streamed; `native`: the provider's finish words.
    shape: dict[str, Any] = {
        "id": ident,
        "model": model,
        "created": created,
        "extra": extra,
        "native": served_as,
        "reasoning_style": served_as,
    }
    if call.stream:
        if call.request.audio_out is not None:
            kept_audio.keep(rt, caller.account_id, served.deltas, created)

        def render(deltas: Iterator[Delta]) -> Iterator[bytes]:
            if hidden:  # taken (and billed) all the same
                deltas = (d for d in deltas if not isinstance(d, ReasoningDelta))
            tools_first = chat_chunks.starts_with_tool_call(served.deltas)
            chunks = chat_chunks.render_chunks(deltas, tools_first=tools_first, **shape)
            if served.web_results or parsed:
                cited = served.web_results
                chunks = web_citations.annotated_chunks(chunks, served.deltas, cited, parsed)
            if call.upstream is not None:  # OpenRouter's debug chunk goes first
                debug = {"echo_upstream_body": call.upstream}
                head = {"id": ident, "object": "chat.completion.chunk", "created": created}
                first = {**head, "model": model, **extra, "choices": [], "debug": debug}
                chunks = itertools.chain([first], chunks)
            return sse_lines(_priced(rt, call, served, chunks))

        stream = paced_stream(rt, caller, call, served, render, tail=b"data: [DONE]\n\n")
        provider = served.route.provider
        return Answer(answer_headers, stream=stream, provider=provider, on_whole=call.on_whole)
    completions = served.completions
    if hidden:  # `exclude`: billed, not returned
        completions = [replace(c, reasoning=None) for c in completions]
    answer = chat.render_response(completions, **shape)
    if served.web_results or parsed:
        web_citations.annotate_chat(answer, completions, served.web_results, parsed)
    usage = answer["usage"]
    usage["prompt_tokens_details"]["audio_tokens"] = audio.prompt_tokens(call.request)
    details = usage["completion_tokens_details"]
    spent = usage_records.Spent(
        usage["prompt_tokens"],
        usage["completion_tokens"],
        details["reasoning_tokens"],
        completions[0].finish_reason,
        cache=completions[0].cache,
        stop_sequence=completions[0].stop_sequence,
        media=charges.media_of(details, sum(len(c.images) for c in completions)),
    )
    charge = usage_records.record_usage(rt, caller, call, served, spent)
    answer["usage"] |= charges.usage_money(
        charge, served.route, spent.prompt, spent.completion, cache=spent.cache,
        media=spent.media,
    ) | usage_records.tool_use(call, served)  # fmt: skip
    return Answer(answer_headers, body=answer, provider=served.route.provider)


def _priced(
    rt: Runtime, call: service.Call, served: service.Served, chunks: Iterator[Any]
) -> Iterator[Any]:
    """The usage chunk carries the charge, as a whole answer's usage does."""
    for chunk in chunks:
        usage = chunk.get("usage")
        if usage and not chunk["choices"]:
            tokens = usage["prompt_tokens"], usage["completion_tokens"]
            usage["prompt_tokens_details"]["audio_tokens"] = audio.prompt_tokens(call.request)
            media = charges.media_of(usage["completion_tokens_details"])
            usage |= usage_records.streamed_usage(
                rt, call, served, *tokens, "chat.completions", media
            )
        yield chunk


def build_call(body: dict[str, Any], metadata: dict[str, Any], origin: str) -> service.Call:
    body_checks.check_body(body, "chat.completions")
    request = chat.parse_request(body)
    return service.new_call("chat.completions", body, request, metadata, origin)
