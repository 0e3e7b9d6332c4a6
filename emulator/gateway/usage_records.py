"""What a served (or failed) gateway request leaves: its hold settled at the charge
with one usage event, or released with a failed one, and what its answer's `usage`
says of the money and of the server tools the model called."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from emulator.auth.credentials import Caller
from emulator.billing import holds
from emulator.billing.pricing import Charge
from emulator.gateway import audio, server_tools, web_search
from emulator.gateway.canonical import CacheUse, Finish
from emulator.gateway.charges import MediaTokens, charge_of, usage_money
from emulator.gateway.routing import model_variant
from emulator.store.usage import UsageEvent

if TYPE_CHECKING:
    from emulator.gateway.service import Call, Served
    from emulator.runtime import Runtime


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
    media: MediaTokens | None = None  # the tokens priced apart (output media, audio heard)


def record_usage(rt: Runtime, caller: Caller, call: Call, served: Served, spent: Spent) -> Charge:
    """Settle the hold at the real charge and write the usage event, in one transaction."""
    route = served.route
    spent.media = with_heard(call, served, spent.media)
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
    drawn = server_tools.tool_micros(served.tool_runs)
    if drawn:  # what of the provider cost the image generation tool's pictures were
        event.metadata["image_generation_micros"] = drawn
    event.total_tokens = prompt + completion
    event.provider_cost_micros = charge.provider_cost_micros
    event.platform_fee_micros = charge.platform_fee_micros
    event.charge_micros = charge.charge_micros
    event.margin_micros = charge.margin_micros
    assert call.hold is not None
    holds.settle(rt, call.hold, event)
    holds.cut_to_hold(call.hold, charge)  # the answer says what settling charged
    return charge


def streamed_usage(
    rt: Runtime,
    call: Call,
    served: Served,
    prompt: int,
    completion: int,
    endpoint: str,
    media: MediaTokens | None = None,
) -> dict[str, Any]:
    """A stream's last usage's money (`usage_money`), priced before the stream is
    settled: what settling will charge."""
    cache = served_cache(served)
    media = with_heard(call, served, media)
    charge = charge_of(rt, served, prompt, completion, cache, media)
    if call.hold is not None:
        holds.cut_to_hold(call.hold, charge)
    money = usage_money(charge, served.route, prompt, completion, endpoint, cache, media)
    return money | tool_use(call, served)


def with_heard(call: Call, served: Served, media: MediaTokens | None) -> MediaTokens | None:
    """`media` with the prompt's audio tokens, when the route prices them apart."""
    if served.route.audio_input_micros_per_mtok is None:  # nearly every route
        return media
    heard = audio.prompt_tokens(call.request)
    if not heard:
        return media
    return replace(media or MediaTokens(), heard_tokens=heard)


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
