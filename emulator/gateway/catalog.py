"""The model catalog and the pricing object, as clients see them.

Both are built from the store once and kept, encoded, until the catalog
changes (a reset, a seed, a provider marked up or down, here or by another
process on the same database file), so `GET /models` costs a dictionary
lookup.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from emulator.billing.money import micros_to_usd, per_token_usd, usd_compact
from emulator.billing.pricing import Fees
from emulator.errors import ModelNotFound, quoted
from emulator.gateway import free_tier
from emulator.gateway.logprobs import FORMATS as LOGPROB_FORMATS
from emulator.gateway.scripted import ScriptedReply
from emulator.paging import page_in_order
from emulator.store import Store
from emulator.store.catalog import CatalogRows, ModelRow, ProviderRow, ServingRow, load_catalog
from emulator.store.meta import catalog_edition, get_platform

_CAPABILITY_PARAMETERS = {
    "tools": ["tools", "tool_choice"],
    "structured_output": ["response_format", "structured_outputs"],
    "reasoning": ["reasoning", "include_reasoning"],
}
_COMMON_PARAMETERS = ["max_tokens", "temperature", "top_p", "stop", "seed", "stream"]


@dataclass(frozen=True)
class CatalogView:
    models: list[dict[str, Any]]
    by_id: dict[str, dict[str, Any]]
    models_page_bytes: bytes  # the whole list, encoded: the common case
    pricing: dict[str, Any]
    pricing_bytes: bytes
    providers: dict[str, ProviderRow]
    fees: Fees
    replies: tuple[ScriptedReply, ...] = ()
    # The routes of each (model, fallbacks, preferences) asked for: a view is never
    # changed (a catalog change builds a new one), so neither are its plans.
    route_plans: dict[tuple[object, ...], tuple[Any, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )


class Catalog:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._view: CatalogView | None = None
        self._edition = -1  # `catalog_edition` of the file when the view was built

    def invalidate(self) -> None:
        """After a change through this process has committed."""
        self._view = None

    def follow(self, conn: sqlite3.Connection) -> None:
        """Another process committed to the file (under the store's lock): if it changed
        the catalog (`emulator seed`), the next request sees the change."""
        if self._view is not None and catalog_edition(conn) != self._edition:
            self._view = None

    def view(self) -> CatalogView:
        view = self._view
        if view is not None:
            return view
        with self._lock:
            with self._store.read() as conn:
                edition = catalog_edition(conn)
                rows = load_catalog(conn)
                pricing = get_platform(conn, "pricing") or {}
                replies = get_platform(conn, "replies") or []
                video = get_platform(conn, "video") or {}
            view = build_view(rows, pricing, replies, video.get("models", []))
            self._view, self._edition = view, edition
        return view


def build_view(
    rows: CatalogRows,
    pricing: dict[str, Any],
    replies: list[dict[str, Any]] | None = None,
    video_models: list[dict[str, Any]] | None = None,
) -> CatalogView:
    providers = {p.name: p for p in rows.providers}
    serving: dict[str, list[ServingRow]] = {}
    for entry in rows.serving:
        serving.setdefault(entry.model_id, []).append(entry)
    models = []
    for row in rows.models:
        models.append(model_wire(row, serving.get(row.id, []), providers))
        if row.body.get("free_variant") and models[-1]["providers"]:
            models.append(free_tier.variant_wire(models[-1]))
    models += [video_model_wire(m) for m in video_models or ()]
    page = catalog_page(models, len(models), None, None)
    pricing_body = pricing_wire(pricing, models)
    return CatalogView(
        models=models,
        by_id={m["id"]: m for m in models},
        models_page_bytes=encode(page),
        pricing=pricing_body,
        pricing_bytes=encode(pricing_body),
        providers=providers,
        fees=Fees(
            pricing_body["platform_fee_percent"],
            pricing_body["minimum_charge_micros"],
            pricing_body["web_search_micros_per_result"],
            pricing_body["web_fetch_micros_per_fetch"],
        ),
        replies=tuple(ScriptedReply.stored(r) for r in replies or ()),
    )


def encode(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


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


VIDEO_PARAMETERS = ["task_type", "prompt", "negative_prompt", "aspect_ratio", "duration"]
VIDEO_PARAMETERS += ["mode", "sound", "image_list", "image_url", "seed"]


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


LONGEST_ID = 200  # longer than any model id, with its variant suffixes


def find_model(view: CatalogView, model_id: str, param: str = "model") -> dict[str, Any]:
    """The catalog entry of `model_id`, or a 404 that suggests the closest ids and names
    `param`, the field that held it."""
    model = view.by_id.get(model_id)
    if model is not None:
        return model
    if len(model_id) > LONGEST_ID:  # no id is this long: not compared, not said whole
        raise ModelNotFound(
            f"The model {quoted(model_id, LONGEST_ID)} is not in "
            "the catalog. GET /api/v1/models lists them all.",
            param=param,
        )
    import difflib

    ids = list(view.by_id)
    close = difflib.get_close_matches(model_id, ids, n=3, cutoff=0.4)
    if not close:  # match on the part after the vendor, e.g. "gpt-4o" -> "openai/gpt-4o"
        names = {i.split("/", 1)[1]: i for i in ids}
        close = [names[n] for n in difflib.get_close_matches(model_id, list(names), n=3)]
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise ModelNotFound(
        f"The model {model_id!r} is not in the catalog.{hint} GET /api/v1/models lists them all.",
        param=param,
    )


def filtered_models(
    view: CatalogView, output_modalities: str | None = None, supported_parameters: str | None = None
) -> list[dict[str, Any]]:
    """OpenRouter's filters of the list: models with any of the comma-separated
    `output_modalities` (`all`: any), and with every one of the `supported_parameters`."""
    models = view.models
    wanted = {m.strip() for m in (output_modalities or "all").split(",") if m.strip()}
    if wanted and "all" not in wanted:
        models = [m for m in models if wanted & set(m["architecture"]["output_modalities"])]
    needed = {p.strip() for p in (supported_parameters or "").split(",") if p.strip()}
    if needed:
        models = [m for m in models if needed <= set(m["supported_parameters"])]
    return models


def models_page(
    view: CatalogView,
    limit: int | None,
    cursor: str | None,
    output_modalities: str | None = None,
    supported_parameters: str | None = None,
    path: str = "/api/v1/models",
    cursor_param: str = "cursor",
) -> bytes:
    if limit is None and not cursor and output_modalities is None and not supported_parameters:
        return view.models_page_bytes
    models = filtered_models(view, output_modalities, supported_parameters)
    listed = page_in_order(
        models,
        limit,
        cursor,
        lambda m: m["id"],
        dict,
        default=len(models) or 1,
        maximum=500,
        param=cursor_param,
    )
    after = listed["next_cursor"]
    if after is not None:  # the next page of the same query: its filters and size kept
        query = {
            "limit": limit,
            "output_modalities": output_modalities,
            "supported_parameters": supported_parameters,
        }
        kept = urlencode({k: v for k, v in query.items() if v is not None})
        after = f"{path}?{kept}{'&' if kept else ''}cursor={after}"
    return encode(catalog_page(listed["data"], len(models), listed["next_cursor"], after))


def catalog_page(
    models: list[dict[str, Any]], total: int, next_cursor: str | None, next_link: str | None
) -> dict[str, Any]:
    """SPEC section 8's list, plus `total_count` and `links` that OpenRouter clients
    require (`next_link`: the next page's URL path), and `first_id`/`last_id`, from
    which Anthropic's SDKs page (`after_id`)."""
    return {
        "object": "list",
        "data": models,
        "has_more": next_cursor is not None,
        "next_cursor": next_cursor,
        "total_count": total,
        "links": {"next": next_link},
        "first_id": models[0]["id"] if models else None,
        "last_id": models[-1]["id"] if models else None,
    }
