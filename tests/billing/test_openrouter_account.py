"""GET /api/v1/key and /api/v1/credits: OpenRouter's views of a key and of the account's
credits, from the emulator's keys, usage events and ledger (the SDK round trip is in
tests/gateway/test_other_clients.py)."""

from __future__ import annotations

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, scoped_client


def test_a_key_without_a_limit_has_no_budget(tenant: Tenant) -> None:
    with tenant.client() as http:
        key = http.get("/key").json()["data"]
    assert (key["limit"], key["limit_remaining"], key["limit_reset"]) == (None, None, None)
    assert key["budgets"] == [] and key["effective_budget"] is None
    assert key["usage"] == 0 and key["is_free_tier"] is False


def test_usage_windows_follow_the_virtual_clock(emulator: EmulatorHandle, tenant: Tenant) -> None:
    body = {"model": "emulator/echo", "messages": [{"role": "user", "content": "a b c"}]}
    with tenant.client() as http:
        charge = http.post("/chat/completions", json=body).json()["usage"]["charge_micros"]
        emulator.advance(40 * 86_400)  # past this day, week and month
        key = http.get("/key").json()["data"]
    assert key["usage"] == charge / 1_000_000
    assert key["usage_daily"] == key["usage_weekly"] == key["usage_monthly"] == 0


def test_credits_take_the_gateway_scope_and_key_any_key(tenant: Tenant) -> None:
    video = scoped_client(tenant, "video", "video")
    with video:
        assert video.get("/key").json()["data"]["label"] == "scoped"
        assert_error(video.get("/credits"), 403, "insufficient_scope")
    with tenant.client() as http:
        credits = http.get("/credits").json()["data"]
    assert credits == {"total_credits": tenant.balance_micros / 1_000_000, "total_usage": 0.0}


def test_the_current_key_shows_its_new_name(tenant: Tenant) -> None:
    with tenant.client() as client:
        assert client.get("/key").json()["data"]["label"] != "renamed"
    with tenant.client(headers={"Authorization": f"Bearer {tenant.user_token}"}) as keys:
        assert keys.patch(f"/keys/{tenant.api_key_id}", json={"name": "renamed"}).is_success
    with tenant.client() as client:
        assert client.get("/key").json()["data"]["label"] == "renamed"
