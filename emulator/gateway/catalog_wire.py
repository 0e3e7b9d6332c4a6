"""The catalog's models, their routes and the pricing object, in the shape clients read
(OpenRouter's fields, with Anthropic's Models API fields beside them)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from emulator.billing.money import micros_to_usd, per_token_usd, usd_compact
from emulator.gateway import free_tier
from emulator.gateway.logprobs import FORMATS as LOGPROB_FORMATS
from emulator.store.catalog import ModelRow, ProviderRow, ServingRow

_CAPABILITY_PARAMETERS = {
    "tools": ["tools", "tool_choice"],
    "structured_output": ["response_format", "structured_outputs"],
    "reasoning": ["reasoning", "include_reasoning"],
}


_COMMON_PARAMETERS = ["max_tokens", "temperature", "top_p", "stop", "seed", "stream"]


def anthropic_fields(
    created: datetime, name: str, context: int | None, output: int | None
) -> dict[str, Any]:
    """What Anthropic's Models API items carry beside OpenRouter's (its SDKs read them)."""
    return {
        "type": "model",
        "display_name": name,
        "created_at": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "lifecycle": "active",
        "max_input_tokens": context,
        "max_tokens": output,
    }


def model_wire(
    model: ModelRow, serving: list[ServingRow], providers: dict[str, ProviderRow]
) -> dict[str, Any]:
    body = model.body
    created = datetime.fromisoformat(body["created"]).replace(tzinfo=UTC)
    routes = [provider_wire(entry, providers[entry.provider], body) for entry in serving]
    capabilities = set(body["capabilities"])
    parameters = list(_COMMON_PARAMETERS)
    for capability, names in _CAPABILITY_PARAMETERS.items():
        if capability in capabilities:
            parameters += names
    if any(route["wire_format"] in LOGPROB_FORMATS for route in routes):
        parameters += ["logprobs", "top_logprobs"]
    top = routes[0] if routes else None
    inputs, outputs = body["input_modalities"], body["output_modalities"]
    return {
        "id": model.id,
        "canonical_slug": model.id,
        "object": "model",
        "created": int(created.timestamp()),
        **anthropic_fields(
            created, body["name"], body["context_length"], body["max_output_tokens"]
        ),
        "owned_by": model.vendor,
        "vendor": model.vendor,
        "name": body["name"],
        "description": body["description"],
        "context_length": body["context_length"],
        "max_output_tokens": body["max_output_tokens"],
        "modality": model.modality,
        "architecture": {
            "modality": f"{'+'.join(inputs)}->{'+'.join(outputs)}",
            "input_modalities": inputs,
            "output_modalities": outputs,
            "tokenizer": body["tokenizer"],
        },
        "pricing": top["pricing"] if top else None,
        "capabilities": {
            name: name in capabilities
            for name in ("tools", "structured_output", "streaming", "vision", "reasoning")
        },
        "supported_parameters": parameters,
        "data_policy": body["data_policy"],
        "premium": model.premium,
        "default_reasoning": body.get("default_reasoning"),
        "top_provider": {
            **top,
            "is_moderated": False,
            "max_completion_tokens": top["max_output_tokens"],
        }
        if top
        else None,
        "providers": routes,
        "default_parameters": {},
        "per_request_limits": None,
        "supported_voices": None,
        "links": {"details": f"/api/v1/models/{model.id}"},
        "emulated": True,
    }


VIDEO_PARAMETERS = [
    "task_type", "prompt", "negative_prompt", "aspect_ratio", "duration",
    "mode", "sound", "image_list", "image_url", "seed",
]  # fmt: skip


def video_model_wire(model: dict[str, Any]) -> dict[str, Any]:
    """A video model (fixtures/video.yaml) in the catalog's shape: no tokens and no
    gateway routes; what `POST /generate/video` accepts and costs is under `video`."""
    vendor = model["id"].split("/", 1)[0]
    created = datetime.fromisoformat(str(model.get("created", "2025-01-01"))).replace(tzinfo=UTC)
    takes_images = any(t != "text2video" for t in model["task_types"])
    inputs = ["text", "image"] if takes_images else ["text"]
    return {
        "id": model["id"],
        "canonical_slug": model["id"],
        "object": "model",
        "created": int(created.timestamp()),
        **anthropic_fields(created, model["name"], None, None),
        "owned_by": vendor,
        "vendor": vendor,
        "name": model["name"],
        "description": model["description"],
        "context_length": None,
        "max_output_tokens": None,
        "modality": "video",
        "architecture": {
            "modality": f"{'+'.join(inputs)}->video",
            "input_modalities": inputs,
            "output_modalities": ["video"],
            "tokenizer": "Other",  # OpenRouter's word for no text tokenizer (never null)
        },
        "pricing": free_tier.ZERO_PRICES,
        "capabilities": {
            "tools": False,
            "structured_output": False,
            "streaming": False,
            "vision": takes_images,
            "reasoning": False,
        },
        "supported_parameters": VIDEO_PARAMETERS,
        "data_policy": {"training": False, "retention_days": 30, "zero_data_retention": False},
        "premium": False,
        "default_reasoning": None,
        "top_provider": {"name": "vidprov", "is_moderated": False, "modality": "video"},
        "providers": [],
        "default_parameters": {},
        "per_request_limits": None,
        "supported_voices": None,
        "links": {"details": f"/api/v1/models/{model['id']}"},
        "emulated": True,
        "video": {
            "endpoint": "/api/v1/generate/video",
            "task_types": model["task_types"],
            "aspect_ratios": model["aspect_ratios"],
            "durations": [f"{seconds}s" for seconds in model["durations"]],
            "modes": [
                {"mode": mode, "micros_per_second": micros, "usd_per_second": usd_compact(micros)}
                for mode, micros in model["modes"].items()
            ],
            "sound": model.get("sound", False),
            "max_images": model.get("max_images", 1) if takes_images else 0,
        },
    }


def provider_wire(
    entry: ServingRow, provider: ProviderRow, model_body: dict[str, Any]
) -> dict[str, Any]:
    extra = entry.body
    wire = {
        "name": provider.name,
        "display_name": provider.body["display_name"],
        "wire_format": provider.wire_format,
        "status": provider.status,
        "context_length": extra.get("context_length") or model_body["context_length"],
        "max_output_tokens": extra.get("max_output_tokens") or model_body["max_output_tokens"],
        "latency_ms": provider.latency_ms,
        "throughput_tps": provider.body["throughput_tps"],
        "pricing": {
            "prompt": per_token_usd(entry.prompt_micros_per_mtok),
            "completion": per_token_usd(entry.completion_micros_per_mtok),
            "image": usd_compact(extra.get("image_micros", 0)),
            "request": usd_compact(extra.get("request_micros", 0)),
            "prompt_micros_per_mtok": entry.prompt_micros_per_mtok,
            "completion_micros_per_mtok": entry.completion_micros_per_mtok,
            "image_micros": extra.get("image_micros", 0),
            "request_micros": extra.get("request_micros", 0),
        },
    }
    pricing = wire["pricing"]
    prices = (
        ("cache_read", "input_cache_read"),
        ("cache_write", "input_cache_write"),
        ("image_output", "image_output"),
        ("audio_output", "audio_output"),
        ("audio_input", "audio"),
    )
    for price, name in prices:
        micros = extra.get(f"{price}_micros_per_mtok")
        if micros is not None:  # OpenRouter lists the cache's prices where there are some
            pricing[name] = per_token_usd(micros)
            pricing[f"{price}_micros_per_mtok"] = micros
    return wire


def pricing_wire(pricing: dict[str, Any], models: list[dict[str, Any]]) -> dict[str, Any]:
    packages = [
        {
            **package,
            "amount_usd": micros_to_usd(package["amount_micros"]),
            "credited_micros": package["amount_micros"] + package["bonus_micros"],
        }
        for package in pricing.get("packages", [])
    ]
    return {
        "object": "pricing",
        "currency": pricing.get("currency", "USD"),
        "platform_fee_percent": pricing.get("platform_fee_percent", 0),
        "minimum_charge_micros": pricing.get("minimum_charge_micros", 0),
        "minimum_charge_usd": micros_to_usd(pricing.get("minimum_charge_micros", 0)),
        "web_search_micros_per_result": pricing.get("web_search_micros_per_result", 4000),
        "web_fetch_micros_per_fetch": pricing.get("web_fetch_micros_per_fetch", 1000),
        "packages": packages,
        "models": [
            {
                "id": m["id"],
                "modality": m["modality"],
                "provider": m["top_provider"]["name"] if m["top_provider"] else None,
                **(m["pricing"] or {}),
                "providers": [{"name": p["name"], **p["pricing"]} for p in m["providers"]],
                "video_modes": m["video"]["modes"] if "video" in m else None,
            }
            for m in models
        ],
    }
