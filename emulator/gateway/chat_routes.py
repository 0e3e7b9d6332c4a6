"""POST /api/v1/chat/completions: parse, serve, answer whole or as a stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

from litestar import Controller, Request, Response, post
from litestar.params import JSONBody
from litestar.response import Stream

from emulator.auth.credentials import Caller
from emulator.errors import ValidationFailed
from emulator.gateway import service
from emulator.gateway.canonical import Delta, TextDelta
from emulator.gateway.chat_schemas import ChatCompletionRequest
from emulator.gateway.routing import ProviderPrefs
from emulator.gateway.tokens import count_text
from emulator.gateway.wire import chat
from emulator.runtime import Runtime
from emulator.web import API_PREFIX, BEARER, CallerDep, RuntimeDep, auth_opt, guard

KEEP_ALIVE = b": EMULATOR PROCESSING\n\n"
SLOW_PAUSE_S = 0.25


class ChatController(Controller):
    path = API_PREFIX
    guards = [guard]
    opt = auth_opt("api_key", "ai.gateway")
    security = BEARER
    tags = ["Gateway"]

    @post("/chat/completions", status_code=200, summary="A chat completion, whole or streamed")
    async def create(
        self,
        rt: RuntimeDep,
        caller: CallerDep,
        request: Request[Any, Any, Any],
        data: JSONBody[ChatCompletionRequest],
    ) -> Response[Any]:
        body = data.model_dump(by_alias=True, exclude_none=True)
        call = build_call(body, request.headers)
        served = service.serve(rt, caller, call)
        headers = {"X-Generation-Id": served.id}
        extra = {"provider": served.route.provider, "system_fingerprint": service.FINGERPRINT}
        if call.stream:
            chunks = stream_body(rt, caller, call, served, extra)
            # Exactly `text/event-stream` (no charset): clients pick their parser by it.
            stream_headers = {
                **headers,
                "content-type": "text/event-stream",
                "cache-control": "no-cache",
            }
            return Stream(chunks, media_type="text/event-stream", headers=stream_headers)
        answer = chat.render_response(
            served.completions,
            id=served.id,
            model=served.route.model,
            created=served.created,
            extra=extra,
        )
        prompt, output = answer["usage"]["prompt_tokens"], answer["usage"]["completion_tokens"]
        service.record_usage(rt, caller, call, served, prompt, output)
        answer["usage"] |= {"cost": 0.0, "charge_micros": 0}
        return Response(answer, headers=headers, media_type="application/json")


def build_call(body: dict[str, Any], headers: Any) -> service.Call:
    request = chat.parse_request(body)
    for index, message in enumerate(request.messages):
        if message.role == "tool" and not message.tool_call_id:
            raise ValidationFailed(
                "A message with role `tool` needs the `tool_call_id` it answers.",
                param=f"messages[{index}].tool_call_id",
            )
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema" and not (fmt.get("json_schema") or {}).get("schema"):
        raise ValidationFailed(
            "response_format json_schema needs `json_schema.schema`.",
            param="response_format.json_schema.schema",
        )
    service.check_tools(request, body.get("tools"))
    return service.Call(
        endpoint="chat.completions",
        model=body["model"],
        fallbacks=list(body.get("models") or ()),
        prefs=ProviderPrefs.from_body(body.get("provider")),
        request=request,
        stream=bool(body.get("stream")),
        metadata={
            "idempotency_key": headers.get("idempotency-key"),
            "http_referer": headers.get("http-referer"),
            "x_title": headers.get("x-title"),
        },
    )


async def stream_body(
    rt: Runtime, caller: Caller, call: service.Call, served: service.Served, extra: dict[str, Any]
) -> AsyncIterator[bytes]:
    """Chunks flushed one by one with --stream-delay-ms between them; the usage of
    what was sent is recorded when the stream ends, even if the client left early."""
    sent: list[str] = []
    finished: list[Delta] = []
    provider = rt.catalog.view().providers[served.route.provider]
    slow = provider.status == "slow" or provider.body.get("behavior") == "slow"
    pause = max(rt.settings.stream_delay_ms / 1000, SLOW_PAUSE_S if slow else 0)

    def tracked() -> Iterator[Delta]:
        for delta in served.deltas:
            if isinstance(delta, TextDelta):
                sent.append(delta.text)
            else:
                finished.append(delta)
            yield delta

    chunks = chat.render_chunks(
        tracked(), id=served.id, model=served.route.model, created=served.created, extra=extra
    )
    try:
        if slow:
            yield KEEP_ALIVE
        for line in service.sse_lines(chunks):
            yield line
            if pause:
                await asyncio.sleep(pause)
        yield b"data: [DONE]\n\n"
    finally:
        final = next((d for d in finished if hasattr(d, "input_tokens")), None)
        family = served.route.wire_format
        prompt = getattr(final, "input_tokens", 0)
        output = getattr(final, "output_tokens", None)
        if output is None:  # left before the end: count what was sent
            output = count_text("".join(sent), family)
        service.record_usage(rt, caller, call, served, prompt, output)
