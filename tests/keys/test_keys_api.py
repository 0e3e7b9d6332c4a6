"""/api/v1/keys with a user token: create, list, update, revoke, and the rules."""

from __future__ import annotations

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, bearer


@pytest.fixture
def keys(tenant: Tenant) -> httpx.Client:
    with httpx.Client(base_url=f"{tenant.base_url}/keys", headers=bearer(tenant.user_token)) as c:
        yield c  # type: ignore[misc]


def test_create_returns_the_raw_key_once_and_it_works(keys: httpx.Client, tenant: Tenant) -> None:
    response = keys.post("", json={"name": "ci", "scopes": ["ai.gateway", "video"]})
    assert response.status_code == 201
    created = response.json()
    assert created["key"].startswith("sk-emu-") and len(created["key"]) > 30
    assert created["scopes"] == ["ai.gateway", "video"]
    assert created["status"] == "active" and created["object"] == "api_key"
    assert created["key_hint"] == f"sk-emu-...{created['key'][-4:]}"
    # The secret is never shown again: not by list, not by get.
    listed = keys.get("").json()
    assert created["key"] not in httpx.Response(200, json=listed).text
    assert "key" not in keys.get(f"/{created['id']}").json()
    # And it authenticates on a route of its scope.
    balance = httpx.get(f"{tenant.base_url}/ai-gateway/balance", headers=bearer(created["key"]))
    assert balance.status_code not in (401, 403)


def test_list_shows_usage_totals_and_is_newest_first(keys: httpx.Client) -> None:
    # Made within the same instant of the manual clock: creation order still holds.
    made = [keys.post("", json={"name": f"k{i}"}).json()["id"] for i in range(5)]
    data = keys.get("").json()["data"]
    assert [k["id"] for k in data][:5] == made[::-1]
    for key in data:
        assert key["usage"] == {"requests": 0, "charge_micros": 0, "window_charge_micros": 0}


def test_list_pages_with_limit_and_cursor(keys: httpx.Client) -> None:
    made = {keys.post("", json={"name": f"k{i}"}).json()["id"] for i in range(5)}
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = keys.get("", params=params).json()
        assert page["object"] == "list" and len(page["data"]) <= 2
        seen += [k["id"] for k in page["data"]]
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        cursor = page["next_cursor"]
    assert made <= set(seen) and len(seen) == len(set(seen)) == 6  # + the tenant's own key


def test_bad_paging_parameters_are_422(keys: httpx.Client) -> None:
    assert (
        assert_error(keys.get("", params={"limit": 0}), 422, "invalid_request")["param"] == "limit"
    )
    assert (
        assert_error(keys.get("", params={"limit": "x"}), 422, "invalid_request")["param"]
        == "limit"
    )
    assert (
        assert_error(keys.get("", params={"cursor": "garbage"}), 422, "invalid_request")["param"]
        == "cursor"
    )


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": 5}, "name"),
        ({"name": "bad\u0000name"}, "name"),
        ({"name": "two\nlines"}, "name"),
        ({"name": "\u200b\u200d"}, "name"),  # only invisible characters
        ({"name": "k", "scopes": ["admin"]}, "scopes[0]"),
        ({"name": "k", "scopes": []}, "scopes"),
        ({"name": "k", "scopes": ["video", "video"], "product": "video"}, "scopes"),
        ({"name": "k", "scopes": "ai.gateway"}, "scopes"),
        ({"name": "k", "spend_limit_micros": -1}, "spend_limit_micros"),
        ({"name": "k", "spend_limit_micros": 1.5}, "spend_limit_micros"),
        ({"name": "k", "spend_limit_micros": "100"}, "spend_limit_micros"),
        ({"name": "k", "spend_limit_micros": True}, "spend_limit_micros"),
        (
            {"name": "k", "spend_limit_micros": 10, "spend_reset_interval": "hourly"},
            "spend_reset_interval",
        ),
        ({"name": "k", "spend_reset_interval": "monthly"}, "spend_reset_interval"),
        ({"name": "k", "product": "nope"}, "product"),
        ({"name": "k", "environment": "has space"}, "environment"),
        ({"name": "k", "surprise": 1}, "surprise"),
    ],
)
def test_invalid_create_bodies_are_422_naming_the_field(keys, body, param) -> None:
    error = assert_error(keys.post("", json=body), 422, error_code(body), "invalid_request_error")
    assert error["param"] == param


def error_code(body: dict) -> str:
    if body.get("spend_reset_interval") == "monthly" and "spend_limit_micros" not in body:
        return "reset_interval_without_limit"
    return "invalid_request"


def test_gateway_product_needs_the_gateway_scope(keys: httpx.Client) -> None:
    error = assert_error(
        keys.post("", json={"name": "k", "scopes": ["video"]}), 422, "missing_gateway_scope"
    )
    assert error["param"] == "scopes" and "ai.gateway" in error["message"]
    ok = keys.post("", json={"name": "k", "scopes": ["video"], "product": "video"})
    assert ok.status_code == 201


