"""The control plane refuses web pages from other origins when no admin token guards
it: a page a developer visits must not reset the emulator with a no-cors POST."""

from __future__ import annotations

import httpx
import pytest
from click.testing import CliRunner
from litestar.testing import TestClient

from emulator.app import create_app
from emulator.cli import main
from emulator.control_origins import host_allowed, normal_origin, origin_allowed
from emulator.settings import Settings
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import bearer

NONE: frozenset[str] = frozenset()


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:3000",
        "http://app.localhost:5173",
        "https://localhost",
        "http://127.0.0.1:8080",
        "http://127.1.2.3",
        "http://[::1]:3000",
    ],
)
def test_loopback_pages_may_call(origin: str) -> None:
    assert origin_allowed(origin, "127.0.0.1:8787", NONE)


@pytest.mark.parametrize(
    "origin",
    ["https://evil.example", "http://localhost.evil.example", "null", "file://", "ftp://x", ""],
)
def test_other_pages_may_not(origin: str) -> None:
    assert not origin_allowed(origin, "127.0.0.1:8787", NONE)


def test_a_page_at_this_servers_address_may_call_but_a_rebound_name_may_not() -> None:
    assert origin_allowed("http://192.168.1.5:8787", "192.168.1.5:8787", NONE)
    assert not origin_allowed("http://192.168.1.5:9999", "192.168.1.5:8787", NONE)
    # DNS rebinding: the attacker's name resolves to us, so the page is "same-origin"
    assert not origin_allowed("http://evil.example:8787", "evil.example:8787", NONE)


def test_named_origins_and_the_wildcard() -> None:
    assert origin_allowed("http://devbox:3000", None, frozenset({"http://devbox:3000"}))
    assert origin_allowed("null", None, frozenset({"null"}))
    assert origin_allowed("https://evil.example", None, frozenset({"*"}))


def test_origins_are_normalised_and_checked() -> None:
    assert normal_origin("HTTP://DevBox:3000/") == "http://devbox:3000"
    for bad in ("devbox:3000", "http://devbox/app", "http://devbox:99999", "http://a?b"):
        with pytest.raises(ValueError):
            normal_origin(bad)


def test_a_foreign_page_cannot_change_or_read_the_control_plane(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    evil = {"Origin": "https://evil.example"}
    with httpx.Client(base_url=emulator.url) as client:
        account = f"/_emulator/accounts/{tenant.account_id}"
        before = client.get(account).json()["balance_micros"]
        refused = client.post(f"{account}/topup", json={"amount_micros": 5}, headers=evil)
        assert refused.status_code == 403
        error = refused.json()["error"]
        assert (error["type"], error["code"]) == ("permission_error", "origin_not_allowed")
        assert "--control-origin https://evil.example" in error["message"]
        assert "access-control-allow-origin" not in refused.headers
        assert refused.headers["x-request-id"]
        assert client.get("/_emulator/accounts", headers=evil).status_code == 403
        preflight = client.options(
            "/_emulator/faults",
            headers={**evil, "Access-Control-Request-Method": "POST"},
        )
        assert preflight.status_code == 403
        assert "access-control-allow-origin" not in preflight.headers
        assert client.get(account).json()["balance_micros"] == before
        assert client.post(f"{account}/topup", json={"amount_micros": 5}).status_code == 200
        assert client.get(account).json()["balance_micros"] == before + 5


def test_a_local_page_and_the_api_stay_open(emulator: EmulatorHandle) -> None:
    with httpx.Client(base_url=emulator.url) as client:
        local = client.get("/_emulator/health", headers={"Origin": "http://localhost:3000"})
        assert local.status_code == 200
        assert local.headers["access-control-allow-origin"] == "*"
        api = client.get(
            "/api/v1/models",
            headers={"Origin": "https://evil.example", **bearer("sk-emu-demo-all")},
        )
        assert api.status_code == 200
        assert api.headers["access-control-allow-origin"] == "*"


def test_a_named_origin_is_served() -> None:
    settings = Settings(db=":memory:", control_origins=("http://devbox:3000",))
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        named = client.get("/_emulator/health", headers={"Origin": "http://devbox:3000"})
        assert named.status_code == 200
        other = client.get("/_emulator/health", headers={"Origin": "http://devbox:4000"})
        assert other.status_code == 403


def test_an_admin_token_guards_the_control_plane_for_every_origin() -> None:
    with TestClient(
        create_app(Settings(db=":memory:", admin_token="s3cret")), base_url="http://127.0.0.1"
    ) as client:
        evil = {"Origin": "https://evil.example"}
        assert client.post("/_emulator/reset", headers=evil).status_code == 401
        answered = client.get(
            "/_emulator/health", headers={**evil, "X-Emulator-Admin-Token": "s3cret"}
        )
        assert answered.status_code == 200


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8787", True),
        ("localhost:8787", True),
        ("app.localhost", True),
        ("[::1]:8787", True),
        ("192.168.1.5:8787", True),
        ("attacker.rebind.example:8787", False),
        ("devbox:8787", False),
    ],
)
def test_the_control_plane_answers_under_this_machines_names(host: str, allowed: bool) -> None:
    assert host_allowed(host, NONE) is allowed
    assert host_allowed("devbox:8787", frozenset({"http://devbox:3000"}))


def test_a_rebound_name_cannot_read_or_reset_the_control_plane(emulator: EmulatorHandle) -> None:
    """DNS rebinding: a page's name points at 127.0.0.1; its own GETs carry no Origin."""
    with httpx.Client(base_url=emulator.url) as client:
        rebound = {"Host": f"attacker.rebind.example:{emulator.url.rsplit(':', 1)[1]}"}
        for method, path in [("GET", "/_emulator/requests"), ("POST", "/_emulator/clock")]:
            refused = client.request(method, path, headers=rebound, json={})
            assert refused.status_code == 403, (method, path)
            assert refused.json()["error"]["code"] == "origin_not_allowed"
            assert "attacker.rebind.example" in refused.json()["error"]["message"]
        api = client.get("/api/v1/models", headers=rebound)
        assert api.status_code == 200  # the API is the service's: any name


def test_a_server_on_the_network_or_with_a_token_answers_any_name() -> None:
    for settings in (
        Settings(db=":memory:", host="0.0.0.0"),
        Settings(db=":memory:", admin_token="s3cret"),
    ):
        with TestClient(create_app(settings), base_url="http://devbox.example:8787") as client:
            answered = client.get("/_emulator/health", headers={"X-Emulator-Admin-Token": "s3cret"})
            assert answered.status_code == 200


def test_the_cli_refuses_what_is_no_origin() -> None:
    result = CliRunner().invoke(main, ["serve", "--control-origin", "devbox:3000"])
    assert result.exit_code == 2
    assert "--control-origin" in result.output and "not an origin" in result.output
