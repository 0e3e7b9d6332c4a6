"""/_emulator/*: health, reset, tenants, top-ups, the clock, and the admin token."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
from litestar.testing import TestClient

from emulator.app import create_app
from emulator.settings import Settings
from emulator.testing import EmulatorHandle
from tests.helpers import assert_error, bearer


@pytest.fixture
def control(emulator: EmulatorHandle) -> httpx.Client:
    with httpx.Client(base_url=f"{emulator.url}/_emulator") as client:
        yield client  # type: ignore[misc]


def test_health(control: httpx.Client) -> None:
    body = control.get("/health").json()
    assert body["status"] == "ok" and body["version"] == "0.1.0"
    assert body["db"] == ":memory:" and body["seed"] == 0
    assert body["clock"]["mode"] == "manual"
    assert body["uptime_seconds"] >= 0


def test_reset_restores_the_fixtures_state(demo: EmulatorHandle, control: httpx.Client) -> None:
    with httpx.Client(base_url=demo.base_url, headers=bearer("emu_user_demo")) as user:
        made = user.post("/keys", json={"name": "temporary"}).json()
        demo.top_up("acct_demo", 5_000_000)
        demo.advance(3600)
        body = control.post("/reset").json()
        assert body["status"] == "reset" and body["clock"]["now"] == "2026-01-01T00:00:00.000Z"
        assert made["id"] not in [k["id"] for k in user.get("/keys").json()["data"]]
    assert demo.account("acct_demo")["balance_micros"] == 25_000_000
    # A key made before the reset is gone for good.
    assert_error(
        httpx.get(f"{demo.base_url}/ai-gateway/balance", headers=bearer(made["key"])),
        401,
        "invalid_api_key",
    )


def test_reset_is_deterministic(demo: EmulatorHandle) -> None:
    def one_run() -> tuple[str, str, str]:
        demo.reset()
        t = demo.create_tenant()
        return t.account_id, t.api_key, t.user_token

    assert one_run() == one_run()


def test_new_tenant_is_isolated_and_has_every_scope(emulator: EmulatorHandle) -> None:
    a = emulator.create_tenant(balance_micros=1_000, studio_credits=7, rate_limit_rpm=42)
    b = emulator.create_tenant()
    assert a.account_id != b.account_id and a.api_key != b.api_key
    account = emulator.account(a.account_id)
    assert account["balance_micros"] == 1_000 and account["studio_credits"] == 7
    assert account["rate_limit_rpm"] == 42 and account["pending_micros"] == 0
    assert account["available_micros"] == 1_000 and account["balance_usd"] == "0.001000"
    keys = httpx.get(f"{a.base_url}/keys", headers=bearer(a.user_token)).json()["data"]
    assert [k["id"] for k in keys] == [a.api_key_id]
    assert sorted(keys[0]["scopes"]) == ["ai.gateway", "studio.media", "video"]


def test_tenant_defaults_and_validation(control: httpx.Client) -> None:
    created = control.post("/accounts").json()
    assert created["balance_micros"] == 25_000_000 and created["studio_credits"] == 1000
    assert created["rate_limit_rpm"] == 600 and created["premium_approved"] is False
    for body, param in [
        ({"balance_micros": -1}, "balance_micros"),
        ({"balance_micros": "5"}, "balance_micros"),
        ({"rate_limit_rpm": 0}, "rate_limit_rpm"),
        ({"premium_approved": "yes"}, "premium_approved"),
        ({"bogus": 1}, "bogus"),
        ({"name": "acme\u0000"}, "name"),
        ({"name": "\u200b "}, "name"),  # a zero-width space: nothing to see in a list
    ]:
        assert (
            assert_error(control.post("/accounts", json=body), 422, "invalid_request")["param"]
            == param
        )


def test_top_up_is_a_ledger_entry(emulator: EmulatorHandle, control: httpx.Client) -> None:
    tenant = emulator.create_tenant(balance_micros=0)
    r = control.post(f"/accounts/{tenant.account_id}/topup", json={"amount_micros": 1_500_000})
    assert r.status_code == 200
    body = r.json()
    assert body["amount_micros"] == 1_500_000 and body["ledger_entry_id"].startswith("le_")
    body = control.post(f"/accounts/{tenant.account_id}/topup", json={"amount_usd": "10.25"}).json()
    assert body["account"]["balance_micros"] == 11_750_000
    assert body["account"]["balance_usd"] == "11.750000"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"amount_micros": 0},
        {"amount_micros": -5},
        {"amount_micros": 1, "amount_usd": "1"},
        {"amount_usd": "ten"},
        {"amount_usd": "0.0000001"},
        {"amount_usd": "-3"},
        {"amount_micros": 10**13},
    ],
)
def test_bad_top_ups_are_422(emulator: EmulatorHandle, control: httpx.Client, body: dict) -> None:
    tenant = emulator.create_tenant()
    assert_error(
        control.post(f"/accounts/{tenant.account_id}/topup", json=body), 422, "invalid_request"
    )
    assert emulator.account(tenant.account_id)["balance_micros"] == 25_000_000


def test_a_bad_top_up_names_the_field_it_came_in(
    emulator: EmulatorHandle, control: httpx.Client
) -> None:
    tenant = emulator.create_tenant()
    path = f"/accounts/{tenant.account_id}/topup"
    for field, amount in [("amount_usd", "99999999999999999999999"), ("amount_micros", 10**13)]:
        error = assert_error(control.post(path, json={field: amount}), 422, "invalid_request")
        assert error["param"] == field
    both = assert_error(control.post(path, json={}), 422, "invalid_request")
    assert both["message"].startswith("Send exactly one of `amount_micros` and `amount_usd`")


def test_unknown_account_is_404(control: httpx.Client) -> None:
    assert_error(control.get("/accounts/acct_nope"), 404, "not_found")
    assert_error(
        control.post("/accounts/acct_nope/topup", json={"amount_micros": 5}), 404, "not_found"
    )


def test_clock_advances_sets_and_never_goes_back(
    demo: EmulatorHandle, control: httpx.Client
) -> None:
    assert control.get("/clock").json()["now"] == "2026-01-01T00:00:00.000Z"
    assert (
        control.post("/clock", json={"advance_seconds": 90.5}).json()["now"]
        == "2026-01-01T00:01:30.500Z"
    )
    assert (
        control.post("/clock", json={"now": "2026-03-01T12:00:00Z"}).json()["now"]
        == "2026-03-01T12:00:00.000Z"
    )
    error = assert_error(
        control.post("/clock", json={"now": "2026-02-01T00:00:00Z"}), 422, "clock_backwards"
    )
    assert error["param"] == "now"
    assert_error(control.post("/clock", json={"advance_seconds": -1}), 422, "invalid_request")
    assert_error(control.post("/clock", json={"now": "yesterday"}), 422, "invalid_request")
    assert_error(control.post("/clock", json={}), 422, "invalid_request")


def test_timestamps_come_from_the_virtual_clock(demo: EmulatorHandle) -> None:
    demo.advance(86400 * 10)
    tenant = demo.create_tenant()
    keys = httpx.get(f"{demo.base_url}/keys", headers=bearer(tenant.user_token)).json()["data"]
    assert keys[0]["created_at"] == "2026-01-11T00:00:00.000Z"
    assert demo.account(tenant.account_id)["created_at"] == "2026-01-11T00:00:00.000Z"


def test_last_used_at_follows_use(emulator: EmulatorHandle, tenant) -> None:
    with tenant.client() as c:
        c.get("/ai-gateway/balance")
    keys = httpx.get(f"{tenant.base_url}/keys", headers=bearer(tenant.user_token)).json()["data"]
    assert keys[0]["last_used_at"] == emulator.clock()["now"]


def test_admin_token_guards_the_control_plane() -> None:
    app = create_app(Settings(db=":memory:", admin_token="s3cret"))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert_error(client.get("/_emulator/health"), 401, "invalid_admin_token")
        assert_error(
            client.post("/_emulator/reset", headers=bearer("wrong")), 401, "invalid_admin_token"
        )
        assert client.get("/_emulator/health", headers=bearer("s3cret")).status_code == 200
        ok = client.post("/_emulator/accounts", headers={"X-Emulator-Admin-Token": "s3cret"})
        assert ok.status_code == 201
        # The API itself does not take the admin token.
        assert client.get("/api/v1/models").status_code == 200


def test_providers_can_be_marked_down_and_slow(
    demo: EmulatorHandle, control: httpx.Client, tenant, client
) -> None:
    import openai

    listed = control.get("/providers").json()
    assert (listed["object"], listed["has_more"], listed["next_cursor"]) == ("list", False, None)
    names = {p["name"]: p for p in listed["data"]}
    assert names["openai"]["wire_format"] == "responses" and names["openai"]["status"] == "up"
    assert names["emulator-broken"]["behavior"] == "fail"
    hello = [{"role": "user", "content": "hello"}]
    served = client.chat.completions.create(model="openai/gpt-4o", messages=hello)
    assert served.model_extra["provider"] == "openai"  # the routes are now known...
    marked = control.post("/providers/openai", json={"status": "down"}).json()
    assert marked["status"] == "down"
    assert (
        demo.base_url
        and httpx.get(f"{demo.base_url}/models/openai/gpt-4o").json()["providers"][0]["status"]
        == "down"
    )
    served = client.chat.completions.create(model="openai/gpt-4o", messages=hello)
    assert served.model_extra["provider"] == "azure"  # ...and not kept past the change
    control.post("/providers/azure", json={"status": "down"})
    with pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(model="openai/gpt-4o", messages=hello)
    attempts = info.value.body["metadata"]["route_attempts"]
    assert [(a["provider"], a["error_code"]) for a in attempts] == [
        ("openai", "provider_down"),
        ("azure", "provider_down"),
    ]
    control.post("/providers/emulator", json={"status": "slow", "latency_ms": 3000})
    with (
        tenant.client() as http,
        http.stream(
            "POST",
            "/chat/completions",
            json={
                "model": "emulator/echo",
                "messages": hello,
                "stream": True,
                "provider": {"only": ["emulator"]},
            },
        ) as r,
    ):
        first = next(r.iter_lines())
    assert first == ": EMULATOR PROCESSING"
    assert_error(control.post("/providers/nobody", json={"status": "down"}), 404, "not_found")
    assert_error(
        control.post("/providers/openai", json={"status": "sideways"}), 422, "invalid_request"
    )
    control.post("/reset")
    assert {p["status"] for p in control.get("/providers").json()["data"]} == {"up"}


def test_up_brings_back_the_fixtures_latency_unless_one_is_given(control: httpx.Client) -> None:
    slow = control.post("/providers/openai", json={"status": "slow", "latency_ms": 3000})
    assert slow.json()["latency_ms"] == 3000
    assert control.post("/providers/openai", json={"status": "up"}).json()["latency_ms"] == 420
    given = control.post("/providers/openai", json={"status": "up", "latency_ms": 50})
    assert given.json()["latency_ms"] == 50
    control.post("/reset")


def test_a_reset_while_the_fixtures_cannot_be_loaded_keeps_the_state(tmp_path: Path) -> None:
    """A fixtures file half edited: the reset is refused, naming the file and the field,
    and the state is as it was; once the file is fixed, the reset goes through."""
    from emulator.server import BackgroundServer
    from emulator.settings import default_fixtures_dir

    fixtures = tmp_path / "fixtures"
    shutil.copytree(default_fixtures_dir(), fixtures)
    server = BackgroundServer(
        Settings(db=":memory:", fixtures=fixtures, log_level="warning")
    ).start()
    try:
        with httpx.Client(base_url=server.url) as client:
            assert client.post(
                "/_emulator/accounts/acct_demo/topup", json={"amount_usd": "1"}
            ).is_success
            pricing = fixtures / "pricing.yaml"
            good = pricing.read_text()
            pricing.write_text(
                good.replace("minimum_charge_micros: 20", "minimum_charge_micros: -1")
            )
            refused = client.post("/_emulator/reset")
            assert refused.status_code == 409, refused.text
            error = refused.json()["error"]
            assert error["code"] == "invalid_fixtures" and error["type"] == "conflict_error"
            assert (
                "pricing.yaml" in error["message"] and "minimum_charge_micros" in error["message"]
            )
            account = client.get("/_emulator/accounts/acct_demo").json()
            assert account["balance_micros"] == 26_000_000
            pricing.write_text(good)
            assert client.post("/_emulator/reset").is_success
            account = client.get("/_emulator/accounts/acct_demo").json()
            assert account["balance_micros"] == 25_000_000
    finally:
        server.stop()
