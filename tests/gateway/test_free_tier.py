"""OpenRouter's free variants (`<model>:free`): listed, served at no charge, kept out by
`data_collection: "deny"`, and limited per account to 20 requests a minute and 50 a
day (1,000 once the account was given $10), on the virtual clock."""

from __future__ import annotations

from typing import Any

import httpx
import openai

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

FREE = "emulator/echo:free"
HELLO = [{"role": "user", "content": "hello"}]


def chat(http: httpx.Client, model: str = FREE, **body: Any) -> httpx.Response:
    return http.post("/chat/completions", json={"model": model, "messages": HELLO, **body})


def to_minute_start(emulator: EmulatorHandle) -> None:
    now = emulator.clock()["epoch_seconds"]
    emulator.advance(60 - now % 60)


def test_free_variants_are_listed_at_a_price_of_zero(tenant: Tenant) -> None:
    with tenant.client() as http:
        listed = {m["id"]: m for m in http.get("/models").json()["data"]}
    free = listed["meta-llama/llama-3.3-70b-instruct:free"]
    paid = listed["meta-llama/llama-3.3-70b-instruct"]
    assert free["pricing"]["prompt"] == free["pricing"]["completion"] == "0"
    assert [p["name"] for p in free["providers"]] == [paid["providers"][0]["name"]]
    assert free["data_policy"]["training"] is True and free["name"].endswith("(free)")
    assert "openai/gpt-4o:free" not in listed  # only the models whose fixture says so


def test_a_free_request_is_served_and_never_charged(
    client: openai.OpenAI, emulator: EmulatorHandle, tenant: Tenant
) -> None:
    answer = client.chat.completions.create(model=FREE, messages=HELLO)  # type: ignore[arg-type]
    assert answer.model == FREE and answer.choices[0].message.content == "hello"
    assert (answer.usage.model_extra or {})["charge_micros"] == 0  # type: ignore[union-attr]
    with tenant.client() as http:
        event = http.get(f"/ai-gateway/usage/{answer.id}").json()
        quote = http.post("/ai-gateway/quote", json={"model": FREE, "messages": HELLO}).json()
        balance = http.get("/ai-gateway/balance").json()
    assert event["charge_micros"] == event["provider_cost_micros"] == 0
    assert quote["hold_micros"] == quote["estimated_charge_micros"] == 0
    assert balance["balance_micros"] == tenant.balance_micros  # no minimum charge either
    ledger = emulator.ledger(tenant.account_id)
    assert sum(e["amount"] for e in ledger if e["asset"] == "usd_micros") == tenant.balance_micros


def test_an_account_without_credits_may_use_free_models(emulator: EmulatorHandle) -> None:
    broke = emulator.create_tenant(balance_micros=0)
    with broke.client() as http:
        assert chat(http).status_code == 200
        assert_error(chat(http, model="emulator/echo"), 402, "insufficient_credits")


def test_data_collection_deny_skips_free_variants(tenant: Tenant) -> None:
    with tenant.client() as http:
        refused = chat(http, provider={"data_collection": "deny"})
        fallen = chat(http, models=["emulator/echo"], provider={"data_collection": "deny"})
    assert assert_error(refused, 503, "no_route_available")["param"] == "provider.data_collection"
    assert fallen.json()["model"] == "emulator/echo"


def test_twenty_a_minute(emulator: EmulatorHandle) -> None:
    tenant = emulator.create_tenant(rate_limit_rpm=1000)
    to_minute_start(emulator)
    with tenant.client() as http:
        assert all(chat(http).status_code == 200 for _ in range(20))
        refused = chat(http)
        error = assert_error(refused, 429, "rate_limit_exceeded")
        assert refused.headers["retry-after"] == "60" and "20 requests a minute" in error["message"]
        assert chat(http, model="emulator/echo").status_code == 200  # paid models go on
        emulator.advance(60)
        assert chat(http).status_code == 200