def test_patch_updates_fields_without_rotating_the_secret(
    keys: httpx.Client, tenant: Tenant
) -> None:
    created = keys.post("", json={"name": "k"}).json()
    patch = {
        "name": "renamed",
        "environment": "staging",
        "spend_limit_micros": 5000,
        "spend_reset_interval": "daily",
        "scopes": ["ai.gateway", "studio.media"],
    }
    updated = keys.patch(f"/{created['id']}", json=patch).json()
    for field, value in patch.items():
        assert updated[field] == value
    assert "key" not in updated and updated["key_hint"] == created["key_hint"]
    # The same secret still works: PATCH never rotates.
    r = httpx.get(f"{tenant.base_url}/ai-gateway/balance", headers=bearer(created["key"]))
    assert r.status_code not in (401, 403)
    cleared = keys.patch(
        f"/{created['id']}", json={"spend_limit_micros": None, "spend_reset_interval": None}
    )
    assert cleared.json()["spend_limit_micros"] is None


def test_clearing_a_limit_clears_its_interval(keys: httpx.Client) -> None:
    """An interval means nothing without a limit: a PATCH clearing the limit alone
    clears both; one that keeps the interval explicitly is refused, as a create is."""
    body = {"name": "k", "spend_limit_micros": 5000, "spend_reset_interval": "weekly"}
    key = keys.post("", json=body).json()
    refused = keys.patch(
        f"/{key['id']}", json={"spend_limit_micros": None, "spend_reset_interval": "daily"}
    )
    assert_error(refused, 422, "reset_interval_without_limit")
    cleared = keys.patch(f"/{key['id']}", json={"spend_limit_micros": None}).json()
    assert cleared["spend_limit_micros"] is None and cleared["spend_reset_interval"] is None
    assert keys.get(f"/{key['id']}").json()["spend_reset_interval"] is None


def test_patch_can_disable_and_enable(keys: httpx.Client, tenant: Tenant) -> None:
    created = keys.post("", json={"name": "k"}).json()
    url = f"{tenant.base_url}/ai-gateway/balance"
    assert (
        keys.patch(f"/{created['id']}", json={"status": "disabled"}).json()["status"] == "disabled"
    )
    assert_error(httpx.get(url, headers=bearer(created["key"])), 401, "key_disabled")
    keys.patch(f"/{created['id']}", json={"status": "active"})
    assert httpx.get(url, headers=bearer(created["key"])).status_code not in (401, 403)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"key": "sk-emu-mine"}, "key"),
        ({"product": "video"}, "product"),
        ({"status": "revoked"}, "status"),
        ({"status": None}, "status"),
        ({"name": None}, "name"),
        ({"name": "tab\tbed"}, "name"),
        ({"scopes": None}, "scopes"),
        ({"scopes": ["video"]}, "scopes"),
        ({"spend_reset_interval": "weekly"}, "spend_reset_interval"),
    ],
)
def test_invalid_patches_are_422(keys: httpx.Client, body, param) -> None:
    created = keys.post("", json={"name": "k"}).json()
    response = keys.patch(f"/{created['id']}", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["param"] == param


def test_delete_revokes(keys: httpx.Client, tenant: Tenant) -> None:
    created = keys.post("", json={"name": "k"}).json()
    response = keys.delete(f"/{created['id']}")
    assert response.status_code == 200
    assert response.json() == {"id": created["id"], "object": "api_key", "deleted": True}
    r = httpx.get(f"{tenant.base_url}/ai-gateway/balance", headers=bearer(created["key"]))
    assert "revoked" in assert_error(r, 401, "invalid_api_key")["message"]
    assert created["id"] not in [k["id"] for k in keys.get("").json()["data"]]
    assert_error(keys.get(f"/{created['id']}"), 404, "not_found")
    assert_error(keys.delete(f"/{created['id']}"), 404, "not_found")


def test_another_accounts_key_is_404_not_403(emulator: EmulatorHandle, keys: httpx.Client) -> None:
    other = emulator.create_tenant()
    for method in ("GET", "PATCH", "DELETE"):
        body = {"name": "stolen"} if method == "PATCH" else None
        response = keys.request(method, f"/{other.api_key_id}", json=body)
        assert_error(response, 404, "not_found", "not_found_error")
    assert other.api_key_id not in [k["id"] for k in keys.get("").json()["data"]]
    # ...and the key is untouched.
    with other.client() as c:
        assert c.get("/ai-gateway/balance").status_code not in (401, 403)


def test_demo_user_sees_the_demo_keys(demo: EmulatorHandle) -> None:
    with httpx.Client(base_url=demo.base_url, headers=bearer("emu_user_demo")) as c:
        data = c.get("/keys").json()["data"]
    by_id = {k["id"]: k for k in data}
    assert by_id["key_demo_limited"]["spend_limit_micros"] == 2000
    assert by_id["key_demo_limited"]["spend_reset_interval"] == "monthly"
    assert by_id["key_demo_ratelimited"]["rate_limit_rpm"] == 3
    assert by_id["key_demo_disabled"]["status"] == "disabled"
    assert "key_other" not in by_id
