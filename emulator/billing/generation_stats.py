"""OpenRouter's generation stats (`GET /api/v1/generation?id=gen_...`): a usage event in
the shape OpenRouter's clients read (`{"data": {...}}`, costs in USD as numbers).

The same event as `GET /ai-gateway/usage/{id}`, which stays the exact one (micros).
What the emulator does not know (moderation, app ids, media counts, the client's
user agent) is null, as OpenRouter leaves it when it does not apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.billing.money import usd_number
from emulator.billing.pricing import CacheBill, prompt_cost_mtok
from emulator.errors import NotFound
from emulator.gateway.wire import native_finish
from emulator.gateway.wire.responses_items import generation_of
from emulator.store.usage import UsageEvent, get_usage_event

if TYPE_CHECKING:
    from emulator.gateway.catalog import CatalogView
    from emulator.runtime import Runtime

# Stats OpenRouter keeps that nothing in the emulator produces.
_UNKNOWN = (
    "app_id",
    "external_user",
    "moderation_latency",
    "num_fetches",
    "num_media_prompt",
    "preset_id",
    "router",
    "service_tier",
    "session_id",
    "upstream_id",
    "user_agent",
    "workspace_id",
)


def generation_stats(rt: Runtime, account_id: str, generation_id: str) -> dict[str, Any]:
    """The stats of one of the account's gateway requests, by its usage event's id (or its
    response's: `resp_x` is `gen_x`)."""
    with rt.store.read() as conn:
        event = get_usage_event(conn, account_id, generation_of(generation_id))
    if event is None:
        hint = ""
        if generation_id.startswith("vgen_"):  # a video's record, asked for on the wrong path
            hint = (
                " `?id=` takes gateway request ids (`gen_...`): read the video's record at "
                f"GET /generation/{generation_id}"
            )
        raise NotFound(
            f"No gateway generation {generation_id!r} in this account.{hint}", param="id"
        )
    view = rt.catalog.view()
    names = {name: row.body["display_name"] for name, row in view.providers.items()}
    return {"data": _stats(event, names, _cache_discount(event, view))}


def _cache_discount(event: UsageEvent, view: CatalogView) -> float:
    """What the provider's prompt cache saved (USD; negative when writing cost more than
    it saved), at the serving route's prices in the catalog now."""
    if not (event.cached_tokens or event.cache_write_tokens):
        return 0.0
    model = view.by_id.get(event.model) or {}
    route = next((p for p in model.get("providers", ()) if p["name"] == event.provider), None)
    if route is None:
        return 0.0
    pricing = route["pricing"]
    prompt = int(pricing["prompt_micros_per_mtok"])
    written = event.cache_write_tokens
    # Without the hour's writes apart (the event keeps their sum), at the write price.
    cached = CacheBill(
        event.cached_tokens,
        written,
        0,
        pricing.get("cache_read_micros_per_mtok") or 0,
        pricing.get("cache_write_micros_per_mtok") or prompt,
    )
    plain = event.prompt_tokens * prompt
    return (plain - prompt_cost_mtok(event.prompt_tokens, prompt, cached)) / 1e12


def _stats(
    event: UsageEvent, provider_names: dict[str, str], cache_discount: float
) -> dict[str, Any]:
    attempts = event.route_attempts
    served = next((a for a in attempts if a.get("status") == "succeeded"), None)
    referer = event.metadata.get("http_referer")
    return dict(
        id=event.id,
        model=event.model,
        created_at=event.created_at,
        api_type="completions",  # OpenRouter's word for chat and responses alike
        data_region="global",
        is_byok=False,
        streamed=bool(event.metadata.get("stream")),
        cancelled=event.metadata.get("stream_end") == "client_left",
        provider_name=provider_names.get(event.provider or "", event.provider),
        provider_responses=[_attempt(a, provider_names) for a in attempts],
        latency=sum(a.get("latency_ms") or 0 for a in attempts),
        generation_time=served.get("latency_ms") if served else None,
        tokens_prompt=event.prompt_tokens,
        tokens_completion=event.completion_tokens,
        native_tokens_prompt=event.prompt_tokens,
        native_tokens_completion=event.completion_tokens,
        native_tokens_cached=event.cached_tokens,
        native_tokens_reasoning=event.reasoning_tokens,
        finish_reason=event.finish_reason,
        native_finish_reason=native_finish(
            served["wire_format"], event.finish_reason, event.stop_sequence
        )
        if served
        else None,
        cache_discount=cache_discount,
        num_search_results=event.web_search_results or None,
        num_input_audio_prompt=event.metadata.get("audio_inputs"),
        num_media_completion=event.metadata.get("images_out"),
        native_tokens_completion_images=event.metadata.get("image_tokens"),
        web_search_engine="exa" if event.web_search_results else None,
        total_cost=usd_number(event.charge_micros),
        usage=usd_number(event.charge_micros),
        upstream_inference_cost=usd_number(event.provider_cost_micros),
        origin=referer or "",
        http_referer=referer,
        request_id=event.metadata.get("request_id"),
        **dict.fromkeys(_UNKNOWN),
    )


def _attempt(attempt: dict[str, Any], provider_names: dict[str, str]) -> dict[str, Any]:
    """One route attempt as OpenRouter lists a provider's response (HTTP status 200 or,
    for a failed one, the 503 the gateway saw)."""
    provider = attempt.get("provider") or ""
    return {
        "status": 200 if attempt.get("status") == "succeeded" else 503,
        "provider_name": provider_names.get(provider, provider),
        "model_permaslug": attempt.get("model"),
        "latency": attempt.get("latency_ms"),
        "is_byok": False,
    }
