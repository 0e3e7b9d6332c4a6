"""Per-key spend limits over UTC calendar windows of the virtual clock."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.billing.test_charges import EXACT, charge_of_exact
from tests.helpers import assert_error, bearer
from tests.video.test_generate_video import BODY, generate


def limited_key(tenant: Tenant, limit: int, interval: str | None, **extra: object) -> dict:
    body = {"name": "limited", "spend_limit_micros": limit, **extra}
    if interval:
        body["spend_reset_interval"] = interval
    r = httpx.post(f"{tenant.base_url}/keys", json=body, headers=bearer(tenant.user_token))
    assert r.status_code == 201
    return r.json()


def window_charge(tenant: Tenant, key_id: str) -> int:
    r = httpx.get(f"{tenant.base_url}/keys/{key_id}", headers=bearer(tenant.user_token))
    return int(r.json()["usage"]["window_charge_micros"])


SLOW_STREAM = {
    "model": "emulator/slow",
    "messages": [{"role": "user", "content": "[emulator:tokens=30]"}],
    "max_tokens": 30,
    "stream": True,
}


def test_a_daily_limit_refuses_then_frees_at_midnight(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    price = charge_of_exact(emulator)
    key = limited_key(tenant, 3 * price, "daily")
    with httpx.Client(base_url=tenant.base_url, headers=bearer(key["key"])) as http:
        for _ in range(3):
            assert http.post("/chat/completions", json=EXACT).status_code == 200
        refused = http.post("/chat/completions", json=EXACT)
        error = assert_error(refused, 402, "budget_exceeded", "billing_error")
        assert refused.headers["x-should-retry"] == "false"
        spend = error["metadata"]
        assert spend["limit_micros"] == 3 * price and spend["used_micros"] == 3 * price
        assert spend["decision"] == "deny" and spend["reset_interval"] == "daily"
        assert spend["resets_at"].endswith("T00:00:00.000Z")
        assert window_charge(tenant, key["id"]) == 3 * price
        now = emulator.clock()["epoch_seconds"]
        emulator.advance(86400 - now % 86400 + 1)  # just past midnight UTC
        assert window_charge(tenant, key["id"]) == 0
        assert http.post("/chat/completions", json=EXACT).status_code == 200


def test_a_limit_without_interval_covers_all_time(emulator: EmulatorHandle, tenant: Tenant) -> None:
    price = charge_of_exact(emulator)
    key = limited_key(tenant, price, None)
    with httpx.Client(base_url=tenant.base_url, headers=bearer(key["key"])) as http:
        assert http.post("/chat/completions", json=EXACT).status_code == 200
        emulator.advance(40 * 86400)
        assert_error(http.post("/chat/completions", json=EXACT), 402, "budget_exceeded")


def test_a_limit_without_interval_says_it_never_resets(tenant: Tenant) -> None:
    key = limited_key(tenant, 1, None)
    with httpx.Client(base_url=tenant.base_url, headers=bearer(key["key"])) as http:
        error = assert_error(http.post("/chat/completions", json=EXACT), 402, "budget_exceeded")
    assert "never resets" in error["message"] and "wait" not in error["message"]
    assert error["metadata"]["resets_at"] is None


def test_what_remains_of_a_limit_leaves_out_the_holds_in_flight(tenant: Tenant) -> None:
    key = limited_key(tenant, 1_000, "daily")
    quote_body = {"model": "openai/gpt-4o", "input": "hi", "max_output_tokens": 5}
    with httpx.Client(base_url=tenant.base_url, headers=bearer(key["key"]), timeout=30) as http:
        with http.stream("POST", "/chat/completions", json=SLOW_STREAM) as running:
            lines = running.iter_lines()  # kept: dropping it would close the stream
            next(lines)  # the stream has started: its hold is active
            (hold,) = http.get("/ai-gateway/reservations", params={"status": "active"}).json()[
                "data"
            ]
            spend = http.post("/ai-gateway/quote", json=quote_body).json()["spend_limit"]
            assert spend["held_micros"] == hold["amount_micros"] > 0
            assert spend["used_micros"] == 0
            assert spend["remaining_micros"] == 1_000 - hold["amount_micros"]
            list(lines)
        spend = http.post("/ai-gateway/quote", json=quote_body).json()["spend_limit"]
    assert spend["held_micros"] == 0
    assert spend["remaining_micros"] == 1_000 - spend["used_micros"]


def test_a_second_stream_cannot_spend_what_the_first_holds(tenant: Tenant) -> None:
    with tenant.client() as http:
        hold = http.post("/ai-gateway/quote", json=SLOW_STREAM).json()["hold_micros"]
    key = limited_key(tenant, hold * 3 // 2, "daily")  # room for one hold, not two
    limited = httpx.Client(base_url=tenant.base_url, headers=bearer(key["key"]), timeout=30)
    with limited as http, http.stream("POST", "/chat/completions", json=SLOW_STREAM) as first:
        lines = first.iter_lines()  # kept: dropping it would close the stream
        next(lines)  # its hold is active
        second = http.post("/chat/completions", json=SLOW_STREAM)
        error = assert_error(second, 402, "budget_exceeded", "billing_error")
        assert error["metadata"]["used_micros"] == 0  # refused for what is held
        assert [line for line in lines if line][-1] == "data: [DONE]"
    assert 0 < window_charge(tenant, key["id"]) <= hold


def test_a_charge_at_a_window_s_first_instant_counts_in_it(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    price = charge_of_exact(emulator)
    key = limited_key(tenant, price, "daily")
    now = emulator.clock()["epoch_seconds"]
    emulator.advance(86400 - now % 86400)  # midnight UTC exactly (the test clock stands)
    with httpx.Client(base_url=tenant.base_url, headers=bearer(key["key"])) as http:
        assert http.post("/chat/completions", json=EXACT).status_code == 200
        assert window_charge(tenant, key["id"]) == price
        assert_error(http.post("/chat/completions", json=EXACT), 402, "budget_exceeded")


def test_a_weekly_window_starts_on_monday(emulator: EmulatorHandle, tenant: Tenant) -> None:
    price = charge_of_exact(emulator)
    key = limited_key(tenant, 10 * price, "weekly")
    day = 86400
    now = emulator.clock()["epoch_seconds"]
    monday = now - now % day + day * ((7 - (now // day + 3) % 7) % 7 or 7)  # 1970-01-01: Thursday
    emulator.advance(monday - day / 2 - now)  # Sunday noon
    with httpx.Client(base_url=tenant.base_url, headers=bearer(key["key"])) as http:
        assert http.post("/chat/completions", json=EXACT).status_code == 200
    assert window_charge(tenant, key["id"]) == price
    emulator.advance(day / 2 - 1)
    assert window_charge(tenant, key["id"]) == price  # Sunday's last second
    emulator.advance(1)
    assert window_charge(tenant, key["id"]) == 0  # Monday 00:00


def test_a_spend_limit_holds_under_concurrency(emulator: EmulatorHandle) -> None:
    price = charge_of_exact(emulator)
    tenant = emulator.create_tenant(rate_limit_rpm=10_000)
    key = limited_key(tenant, 10 * price, "monthly")

    def attempt(_: int) -> int:
        with httpx.Client(base_url=tenant.base_url, headers=bearer(key["key"])) as http:
            return http.post("/chat/completions", json=EXACT).status_code

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(attempt, range(50)))
    assert statuses.count(200) == 10 and statuses.count(402) == 40
    assert window_charge(tenant, key["id"]) == 10 * price


JOB_PRICE = 175_000  # a 5-second standard generation (fixtures/video.yaml)


def limited_video_key(tenant: Tenant, limit: int) -> dict:
    return tenant.create_key(
        scopes=["ai.gateway", "video"], spend_limit_micros=limit, spend_reset_interval="daily"
    )


def test_a_key_s_limit_covers_its_video_jobs_and_a_refund_frees_it(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    key = limited_video_key(tenant, 2 * JOB_PRICE)
    with httpx.Client(base_url=tenant.base_url, headers=bearer(key["key"])) as http:
        assert generate(http).status_code == 200
        failing = generate(http, prompt="a storm [emulator:fail]")
        assert failing.status_code == 200
        balance = http.get("/ai-gateway/balance").json()["balance_micros"]
        refused = generate(http)
        spend = assert_error(refused, 402, "budget_exceeded", "billing_error")["metadata"]
        assert spend["used_micros"] == 2 * JOB_PRICE and spend["decision"] == "deny"
        assert http.get("/ai-gateway/balance").json()["balance_micros"] == balance  # no charge
        chat = http.post("/chat/completions", json=EXACT)  # one limit for both
        assert_error(chat, 402, "budget_exceeded")
        emulator.advance(600)  # the failing job fails: its refund frees its share
        # read first, before a request writes the refund: a failed job is refunded by then
        assert window_charge(tenant, key["id"]) == JOB_PRICE
        assert http.get("/key").json()["data"]["usage_daily"] == JOB_PRICE / 1_000_000
        assert generate(http).status_code == 200
        assert window_charge(tenant, key["id"]) == 2 * JOB_PRICE
        assert http.get("/key").json()["data"]["usage_daily"] == 2 * JOB_PRICE / 1_000_000
        emulator.advance(86_400)  # the next day
        assert generate(http).status_code == 200


def test_a_key_s_limit_holds_for_concurrent_video_jobs(emulator: EmulatorHandle) -> None:
    tenant = emulator.create_tenant(rate_limit_rpm=10_000)
    key = limited_video_key(tenant, 3 * JOB_PRICE)

    def attempt(_: int) -> int:
        with httpx.Client(base_url=tenant.base_url, headers=bearer(key["key"])) as http:
            return generate(http).status_code

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(attempt, range(20)))
    assert statuses.count(200) == 3 and statuses.count(402) == 17
    assert window_charge(tenant, key["id"]) == 3 * JOB_PRICE
    entries = emulator.ledger(tenant.account_id, kind="job_charge")
    assert sum(e["amount"] for e in entries) == -3 * JOB_PRICE


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"spend_limit_micros": 0}, 402, "budget_exceeded"),
        ({"status": "disabled"}, 401, "key_disabled"),
        ({"scopes": ["video"]}, 403, "insufficient_scope"),
        (None, 401, "invalid_api_key"),  # deleted
    ],
)
def test_a_key_changed_while_its_request_waits_is_read_again(
    tenant: Tenant, change: dict | None, status: int, code: str
) -> None:
    """Authenticated when its headers came, the request spends under the key as it is
    when it begins to (here after an injected 400 ms wait): not over a limit lowered
    meanwhile, nor on a key disabled, deleted or stripped of the route's scope
    meanwhile. Nothing is charged."""
    # A video key that may use the gateway: the one whose gateway scope may be taken away.
    key = limited_key(tenant, 1_000_000, None, product="video", scopes=["ai.gateway", "video"])
    owner = bearer(tenant.user_token)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(
            httpx.post,
            f"{tenant.base_url}/chat/completions",
            json=EXACT,
            headers={**bearer(key["key"]), "X-Emulator-Fault": "latency=400"},
        )
        time.sleep(0.15)
        url = f"{tenant.base_url}/keys/{key['id']}"
        changed = (
            httpx.patch(url, json=change, headers=owner)
            if change
            else httpx.delete(url, headers=owner)
        )
        assert changed.status_code == 200
        assert_error(waiting.result(), status, code)
    if change is not None:
        assert window_charge(tenant, key["id"]) == 0


def test_a_job_whose_key_lost_its_scope_while_it_waited_is_refused(tenant: Tenant) -> None:
    key = limited_key(tenant, 1_000_000, None, product="video", scopes=["ai.gateway", "video"])
    owner = bearer(tenant.user_token)
    with ThreadPoolExecutor(1) as pool, httpx.Client(base_url=tenant.base_url) as http:
        headers = {**bearer(key["key"]), "X-Emulator-Fault": "latency=400"}
        waiting = pool.submit(
            httpx.post, f"{tenant.base_url}/generate/video", json=BODY, headers=headers
        )
        time.sleep(0.15)
        changed = http.patch(f"/keys/{key['id']}", json={"scopes": ["studio.media"]}, headers=owner)
        assert changed.status_code == 200
        assert_error(waiting.result(), 403, "insufficient_scope")
    assert window_charge(tenant, key["id"]) == 0
    with tenant.client() as client:
        assert client.get("/generation").json()["data"] == []
