"""What a gateway request is held and charged: the worst case over its routes before
the first attempt, and the served route's charge for the tokens it used (SPEC section
5; the formula itself is `billing.pricing`'s), with OpenRouter's accounting of it on
the answer's `usage`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from emulator.billing.money import usd_number
from emulator.billing.pricing import (
    Charge,
    Fees,
    MediaBill,
    charge_for,
    completion_cost_mtok,
    heard_cost_mtok,
    prompt_cost_mtok,
)
from emulator.gateway import audio, image_output, prompt_cache, server_tools
from emulator.gateway.canonical import CacheUse, Request
from emulator.gateway.catalog import CatalogView
from emulator.gateway.content import prompt_tokens
from emulator.gateway.providers import WIRE
from emulator.gateway.routing import Route

if TYPE_CHECKING:
    from emulator.gateway.service import Served
    from emulator.runtime import Runtime


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


def output_limit(request: Request, route: Route) -> int:
    return min(request.max_tokens or route.max_output_tokens, route.max_output_tokens)


def worst_hold(
    routes: list[Route],
    request: Request,
    fees: Fees,
    searched: int = 0,
    fetched: int = 0,
    tool_micros: int = 0,
) -> int:
    """The hold before the first attempt: the most any of the routes can charge
    (`searched`: web search results in the prompt, `fetched`: pages the web fetch tool
    read, each charged, `tool_micros`: the images the image generation tool drew)."""
    reshaped = _reshaped(request)
    return max(
        worst_case(route, request, fees, searched, reshaped, fetched, tool_micros)
        for route in routes
    )


def worst_case(
    route: Route,
    request: Request,
    fees: Fees,
    searched: int = 0,
    reshaped: bool | None = None,
    fetched: int = 0,
    tool_micros: int = 0,
) -> int:
    """The most this route can charge for the request (`reshaped`: `_reshaped(request)`,
    when known)."""
    prompt = prompt_tokens(request, route.wire_format)
    if reshaped is None:
        reshaped = _reshaped(request)
    if reshaped:  # then also as the provider reads it, and the larger
        prompt = max(prompt, provider_prompt_tokens(request, route.wire_format))
    output = output_limit(request, route) * request.n
    media: tuple[MediaBill, ...] = ()
    if request.images_out is not None:  # each answer's image, beside its text
        drawn = image_output.tokens_asked(request, route.model)
        output += drawn
        media = media_bills(route, MediaTokens(image_tokens=drawn))
    elif request.audio_out is not None:  # within the output: at most all of it sound
        media = media_bills(route, MediaTokens(audio_tokens=output), worst=True)
    if route.audio_input_micros_per_mtok is not None:  # the audio heard, at its price
        heard = MediaTokens(heard_tokens=audio.prompt_tokens(request))
        media += media_bills(route, heard, worst=True)
    # A cache read costs no more than the prompt (fixtures); a write at a breakpoint can.
    prompt_price = route.prompt_micros_per_mtok
    explicit = route.wire_format == prompt_cache.EXPLICIT_FORMAT
    if explicit and route.cache_read_micros_per_mtok is not None:
        prompt_price = prompt_cache.worst_prompt_price(route, request)
    price = prompt_price, route.completion_micros_per_mtok
    charge = charge_for(
        prompt,
        output,
        *price,
        fees,
        search_results=searched,
        web_fetches=fetched,
        media=media,
        tool_micros=tool_micros,
    )
    return charge.charge_micros


@dataclass(frozen=True, slots=True)
class MediaTokens:
    """Of an answer's tokens, those priced apart: of its output, its generated images (how
    many, and their tokens, `gateway.image_output`) and its sound's
    (`gateway.audio_output`); of its prompt, the audio heard (`gateway.audio`)."""

    images: int = 0
    image_tokens: int = 0
    audio_tokens: int = 0
    heard_tokens: int = 0


def media_of(details: dict[str, Any], images: int = 0) -> MediaTokens | None:
    """The output tokens priced apart that a chat usage's `completion_tokens_details` tells
    (or a responses usage's `output_tokens_details`); the prompt's audio is added where
    the route prices it (`usage_records.with_heard`)."""
    image_tokens, audio_tokens = details.get("image_tokens", 0), details.get("audio_tokens", 0)
    if not image_tokens and not audio_tokens:  # nearly every answer
        return None
    return MediaTokens(images if image_tokens else 0, image_tokens, audio_tokens)


def media_bills(
    route: Route, media: MediaTokens | None, worst: bool = False
) -> tuple[MediaBill, ...]:
    """Generated images' and sound's tokens at the route's prices for them (none: the
    completion's), and the audio heard at its (none: the prompt's). `worst`: a hold's
    bound, never below the completion's (the prompt's) price."""
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
    heard = route.audio_input_micros_per_mtok
    if media.heard_tokens and heard is not None:
        heard = max(heard, route.prompt_micros_per_mtok) if worst else heard
        bills.append(MediaBill(media.heard_tokens, heard, prompt=True))
    return tuple(bills)


def fees_of(view: CatalogView) -> Fees:
    return view.fees


def charge_of(
    rt: Runtime,
    served: Served,
    prompt: int,
    completion: int,
    cache: CacheUse | None = None,
    media: MediaTokens | None = None,
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
    drawn = server_tools.tool_micros(served.tool_runs)
    return charge_for(prompt, completion, *price, fees, bill, searched, fetched, bills, drawn)


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
    media: MediaTokens | None = None,
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
    if media is not None and media.heard_tokens:
        prompt_cost += heard_cost_mtok(route.prompt_micros_per_mtok, media_bills(route, media))
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
