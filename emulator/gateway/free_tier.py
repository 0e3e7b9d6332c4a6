"""OpenRouter's free variants: `<model>:free`, for the models whose fixture says
`free_variant: true`.

The variant is a model of its own in the catalog (listed after its model): served by
the model's first provider at a price of zero, so it is never charged (the minimum
charge is for priced routes), and, as free endpoints upstream, with a data policy
that allows training on prompts (`provider.data_collection: "deny"` skips it). Its
requests (those whose first route, after routing, is a free variant) are limited per
account, on the virtual clock: 20 a minute, and a day (UTC)
50, or 1,000 once the account was given at least $10 of credits (opening balance and
top-ups), as OpenRouter limits them; past either, 429 `rate_limit_exceeded`.
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Any

from emulator.errors import RateLimited
from emulator.store.accounts import credited

if TYPE_CHECKING:
    from emulator.gateway.routing import Route
    from emulator.runtime import Runtime

SUFFIX = ":free"
MINUTE, DAY = 60, 86_400  # the windows' lengths, in seconds of the virtual clock
PER_MINUTE = 20
PER_DAY = 50
PER_DAY_WITH_CREDITS = 1000
CREDITS_FOR_MORE = 10_000_000  # micros given ($10) that raise the daily limit
_FREE_POLICY = {"training": True, "retention_days": 30, "zero_data_retention": False}
ZERO_PRICES = {  # also a video model's token prices (`catalog`)
    "prompt": "0",
    "completion": "0",
    "image": "0",
    "request": "0",
    "prompt_micros_per_mtok": 0,
    "completion_micros_per_mtok": 0,
    "image_micros": 0,
    "request_micros": 0,
}


_CACHE_PRICES = (
    "input_cache_read",
    "input_cache_write",
    "cache_read_micros_per_mtok",
    "cache_write_micros_per_mtok",
)


def variant_wire(model: dict[str, Any]) -> dict[str, Any]:
    """The catalog entry of a model's free variant, from the model's own."""
    free = copy.deepcopy(model)
    first = free["providers"][0]
    first["pricing"] |= ZERO_PRICES
    for cached in _CACHE_PRICES:  # a free route caches nothing: there is nothing to save
        first["pricing"].pop(cached, None)
    free_id = model["id"] + SUFFIX
    free |= {
        "id": free_id,
        "name": f"{model['name']} (free)",
        "providers": [first],
        "pricing": first["pricing"],
        "data_policy": dict(_FREE_POLICY),
        "top_provider": {
            **first,
            "is_moderated": False,
            "max_completion_tokens": first["max_output_tokens"],
        },
        "links": {"details": f"/api/v1/models/{free_id}"},
    }
    return free


def upstream(model: str) -> str:
    """The model a route's provider is asked for: a free variant's own model."""
    return model.removesuffix(SUFFIX)


def is_free(route: Route) -> bool:
    """Whether a route serves a free variant (its catalog id, whatever suffixes the
    request's model id had)."""
    return route.model.endswith(SUFFIX)


def daily_limit(given: int) -> int:
    """Free-variant requests a day for an account given `given` micros of credits."""
    return PER_DAY_WITH_CREDITS if given >= CREDITS_FOR_MORE else PER_DAY


def daily_requests(rt: Runtime, account_id: str, given: int) -> dict[str, int]:
    """The account's free-variant requests of this UTC day against its daily limit, in
    OpenRouter's `free_model_daily_requests` shape (`GET /key`)."""
    limit = daily_limit(given)
    used = rt.limiter.counted(rt.clock.now(), _day_scope(account_id), DAY)
    return {"limit": limit, "remaining": max(0, limit - used), "used": used}


def _day_scope(account_id: str) -> str:
    return f"free-day:{account_id}"


def admit(rt: Runtime, account_id: str) -> list[tuple[str, int, int]]:
    """Count a request to a free variant against the account's free limits (the windows
    counted, for `RateLimiter.uncount`), or refuse it with 429 naming the window that
    frees last."""
    now = rt.clock.now()
    with rt.store.read() as conn:
        given = credited(conn, account_id)
    per_day = daily_limit(given)
    windows = [
        (f"free-minute:{account_id}", PER_MINUTE, MINUTE),
        (_day_scope(account_id), per_day, DAY),
    ]
    refused = rt.limiter.count(now, windows)
    if refused is None:
        return [(scope, window_s, int(now // window_s)) for scope, _, window_s in windows]
    limit, window_s = refused
    retry = math.ceil((int(now // window_s) + 1) * window_s - now)
    more = (
        f" Give the account $10 of credits to raise it to {PER_DAY_WITH_CREDITS} a day."
        if window_s == DAY and per_day == PER_DAY
        else ""
    )
    period = "minute" if window_s == MINUTE else "day"
    raise RateLimited(
        f"Rate limit of free models reached: {limit} requests a {period}.{more} Retry in "
        f"{retry} s (Retry-After), or use the model without `:free`.",
        headers={"Retry-After": str(retry), "retry-after-ms": str(retry * 1000)},
        metadata={"limit": limit, "scope": f"free-models-per-{period}"},
    )
