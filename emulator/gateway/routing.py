"""Which provider routes a request may take, in which order (SPEC section 5).

Candidates are `model`, then each of `models` (only `model` when
`provider.allow_fallbacks` is false), each expanded to the providers that
serve it, filtered by `provider.only` / `provider.ignore` (slugs or display
names, in any case), then by OpenRouter's other preferences
(`data_collection: "deny"`: models whose data policy says no training on
prompts; `zdr: true`: zero data retention; `max_price`: USD per million
tokens), ordered by `provider.order`, then by
`provider.sort` (`price`, `latency`, `throughput`; `exacto` and none: the
catalog's order), within each model unless `sort.partition` is `"none"`.
None left: 503 `no_route_available` naming the preference that took the
last ones. The answer is kept on the catalog view, which a catalog change
replaces: clients ask the same few questions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from emulator.errors import NoRouteAvailable, ValidationFailed
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
    default_reasoning: str | None = None  # the model's: `shown`, `hidden`, or none
    reasons: bool = False  # the model's `reasoning` capability: it takes reasoning settings
    cache_read_micros_per_mtok: int | None = None  # None: the route does not cache prompts
    cache_write_micros_per_mtok: int | None = None
    image_output_micros_per_mtok: int | None = None  # None: images at the completion price
    audio_output_micros_per_mtok: int | None = None  # None: sound at the completion price
    audio_input_micros_per_mtok: int | None = None  # None: audio heard at the prompt price


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class ProviderPrefs:
    order: tuple[str, ...] = ()
    only: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    allow_fallbacks: bool = True
    sort: str | None = None
    sort_across_models: bool = False  # `sort.partition: "none"`
    deny_data_collection: bool = False
    zdr: bool = False
    max_price: tuple[int | None, int | None] | None = None  # micros per Mtok: prompt, output
    require_parameters: bool = False  # applied with the request (`requirements.py`)

    @classmethod
    def from_body(cls, raw: dict[str, Any] | None) -> ProviderPrefs:
        if not raw:
            return cls()
        only = raw.get("only")
        sort = raw.get("sort")
        across = isinstance(sort, dict) and sort.get("partition") == "none"
        if isinstance(sort, dict):
            sort = sort.get("by")
        return cls(
            order=tuple(raw.get("order") or ()),
            only=tuple(only) if only is not None else None,
            ignore=tuple(raw.get("ignore") or ()),
            allow_fallbacks=raw.get("allow_fallbacks", True) is not False,
            sort=sort,
            sort_across_models=across and sort is not None,
            deny_data_collection=raw.get("data_collection") == "deny",
            zdr=bool(raw.get("zdr")),
            max_price=_max_price(raw.get("max_price")),
            require_parameters=bool(raw.get("require_parameters")),
        )


def _max_price(raw: dict[str, Any] | None) -> tuple[int | None, int | None] | None:
    """OpenRouter's `max_price` (USD per million tokens, numbers or decimal strings) in
    micros per million tokens."""
    if not raw:
        return None
    return _micros(raw.get("prompt")), _micros(raw.get("completion"))


def _micros(usd: float | str | None) -> int | None:
    return None if usd is None else round(Decimal(str(usd)) * 1_000_000)


# What takes a route out, in the order the filters apply; the error of a request left
# with none names the filter that took the last ones.
_FILTERS = ("provider", "provider.data_collection", "provider.zdr", "provider.max_price")
_WHY = {
    "provider": "provider.only / provider.ignore exclude them all",
    "provider.data_collection": 'with data_collection "deny", none is left whose model '
    "keeps prompts out of training",
    "provider.zdr": "with zdr, none is left with zero data retention",
    "provider.max_price": "none is left within max_price",
}


_PLANS_KEPT = 1024  # distinct questions per catalog view; past it, start again


def route_candidates(
    view: CatalogView, model: str, fallbacks: list[str], prefs: ProviderPrefs
) -> list[Route]:
    """The routes in the order they are tried; raises 503 `no_route_available` when the
    preferences leave none."""
    key: tuple[object, ...] = (model, *fallbacks, None, prefs.order, prefs.only, prefs.ignore)
    key += (prefs.allow_fallbacks, prefs.sort, prefs.sort_across_models)
    key += (prefs.deny_data_collection, prefs.zdr)
    key += (prefs.max_price,)
    plans = view.route_plans
    plan = plans.get(key)
    if plan is None:  # an unknown model raises here, and nothing is kept
        plan = _candidates(view, model, fallbacks, prefs)
        if len(plans) >= _PLANS_KEPT:
            plans.clear()
        plans[key] = plan
    routes, excluded_by = plan
    if not routes:
        raise NoRouteAvailable(
            f"No provider can serve {model!r} with these routing preferences "
            f"({_WHY[excluded_by]}). Loosen them.",
            param=excluded_by,
        )
    return list(routes)


def _candidates(
    view: CatalogView, model: str, fallbacks: list[str], prefs: ProviderPrefs
) -> tuple[tuple[Route, ...], str]:
    """The routes, and the filter that took the last of the others (for the error of a
    request left with none)."""
    models = [model] if not prefs.allow_fallbacks else [model, *fallbacks]
    prefs = _by_slug(view, prefs)
    routes: list[Route] = []
    last = 0  # the index in _FILTERS of the last filter that took a route out
    tried: set[tuple[str, str]] = set()  # (catalog id, provider) routes already placed
    for model_id in dict.fromkeys(models):  # each model once, in the order given
        field = f"models[{fallbacks.index(model_id)}]" if model_id in fallbacks else "model"
        slug, variant_sort = model_variant(model_id)
        entry = find_model(view, slug, param=field)
        ranked = prefs if variant_sort is None or prefs.sort else replace(prefs, sort=variant_sort)
        if entry["modality"] != "text":
            raise ValidationFailed(
                f"{model_id!r} is a {entry['modality']} model: the gateway's text routes do "
                "not serve it. Start it with POST /api/v1/generate/video; the text models are "
                'the ones with "modality": "text" in GET /api/v1/models.',
                param=field,
                code="unsupported_model",
            )
        candidates = []
        for provider in entry["providers"]:
            if (slug, provider["name"]) in tried:  # a model and its variant: one route
                continue
            excluded = _excluded(entry, provider, prefs)
            if excluded is None:
                candidates.append(_route(entry, provider))
            else:
                last = max(last, excluded)
        routes += sorted(candidates, key=lambda r: _rank(r, ranked))
        tried |= {(slug, provider["name"]) for provider in entry["providers"]}
    if prefs.sort_across_models:  # stable: a tie keeps the models' order
        routes.sort(key=lambda r: _rank(r, prefs))
    return tuple(routes), _FILTERS[last]


def provider_slugs(view: CatalogView) -> dict[str, str]:
    """Each provider's slug by every name it goes by, lowercased: its slug, its display
    name as listed (`"azure (emulated)"`) and as OpenRouter names it (`"amazon
    bedrock"`, `"amazon-bedrock"`)."""
    slugs: dict[str, str] = {}
    for name, row in view.providers.items():
        full = row.body["display_name"].lower()
        shown = full.removesuffix(" (emulated)")
        slugs |= {full: name, shown: name, shown.replace(" ", "-"): name}
    return slugs | {name.lower(): name for name in view.providers}  # a slug wins over a name


def listed(slugs: dict[str, str]) -> str:
    """The providers of `provider_slugs`, by slug, for a message naming the choices."""
    return ", ".join(sorted(set(slugs.values())))


def _by_slug(view: CatalogView, prefs: ProviderPrefs) -> ProviderPrefs:
    """`order`, `only` and `ignore` with each provider as its slug: OpenRouter takes a
    provider's slug or its display name (`"OpenAI"`, `"Amazon Bedrock"`), in any case.
    A name that is no provider's stays as sent, and matches none."""
    if not (prefs.order or prefs.only or prefs.ignore):
        return prefs
    slugs = provider_slugs(view)

    def slug(names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(slugs.get(n.lower(), n) for n in names)

    only = slug(prefs.only) if prefs.only is not None else None
    return replace(prefs, order=slug(prefs.order), only=only, ignore=slug(prefs.ignore))


# OpenRouter's routing variants: a suffix on a model id that stands for `provider.sort`.
VARIANT_SORTS = {"nitro": "throughput", "floor": "price", "exacto": "exacto"}


def model_variant(model_id: str) -> tuple[str, str | None]:
    """`openai/gpt-4o:nitro` -> (`openai/gpt-4o`, `throughput`): the catalog id, and the
    sort its variant asks for (a `provider.sort` sent wins over it)."""
    slug, colon, variant = model_id.rpartition(":")
    if colon and variant in VARIANT_SORTS:
        return slug, VARIANT_SORTS[variant]
    return model_id, None


def _excluded(model: dict[str, Any], provider: dict[str, Any], prefs: ProviderPrefs) -> int | None:
    """The index in _FILTERS of the first filter that takes this route out, if one does."""
    name = provider["name"]
    if (prefs.only is not None and name not in prefs.only) or name in prefs.ignore:
        return 0
    policy = model["data_policy"]
    if prefs.deny_data_collection and policy.get("training"):
        return 1
    if prefs.zdr and not policy.get("zero_data_retention"):
        return 2
    if prefs.max_price is not None:
        pricing = provider["pricing"]
        most_prompt, most_completion = prefs.max_price
        if (most_prompt is not None and pricing["prompt_micros_per_mtok"] > most_prompt) or (
            most_completion is not None and pricing["completion_micros_per_mtok"] > most_completion
        ):
            return 3
    return None


def _route(model: dict[str, Any], provider: dict[str, Any]) -> Route:
    pricing = provider["pricing"]
    return Route(
        model=model["id"],
        provider=provider["name"],
        wire_format=provider["wire_format"],
        status=provider["status"],
        latency_ms=provider["latency_ms"],
        throughput_tps=provider["throughput_tps"],
        max_output_tokens=provider["max_output_tokens"],
        context_length=provider["context_length"],
        prompt_micros_per_mtok=pricing["prompt_micros_per_mtok"],
        completion_micros_per_mtok=pricing["completion_micros_per_mtok"],
        default_reasoning=model.get("default_reasoning"),
        reasons=bool(model["capabilities"].get("reasoning")),
        cache_read_micros_per_mtok=pricing.get("cache_read_micros_per_mtok"),
        cache_write_micros_per_mtok=pricing.get("cache_write_micros_per_mtok"),
        image_output_micros_per_mtok=pricing.get("image_output_micros_per_mtok"),
        audio_output_micros_per_mtok=pricing.get("audio_output_micros_per_mtok"),
        audio_input_micros_per_mtok=pricing.get("audio_input_micros_per_mtok"),
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
