"""Gateway requests are charged through holds: never overdrawn, never charged twice."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

# An answer of exactly max_tokens tokens: its charge equals its hold.
EXACT = {
    "model": "emulator/echo",
    "messages": [{"role": "user", "content": "one two three four five six seven eight nine ten"}],
    "max_tokens": 5,
    "provider": {"only": ["emulator"]},
}


def charge_of_exact(emulator: EmulatorHandle) -> int:
    probe = emulator.create_tenant()
    with probe.client() as http:
        return int(http.post("/chat/completions", json=EXACT).json()["usage"]["charge_micros"])


def ledger_ok(emulator: EmulatorHandle, tenant: Tenant, opening: int) -> tuple[int, int]:
    """The balance is the opening balance minus the settled charges, to the micro."""
    account = emulator.account(tenant.account_id)
    with tenant.client() as http:
        events = http.get("/ai-gateway/usage", params={"limit": 200}).json()["data"]
        reservations_pending = account["pending_micros"]
    charged = sum(e["charge_micros"] for e in events)
    assert account["balance_micros"] == opening - charged
    assert account["available_micros"] == account["balance_micros"] - reservations_pending
    assert account["balance_micros"] >= 0 and reservations_pending == 0
    return account["balance_micros"], len([e for e in events if e["status"] == "succeeded"])


def test_a_request_is_charged_by_the_formula(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as http:
        answer = http.post(
            "/chat/completions",
            json={**EXACT, "model": "openai/gpt-4o-mini", "provider": {"only": ["openai"]}},
        ).json()
        event = http.get(f"/ai-gateway/usage/{answer['id']}").json()
        balance = http.get("/ai-gateway/balance").json()
    usage = answer["usage"]
    cost = -(
        -(usage["prompt_tokens"] * 150_000 + usage["completion_tokens"] * 600_000) // 1_000_000
    )
    assert event["provider_cost_micros"] == cost
    assert event["charge_micros"] == max(20, cost + -(-cost * 55 // 1000)) == usage["charge_micros"]
    assert usage["cost"] == usage["charge_micros"] / 1_000_000
    assert balance["balance_micros"] == 25_000_000 - usage["charge_micros"]
    ledger_ok(emulator, tenant, 25_000_000)


def test_key_usage_totals_follow_the_charges(tenant: Tenant) -> None:
    with tenant.client() as http:
        charges = [
            http.post("/chat/completions", json=EXACT).json()["usage"]["charge_micros"]
            for _ in range(3)
        ]
    keys = httpx.get(
        f"{tenant.base_url}/keys", headers={"Authorization": f"Bearer {tenant.user_token}"}
    ).json()
    usage = keys["data"][0]["usage"]
    assert usage["requests"] == 3 and usage["charge_micros"] == sum(charges)


def test_key_usage_counts_settled_requests_only_and_shows_after_an_update(
    tenant: Tenant,
) -> None:
    with tenant.client() as http:
        charge = http.post("/chat/completions", json=EXACT).json()["usage"]["charge_micros"]
        failed = http.post("/chat/completions", json={**EXACT, "model": "emulator/fail-503"})
        assert failed.status_code == 503  # an event, no charge: not a request served
    owner = {"Authorization": f"Bearer {tenant.user_token}"}
    key_id = httpx.get(f"{tenant.base_url}/keys", headers=owner).json()["data"][0]["id"]
    expected = {"requests": 1, "charge_micros": charge, "window_charge_micros": charge}
    one = httpx.get(f"{tenant.base_url}/keys/{key_id}", headers=owner).json()
    assert one["usage"] == expected
    renamed = httpx.patch(f"{tenant.base_url}/keys/{key_id}", headers=owner, json={"name": "x"})
    assert renamed.json()["usage"] == expected


def test_no_credit_is_402_and_retries_are_pointless(emulator: EmulatorHandle) -> None:
    broke = emulator.create_tenant(balance_micros=0)
    with broke.client() as http:
        response = http.post("/chat/completions", json=EXACT)
        error = assert_error(response, 402, "insufficient_credits", "billing_error")
        assert response.headers["x-should-retry"] == "false"
        assert "Top up" in error["message"] and error["metadata"]["available_micros"] == 0
        assert "lower max_tokens" in error["message"]
        # Each format's 402 names its own field that bounds the answer.
        asked = {"model": "openai/gpt-4o", "input": "hello"}
        refused = assert_error(http.post("/responses", json=asked), 402, "insufficient_credits")
        assert "lower max_output_tokens" in refused["message"]
        assert http.get("/ai-gateway/usage").json()["data"] == []
    with (
        openai.OpenAI(base_url=emulator.base_url, api_key=broke.api_key) as client,
        pytest.raises(openai.APIStatusError) as info,
    ):
        client.chat.completions.create(**{k: v for k, v in EXACT.items() if k != "provider"})
    assert info.value.status_code == 402 and info.value.code == "insufficient_credits"


def test_a_failed_request_releases_its_hold(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as http:
        assert (
            http.post(
                "/chat/completions", json={**EXACT, "model": "emulator/fail-503", "provider": {}}
            ).status_code
            == 503
        )
    assert ledger_ok(emulator, tenant, 25_000_000) == (25_000_000, 0)


def test_concurrent_requests_never_overdraw(emulator: EmulatorHandle) -> None:
    price = charge_of_exact(emulator)
    tenant = emulator.create_tenant(balance_micros=10 * price, rate_limit_rpm=10_000)

    def attempt(_: int) -> int:
        with tenant.client() as http:
            return http.post("/chat/completions", json=EXACT).status_code

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(attempt, range(50)))
    assert statuses.count(200) == 10 and statuses.count(402) == 40
    assert ledger_ok(emulator, tenant, 10 * price) == (0, 10)


def test_the_same_idempotency_key_is_charged_once(emulator: EmulatorHandle, tenant: Tenant) -> None:
    def attempt(_: int) -> tuple[int, str]:
        with tenant.client(headers={"Idempotency-Key": "once"}) as http:
            response = http.post("/chat/completions", json=EXACT)
            return response.status_code, response.headers.get("x-generation-id", "")

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(attempt, range(20)))
    assert {status for status, _ in results} <= {200, 409}
    assert len({gen for status, gen in results if status == 200}) == 1
    _, succeeded = ledger_ok(emulator, tenant, 25_000_000)
    assert succeeded == 1


def test_reservations_show_status_and_idempotency_key(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client(headers={"Idempotency-Key": "res-1"}) as http:
        ok = http.post("/chat/completions", json=EXACT)
    with tenant.client() as http:
        http.post("/chat/completions", json={**EXACT, "model": "emulator/fail-503", "provider": {}})
        listed = http.get("/ai-gateway/reservations").json()["data"]
        settled = http.get("/ai-gateway/reservations", params={"status": "settled"}).json()["data"]
        assert_error(
            http.get("/ai-gateway/reservations", params={"status": "odd"}), 422, "invalid_request"
        )
    assert [r["status"] for r in listed] == ["failed", "settled"]
    assert listed[0]["reason"] == "every route failed" and listed[0]["charge_micros"] == 0
    assert settled[0]["idempotency_key"] == "res-1"
    assert settled[0]["usage_event_id"] == ok.headers["x-generation-id"]
    assert (
        settled[0]["charge_micros"]
        == ok.json()["usage"]["charge_micros"]
        <= settled[0]["amount_micros"]
    )


def test_premium_models_need_approval(emulator: EmulatorHandle, tenant: Tenant) -> None:
    body = {"model": "emulator/premium", "messages": EXACT["messages"], "max_tokens": 5}
    with tenant.client() as http:
        response = http.post("/chat/completions", json=body)
        error = assert_error(response, 402, "premium_approval_required", "billing_error")
        assert response.headers["x-should-retry"] == "false" and error["param"] == "model"
        # The same premium model as a fallback is refused too; a plain model is not.
        fallback = {
            **body,
            "model": "emulator/echo",
            "models": ["openai/gpt-4o", "anthropic/claude-opus-4"],
        }
        error = assert_error(
            http.post("/chat/completions", json=fallback), 402, "premium_approval_required"
        )
        assert error["param"] == "models[1]"  # the fallback that needs approval
    approved = emulator.create_tenant(premium_approved=True)
    with approved.client() as http:
        assert http.post("/chat/completions", json=body).status_code == 200


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


@pytest.mark.parametrize("path", ["/chat/completions", "/responses"])
@pytest.mark.parametrize("cut", [1, 2, 3, 5])
def test_a_cut_stream_is_never_charged_above_its_hold(
    emulator: EmulatorHandle, path: str, cut: int
) -> None:
    """A tool call cut at `max_tokens` streams its whole name; a stream cut after it
    was billed for the name's tokens, above the hold: an account that could afford
    exactly the hold went below zero (found by a stateful money fuzz)."""
    limit = "max_tokens" if path == "/chat/completions" else "max_output_tokens"
    prompt = {"messages": [{"role": "user", "content": "weather please"}]}
    if path == "/responses":
        prompt = {"input": "weather please"}
    body = {"model": "openai/gpt-4o", **prompt, "tools": [WEATHER], limit: 1, "stream": True}
    if path == "/responses":
        body["tools"] = [{"type": "function", "name": "get_weather", "parameters": {}}]
    probe = emulator.create_tenant()
    with probe.client() as http:
        hold = http.post("/ai-gateway/quote", json=body).json()["hold_micros"]
    tenant = emulator.create_tenant(balance_micros=hold)
    with tenant.client(headers={"X-Emulator-Fault": f"cut={cut}"}) as http:
        assert http.post(path, json=body).status_code == 200
    balance, served = ledger_ok(emulator, tenant, hold)
    assert served == 1 and balance >= 0
