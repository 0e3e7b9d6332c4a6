"""The model catalog and the pricing object, as clients see them.

Both are built from the store once and kept, encoded, until the catalog
changes (a reset, a seed, a provider marked up or down, here or by another
process on the same database file), so `GET /models` costs a dictionary
lookup. Their shape is `catalog_wire`'s.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from emulator.billing.pricing import Fees
from emulator.errors import ModelNotFound, quoted
from emulator.gateway import free_tier
from emulator.gateway.catalog_wire import model_wire, pricing_wire, video_model_wire
from emulator.gateway.scripted import ScriptedReply
from emulator.paging import page_in_order
from emulator.store import Store
from emulator.store.catalog import CatalogRows, ProviderRow, ServingRow, load_catalog
from emulator.store.meta import catalog_edition, get_platform


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
    base = model_id.rpartition(":")[0]  # a variant not emulated (`:thinking`): its model first
    if base in view.by_id:
        close = [base, *(i for i in close if i != base)][:3]
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
