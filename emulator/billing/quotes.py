"""POST /ai-gateway/quote: what a request would cost and whether it would pass.

The same routes, tokenizer, formula, hold and spend-limit decision as the
real request; nothing is held, charged or logged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.auth.credentials import Caller
from emulator.billing.pricing import charge_for
from emulator.billing.spend import spend_standing
from emulator.bodies import validate
from emulator.errors import ValidationFailed
from emulator.gateway import audio, audio_output, image_output, kept_audio, stored_responses
from emulator.gateway.body_checks import check_body
from emulator.gateway.canonical import Request
from emulator.gateway.charges import (
    MediaTokens,
    fees_of,
    media_bills,
    provider_prompt_tokens,
    worst_case,
    worst_hold,
)
from emulator.gateway.chat_schemas import ChatCompletionRequest
from emulator.gateway.messages_schemas import MessagesRequest
from emulator.gateway.middle_out import asked
from emulator.gateway.requirements import able_routes
from emulator.gateway.responses_schemas import ResponsesRequest
from emulator.gateway.routing import ProviderPrefs, Route
from emulator.gateway.schema_checks import check_output_schema, check_tools
from emulator.gateway.server_tools import billed_fetches, tool_micros
from emulator.gateway.service import candidates, capped, premium_unapproved
from emulator.gateway.wire import chat, messages, responses
from emulator.jobs.service import settled_read
from emulator.store import reservations

if TYPE_CHECKING:
    from emulator.runtime import Runtime


def quote(rt: Runtime, caller: Caller, body: dict[str, Any]) -> dict[str, Any]:
    endpoint = _endpoint(body)
    body, request = _read(rt, caller, body, endpoint)
    check_tools(request, endpoint)
    check_output_schema(request, endpoint)
    view = rt.catalog.view()
    prefs = ProviderPrefs.from_body(body.get("provider"))
    routes, request, searched, runs = candidates(rt, caller, body, request)
    fetched, drawn_micros = billed_fetches(runs), tool_micros(runs)
    routes, request = able_routes(view, routes, request, endpoint, prefs, asked(body))
    fees = fees_of(view)
    first = routes[0]
    prompt, output = _tokens(first, request)
    drawn = image_output.tokens_asked(request, first.model)
    output += drawn  # each answer's image, beside the text
    spoken = audio_output.share_of(output) if request.audio_out is not None else 0
    heard = audio.prompt_tokens(request)
    media = media_bills(
        first, MediaTokens(image_tokens=drawn, audio_tokens=spoken, heard_tokens=heard)
    )
    price = first.prompt_micros_per_mtok, first.completion_micros_per_mtok
    charge = charge_for(
        prompt, output, *price, fees, search_results=searched, web_fetches=fetched,
        media=media, tool_micros=drawn_micros,
    )  # fmt: skip
    hold = worst_hold(routes, request, fees, searched, fetched, drawn_micros)
    # After the refunds of jobs failed by now, as the request's own hold sees the balance
    available, spend = settled_read(
        rt,
        caller.account_id,
        lambda conn: (
            reservations.available(conn, caller.account_id) or 0,
            spend_standing(conn, caller.key, rt.clock.now()),
        ),
    )
    return {
        "object": "quote",
        "endpoint": endpoint,
        "model": first.model,
        "provider": first.provider,
        "estimated_input_tokens": prompt,
        "estimated_output_tokens": output,
        "estimated_provider_cost_micros": charge.provider_cost_micros,
        "estimated_platform_fee_micros": charge.platform_fee_micros,
        "estimated_charge_micros": charge.charge_micros,
        "fallback_charge_micros": (
            worst_case(routes[1], request, fees, searched, None, fetched, drawn_micros)
            if len(routes) > 1
            else None
        ),
        "hold_micros": hold,
        "available_micros": available,
        "sufficient_balance": available >= hold,
        "spend_limit": spend.wire(hold),
        # The request itself would be 402 `premium_approval_required`.
        "premium_approval_required": bool(premium_unapproved(caller, view, routes)),
    }


def _endpoint(body: dict[str, Any]) -> str:
    """The endpoint quoted: `messages` is a chat completion (or, with `endpoint:
    "messages"`, an Anthropic-format message, which the messages route checks), `input`
    a response."""
    asked = body.get("endpoint")
    if asked == "messages":  # its `input`, as other fields it does not read, is dropped
        return "messages"
    if ("messages" in body) == ("input" in body):
        raise ValidationFailed(
            "Send exactly one of `input` (to quote a response) and `messages` (to quote a "
            'chat completion, or a message with `endpoint: "messages"`).',
            param="input",
        )
    endpoint = "chat.completions" if "messages" in body else "responses"
    if asked is not None and (asked == "responses") != (endpoint == "responses"):
        takes = "input" if asked == "responses" else "messages"
        raise ValidationFailed(
            f"The endpoint {asked!r} takes `{takes}`: send `{takes}`, or leave `endpoint` out.",
            param="endpoint",
        )
    return endpoint


def _read(
    rt: Runtime, caller: Caller, body: dict[str, Any], endpoint: str
) -> tuple[dict[str, Any], Request]:
    """The body and its request, read and checked as the endpoint itself reads them (the
    quote's own schema leaves the request's fields to the endpoint's)."""
    if endpoint == "messages":
        body = validate(body, MessagesRequest).model_dump(by_alias=True, exclude_none=True)
        check_body(body, endpoint)
        return body, messages.parse_request(body)
    chat_body = endpoint == "chat.completions"
    model = ChatCompletionRequest if chat_body else ResponsesRequest
    body = validate(body, model).model_dump(by_alias=True, exclude_none=True)
    if chat_body:
        body = kept_audio.read_back(rt, caller.account_id, body)
    talk = (
        stored_responses.Conversation(body)
        if chat_body
        else stored_responses.conversation(rt, caller.account_id, body)
    )
    check_body(talk.body, endpoint, talk.history)
    body = talk.whole()
    # A response as `/responses` reads it: `max_output_tokens` only (a `max_tokens` there
    # is an unknown field the request ignores, so the quote must too, or it would promise
    # less).
    return body, chat.parse_request(body) if chat_body else responses.parse_request(body)


def _tokens(route: Route, request: Request) -> tuple[int, int]:
    prompt = provider_prompt_tokens(capped(request, route), route.wire_format)
    return prompt, (capped(request, route).max_tokens or 0) * request.n