def test_fifty_a_day_or_a_thousand_once_given_ten_dollars(emulator: EmulatorHandle) -> None:
    small = emulator.create_tenant(balance_micros=5_000_000, rate_limit_rpm=1000)
    large = emulator.create_tenant(balance_micros=10_000_000, rate_limit_rpm=1000)
    now = emulator.clock()["epoch_seconds"]
    emulator.advance(86_400 - now % 86_400)  # the start of a UTC day
    with small.client() as poor, large.client() as rich:
        for minute in range(3):
            for _ in range(20 if minute < 2 else 10):
                assert chat(poor).status_code == chat(rich).status_code == 200
            emulator.advance(60)
        refused = chat(poor)
        error = assert_error(refused, 429, "rate_limit_exceeded")
        assert "50 requests a day" in error["message"] and "$10" in error["message"]
        assert chat(rich).status_code == 200  # its day allows 1,000
        emulator.top_up(small.account_id, 5_000_000)  # given $10 in all: 1,000 a day
        assert chat(poor).status_code == 200
        emulator.advance(86_400)
        assert chat(poor).status_code == 200


def test_what_counts_is_the_route_a_request_is_served_by_first(emulator: EmulatorHandle) -> None:
    """A free variant behind a routing suffix counts; a paid request whose free fallback
    was taken out (or that lists one behind a paid model) does not."""
    tenant = emulator.create_tenant(rate_limit_rpm=1000)
    to_minute_start(emulator)
    with tenant.client() as http:
        for _ in range(20):
            assert chat(http, model=f"{FREE}:nitro").json()["model"] == FREE
        assert_error(chat(http, model=f"{FREE}:floor"), 429, "rate_limit_exceeded")
        assert_error(chat(http, models=[FREE]), 429, "rate_limit_exceeded")  # `models` alone
        for body in (
            {"model": "emulator/echo", "models": [FREE]},  # paid first, free behind
            {"models": ["emulator/echo", FREE], "provider": {"allow_fallbacks": False}},
            {"model": FREE, "models": ["emulator/echo"], "provider": {"data_collection": "deny"}},
        ):
            served = http.post("/chat/completions", json={"messages": HELLO, **body})
            assert served.status_code == 200 and served.json()["model"] == "emulator/echo", body


def test_a_request_the_hold_refuses_gives_its_count_back(emulator: EmulatorHandle) -> None:
    """Free first, paid behind: the hold covers the paid route, so an account without
    credits is refused 402, and its free minute is left whole."""
    broke = emulator.create_tenant(balance_micros=0, rate_limit_rpm=1000)
    to_minute_start(emulator)
    with broke.client() as http:
        for _ in range(25):
            refused = chat(http, models=["openai/gpt-4o"])
            assert_error(refused, 402, "insufficient_credits")
        assert all(chat(http).status_code == 200 for _ in range(20))


def test_retry_after_names_the_window_that_frees_last(emulator: EmulatorHandle) -> None:
    tenant = emulator.create_tenant(balance_micros=0, rate_limit_rpm=1000)
    now = emulator.clock()["epoch_seconds"]
    emulator.advance(86_400 - now % 86_400)  # the start of a UTC day
    with tenant.client() as http:
        for batch in (20, 10, 20):  # the day's 50, the last minute's 20 with them
            emulator.advance(60)
            assert all(chat(http).status_code == 200 for _ in range(batch))
        refused = chat(http)  # both full: the next minute would not help
        assert "50 requests a day" in assert_error(refused, 429, "rate_limit_exceeded")["message"]
        assert int(refused.headers["retry-after"]) == 86_400 - 180


def test_get_key_reports_the_day_s_free_requests(emulator: EmulatorHandle) -> None:
    """`GET /key`'s `free_model_daily_requests` is the counter the limit reads: this UTC
    day's free requests (not those given back) against 50, or 1,000 once given $10;
    `is_free_tier` says the account was never given credits."""
    broke = emulator.create_tenant(balance_micros=0, rate_limit_rpm=1000)
    now = emulator.clock()["epoch_seconds"]
    emulator.advance(86_400 - now % 86_400 + 3600)  # an hour into a UTC day
    with broke.client() as http:

        def daily(free_tier: bool = False) -> dict[str, Any]:
            key = http.get("/key").json()["data"]
            assert key["is_free_tier"] is free_tier
            return key["free_model_daily_requests"]

        assert daily(free_tier=True) == {"limit": 50, "remaining": 50, "used": 0}
        assert all(chat(http).status_code == 200 for _ in range(3))
        assert_error(chat(http, models=["openai/gpt-4o"]), 402, "insufficient_credits")
        assert daily(free_tier=True) == {"limit": 50, "remaining": 47, "used": 3}
        emulator.top_up(broke.account_id, 10_000_000)
        assert daily() == {"limit": 1000, "remaining": 997, "used": 3}
        emulator.advance(86_400)
        assert daily() == {"limit": 1000, "remaining": 1000, "used": 0}
