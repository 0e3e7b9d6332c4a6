"""OpenRouter's other catalog views, which its SDKs call: the count of models
(`GET /models/count`), a model's endpoints (`GET /models/{author}/{slug}/endpoints`: one
per provider serving it) and the providers (`GET /providers`). All of them are read from
the same catalog view as `GET /models`.

An endpoint's live figures are the fixtures': its latency and throughput as every
percentile, its uptime 100 when the provider is up (0 when marked down), and its
`status` 0 when up, -1 when slow, -2 when down.
"""

from __future__ import annotations

from typing import Any

from emulator.gateway.catalog import CatalogView, filtered_models, find_model
from emulator.gateway.logprobs import FORMATS as LOGPROB_FORMATS
from emulator.paging import page_in_order

_STATUS = {"up": 0, "slow": -1, "down": -2}
_UNEMULATED = " (emulated)"
_LOGPROB_PARAMETERS = frozenset({"logprobs", "top_logprobs"})


def count(
    view: CatalogView, output_modalities: str | None = None, parameters: str | None = None
) -> dict[str, Any]:
    return {"data": {"count": len(filtered_models(view, output_modalities, parameters))}}


def endpoints(view: CatalogView, model_id: str) -> dict[str, Any]:
    """The model and an entry per provider that serves it, in routing order."""
    model = find_model(view, model_id)
    architecture = model["architecture"]
    return {
        "data": {
            "id": model["id"],
            "name": model["name"],
            "created": model["created"],
            "description": model["description"],
            "architecture": {
                "tokenizer": architecture["tokenizer"],
                "instruct_type": None,
                "modality": architecture["modality"],
                "input_modalities": architecture["input_modalities"],
                "output_modalities": architecture["output_modalities"],
            },
            "endpoints": [_endpoint(model, route) for route in model["providers"]],
        }
    }


# A route's prices as OpenRouter names them (USD per token, or per image or request).
_PRICES = frozenset(
    {"prompt", "completion", "image", "request", "input_cache_read", "input_cache_write"}
)


def _endpoint(model: dict[str, Any], route: dict[str, Any]) -> dict[str, Any]:
    tools = model["capabilities"]["tools"]
    up = route["status"] != "down"
    latency = float(route["latency_ms"])
    throughput = float(route["throughput_tps"])
    shown = route["display_name"].removesuffix(_UNEMULATED)
    return {
        "name": f"{shown} | {model['id']}",
        "model_id": model["id"],
        "model_name": model["name"],
        "provider_name": shown,
        "tag": route["name"],
        "context_length": route["context_length"],
        "max_completion_tokens": route["max_output_tokens"],
        "max_prompt_tokens": None,
        "pricing": {k: v for k, v in route["pricing"].items() if k in _PRICES},
        "quantization": None,
        "service_tier": None,
        "status": _STATUS.get(route["status"], 0),
        "supported_parameters": _route_parameters(model, route),
        # Cached without being asked: the routes that cache, but for `messages` routes,
        # which cache at the client's `cache_control` breakpoints (`prompt_cache`).
        "supports_implicit_caching": "input_cache_read" in route["pricing"]
        and route["wire_format"] != "messages",
        "supports_tool_choice": {
            "auto": tools,
            "none": tools,
            "required": tools,
            "function": tools,
        },
        "supports_diarization": False,
        "native_tools": {},
        "uptime_last_5m": 100.0 if up else 0.0,
        "uptime_last_30m": 100.0 if up else 0.0,
        "uptime_last_1d": 100.0 if up else 0.0,
        "latency_last_30m": dict.fromkeys(("p50", "p75", "p90", "p99"), latency),
        "throughput_last_30m": dict.fromkeys(("p50", "p75", "p90", "p99"), throughput),
    }


def _route_parameters(model: dict[str, Any], route: dict[str, Any]) -> list[str]:
    """The model's parameters this provider takes: log probabilities only where its wire
    format gives them (as `provider.require_parameters` routes them)."""
    if route["wire_format"] in LOGPROB_FORMATS:
        return list(model["supported_parameters"])
    return [p for p in model["supported_parameters"] if p not in _LOGPROB_PARAMETERS]


def providers(view: CatalogView, limit: int | None, cursor: str | None) -> dict[str, Any]:
    """The catalog's providers, by display name and slug (no policies: emulated): as
    OpenRouter lists them (`data`), paged as SPEC section 8's lists are (all by default)."""
    rows = list(view.providers.items())
    return page_in_order(
        rows,
        limit,
        cursor,
        lambda item: item[0],
        lambda item: {
            "name": item[1].body["display_name"].removesuffix(_UNEMULATED),
            "slug": item[0],
            "privacy_policy_url": None,
            "terms_of_service_url": None,
            "status_page_url": None,
        },
        default=len(rows) or 1,
        maximum=500,
    )
