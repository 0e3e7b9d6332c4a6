"""OpenRouter's `GET /key` and `GET /credits`, which its SDKs and dashboards-in-apps read
for a key's spend and limit and an account's credits: the emulator's own keys, usage
events and ledger, in OpenRouter's shape (USD as numbers, under `data`).

`/ai-gateway/balance` and `/keys` stay the exact views (micros).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.billing.money import usd_number
from emulator.billing.windows import window_bounds
from emulator.clock import iso
from emulator.errors import NotFound
from emulator.gateway import free_tier
from emulator.jobs.service import settled_read
from emulator.store.accounts import credited, get_account
from emulator.store.jobs import key_job_spend
from emulator.store.keys import get_key
from emulator.store.usage import key_charges_since

if TYPE_CHECKING:
    from emulator.auth.credentials import Caller
    from emulator.runtime import Runtime
    from emulator.store.keys import ApiKey

_LEGACY_RATE_LIMIT = {
    "requests": -1,
    "interval": "10s",
    "note": "This field is deprecated and safe to ignore.",
}


def current_key(rt: Runtime, caller: Caller) -> dict[str, Any]:
    """The calling key: its label, its spend (all time, this UTC day, week and month),
    and its spend limit as OpenRouter's `limit` and as a budget of scope `key_limit`."""
    key = caller.key
    assert key is not None  # an API-key route
    now = rt.clock.now()
    window_start, resets = window_bounds(key.spend_reset_interval, now)
    starts = ["", *(iso(window_bounds(i, now)[0]) for i in ("daily", "weekly", "monthly"))]
    since = [*starts, iso(window_start)]
    with rt.store.read() as conn:  # gateway requests, and jobs not refunded
        gateway = key_charges_since(conn, key.id, since)
        jobs = key_job_spend(conn, key.id, since, now)
        # The name as it is now: the cached key is renewed by changes to what auth reads.
        named = get_key(conn, key.account_id, key.id)
        given = credited(conn, key.account_id)
    total, daily, weekly, monthly, window = (g + j for g, j in zip(gateway, jobs, strict=True))
    budgets = [_budget(key, window, resets)] if key.spend_limit_micros is not None else []
    limit = key.spend_limit_micros
    return {
        "data": {
            "label": (named or key).name,
            "limit": None if limit is None else usd_number(limit),
            "limit_remaining": None if limit is None else usd_number(max(0, limit - window)),
            "limit_reset": key.spend_reset_interval,
            "usage": usd_number(total),
            "usage_daily": usd_number(daily),
            "usage_weekly": usd_number(weekly),
            "usage_monthly": usd_number(monthly),
            "byok_usage": 0.0,
            "byok_usage_daily": 0.0,
            "byok_usage_weekly": 0.0,
            "byok_usage_monthly": 0.0,
            "include_byok_in_limit": False,
            "is_free_tier": given == 0,  # OpenRouter: never paid for credits
            "is_management_key": False,
            "is_provisioning_key": False,
            "budgets": budgets,
            "effective_budget": budgets[0] if budgets else None,
            "allowed_data_regions": ["global"],
            "free_model_daily_requests": free_tier.daily_requests(rt, key.account_id, given),
            "rate_limit": _LEGACY_RATE_LIMIT,  # OpenRouter's says -1 too
            "creator_user_id": None,
            "organization_id": None,
            "workspace_id": None,
            "expires_at": None,
        }
    }


def _budget(key: ApiKey, spent: int, resets: float | None) -> dict[str, Any]:
    assert key.spend_limit_micros is not None
    return {
        "scope": "key_limit",
        "budget_id": None,
        "guardrail_id": None,
        "include_byok": False,
        "limit_usd": usd_number(key.spend_limit_micros),
        "spend_usd": usd_number(spent),
        "remaining_usd": usd_number(key.spend_limit_micros - spent),
        "reset_interval": key.spend_reset_interval,
        "resets_at": None if resets is None else iso(resets),
    }


def credits(rt: Runtime, account_id: str) -> dict[str, Any]:
    """What the account was given (opening balance and top-ups) and what it used of it:
    `total_credits - total_usage` is the balance (failed jobs' refunds included)."""
    given, account = settled_read(
        rt, account_id, lambda c: (credited(c, account_id), get_account(c, account_id))
    )
    if account is None:
        raise NotFound(f"No account {account_id!r}.", param="account_id")
    return {
        "data": {
            "total_credits": usd_number(given),
            "total_usage": usd_number(given - account.balance_micros),
        }
    }
