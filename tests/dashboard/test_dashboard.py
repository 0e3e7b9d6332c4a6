"""The demo dashboard: served to a browser without a credential, and clicked through in
jsdom (`tests/js/dashboard.mjs`), where its own script reads and changes the live emulator."""

from __future__ import annotations

from contextlib import closing
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from emulator.app import create_app
from emulator.server import BackgroundServer
from emulator.settings import Settings
from emulator.testing import EmulatorHandle, Tenant
from tests.js.test_js_clients import run_script


def test_the_page_is_served_without_a_credential() -> None:
    with TestClient(
        create_app(Settings(db=":memory:", admin_token="s3cret")), base_url="http://127.0.0.1"
    ) as client:
        page = client.get("/_emulator/dashboard")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert "<title>Gateway &amp; Studio emulator</title>" in page.text
        assert "X-Emulator-Admin-Token" in page.text  # what its script sends, when given
        assert page.headers["x-frame-options"] == "DENY"  # no site frames it to click it
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert client.get("/_emulator/accounts").status_code == 401  # its data is not open


def test_the_page_loads_nothing_from_elsewhere() -> None:
    with TestClient(create_app(Settings(db=":memory:")), base_url="http://127.0.0.1") as client:
        page = client.get("/_emulator/dashboard").text
    for outside in ("http://", "https://", "//cdn", "<link ", 'src="'):
        assert outside not in page


@pytest.fixture(scope="module")
def clicked(emulator: EmulatorHandle) -> tuple[Tenant, dict[str, Any]]:
    tenant = emulator.create_tenant()
    return tenant, run_script("dashboard.mjs", tenant, tenant, tenant.account_id)


def test_it_shows_the_account_and_tops_it_up(
    emulator: EmulatorHandle, clicked: tuple[Tenant, dict[str, Any]]
) -> None:
    tenant, seen = clicked
    assert seen["loads"]["balance"] == "$25.000000" and seen["loads"]["chosen"] == "chosen"
    assert seen["loads"]["ledger"] >= 1 and seen["loads"]["version"].startswith("v0.")
    assert seen["topUp"]["balance"] == "$35.000000"
    assert seen["topUp"]["ledgerTop"] == ["topup", "$10.000000"]
    assert (
        sum(e["amount"] for e in emulator.ledger(tenant.account_id, asset="usd_micros"))
        == (emulator.account(tenant.account_id)["balance_micros"])
    )


def test_its_chat_streams_a_billed_answer(clicked: tuple[Tenant, dict[str, Any]]) -> None:
    tenant, seen = clicked
    with tenant.client() as http:
        body = {
            "model": "openai/gpt-4o-mini",
            "messages": [
                {"role": "user", "content": "Explain how database indexes speed up queries"}
            ],
        }
        expected = http.post("/chat/completions", json=body).json()
        event = http.get("/ai-gateway/usage", params={"limit": 2}).json()["data"][1]
    assert seen["chat"]["text"] == expected["choices"][0]["message"]["content"] != ""
    assert seen["chat"]["usage"].startswith(f"{event['provider']} · {event['prompt_tokens']} + ")
    charge = event["charge_micros"]
    assert seen["chat"]["usage"].endswith(f"tokens · ${charge // 10**6}.{charge % 10**6:06d}")
    assert seen["chat"]["usageRow"][1:3] == [event["model"], event["provider"]]
    assert event["metadata"]["stream"] is True


def test_its_video_is_made_and_plays(clicked: tuple[Tenant, dict[str, Any]]) -> None:
    tenant, seen = clicked
    video = seen["video"]
    assert video["started"].startswith("queued") and video["status"] == "completed"
    with tenant.client() as http:
        made = http.get(f"/generation/{video['id']}").json()
    assert made["video_url"] == video["src"]
    played = httpx.get(video["src"])
    assert played.status_code == 200 and played.headers["content-type"] == "video/mp4"


def test_its_controls_change_the_emulator(
    emulator: EmulatorHandle, clicked: tuple[Tenant, dict[str, Any]]
) -> None:
    _, seen = clicked
    assert seen["provider"] == {"down": "down", "up": "up"}
    assert seen["fault"]["match"] == '{"path":"/api/v1/dashboard-check/*"}'
    assert seen["fault"]["action"].startswith('{"status":429}')
    with httpx.Client(base_url=f"{emulator.url}/_emulator") as control:
        assert control.get(f"/faults/{seen['fault']['id']}").status_code == 404
        providers = {p["name"]: p["status"] for p in control.get("/providers").json()["data"]}
    assert providers["azure"] == "up"
    assert "POST /api/v1/chat/completions" in " ".join(seen["requests"])


def test_under_an_admin_token_it_asks_for_the_token() -> None:
    settings = Settings(db=":memory:", clock="manual", admin_token="s3cret", log_level="warning")
    server = BackgroundServer(settings).start()
    try:
        with closing(EmulatorHandle(server.url, "s3cret")) as handle:
            tenant = handle.create_tenant()
            seen = run_script(
                "dashboard.mjs", tenant, tenant, tenant.account_id, "--admin", "s3cret"
            )
    finally:
        server.stop()
    asked = seen["asksForTheToken"]
    assert "admin token" in asked["refused"] and asked["formShown"] == "none"
    assert asked["balance"] == "$25.000000"
    # The tab's storage only: another page of the origin cannot read the token.
    assert asked["kept"] == {"tab": "s3cret", "origin": None}
