"""Which provider routes a request may take, in which order (SPEC section 5).

Candidates are `model`, then each of `models` (only `model` when
`provider.allow_fallbacks` is false), each expanded to the providers that
serve it, filtered by `provider.only` / `provider.ignore`, ordered by
`provider.order`, then by `provider.sort` (`price`, `latency`,
`throughput`), else by the catalog's order. The answer is kept on the catalog
view, which a catalog change replaces: clients ask the same few questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from emulator.errors import ValidationFailed
from emulator.gateway.catalog import CatalogView, find_model


@dataclass(frozen=True, slots=True)  # shared by the requests of a plan: never changed
class Route:
    model: str
    provider: str
    wire_format: str
    status: str
    latency_ms: int
    throughput_tps: int
    max_output_tokens: int
    context_length: int
    prompt_micros_per_mtok: int
    completion_micros_per_mtok: int


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class ProviderPrefs:
    order: tuple[str, ...] = ()
    only: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    allow_fallbacks: bool = True
    sort: str | None = None

    @classmethod
    def from_body(cls, raw: dict[str, Any] | None) -> ProviderPrefs:
        raw = raw or {}
        only = raw.get("only")
        return cls(
            order=tuple(raw.get("order") or ()),
            only=tuple(only) if only is not None else None,
            ignore=tuple(raw.get("ignore") or ()),
            allow_fallbacks=raw.get("allow_fallbacks", True) is not False,
            sort=raw.get("sort"),
        )


_PLANS_KEPT = 1024  # distinct questions per catalog view; past it, start again


def route_candidates(
    view: CatalogView, model: str, fallbacks: list[str], prefs: ProviderPrefs
) -> list[Route]:
    key: tuple[object, ...] = (model, *fallbacks, None, prefs.order, prefs.only, prefs.ignore)
    key += (prefs.allow_fallbacks, prefs.sort)
    plans = view.route_plans
    routes = plans.get(key)
    if routes is None:  # an unknown model raises here, and nothing is kept
        routes = tuple(_candidates(view, model, fallbacks, prefs))
        if len(plans) >= _PLANS_KEPT:
            plans.clear()
        plans[key] = routes
    return list(routes)


def _candidates(
    view: CatalogView, model: str, fallbacks: list[str], prefs: ProviderPrefs
) -> list[Route]:
    models = [model] if not prefs.allow_fallbacks else [model, *fallbacks]
    routes: list[Route] = []
    for model_id in dict.fromkeys(models):  # each model once, in the order given
        field = "model" if model_id == model else f"models[{fallbacks.index(model_id)}]"
        entry = find_model(view, model_id, param=field)
        if entry["modality"] != "text":
            raise ValidationFailed(
                f"{model_id!r} is a {entry['modality']} model: the gateway's text routes do "
                "not serve it. Start it with POST /api/v1/generate/video; the text models are "
                'the ones with "modality": "text" in GET /api/v1/models.',
                param="model",
                code="unsupported_model",
            )
        candidates = [
            _route(model_id, p)
            for p in entry["providers"]
            if (prefs.only is None or p["name"] in prefs.only) and p["name"] not in prefs.ignore
        ]
        routes += sorted(candidates, key=lambda r: _rank(r, prefs))
    return routes


def _route(model: str, provider: dict[str, Any]) -> Route:
    pricing = provider["pricing"]
    return Route(
        model=model,
        provider=provider["name"],
        wire_format=provider["wire_format"],
        status=provider["status"],
        latency_ms=provider["latency_ms"],
        throughput_tps=provider["throughput_tps"],
        max_output_tokens=provider["max_output_tokens"],
        context_length=provider["context_length"],
        prompt_micros_per_mtok=pricing["prompt_micros_per_mtok"],
        completion_micros_per_mtok=pricing["completion_micros_per_mtok"],
    )


def _rank(route: Route, prefs: ProviderPrefs) -> tuple[int, float]:
    ordered = (
        prefs.order.index(route.provider) if route.provider in prefs.order else len(prefs.order)
    )
    return ordered, _sort_key(route, prefs.sort)


def _sort_key(route: Route, sort: str | None) -> float:
    if sort == "price":
        return route.prompt_micros_per_mtok + route.completion_micros_per_mtok
    if sort == "latency":
        return route.latency_ms
    if sort == "throughput":
        return -route.throughput_tps
    return 0  # stable sort keeps the catalog's order
