"""GET /ai-gateway/balance: the account's balance, holds and what is available."""

from __future__ import annotations

import httpx

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import bearer


def test_balance_of_the_demo_account(demo: EmulatorHandle) -> None:
    body = httpx.get(
        f"{demo.base_url}/ai-gateway/balance", headers=bearer("sk-emu-demo-gateway")
    ).json()
    assert body == {
        "object": "balance",
        "account_id": "acct_demo",
        "balance_micros": 25_000_000,
        "pending_micros": 0,
        "available_micros": 25_000_000,
        "balance_usd": "25.000000",
        "available_usd": "25.000000",
        "studio_credits": 1000,
    }


def test_a_top_up_shows_in_the_balance(emulator: EmulatorHandle, tenant: Tenant) -> None:
    emulator.top_up(tenant.account_id, 1_234_567)
    with tenant.client() as http:
        body = http.get("/ai-gateway/balance").json()
    assert body["balance_micros"] == 25_000_000 + 1_234_567 and body["available_usd"] == "26.234567"
