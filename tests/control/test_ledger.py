"""GET /_emulator/accounts/{id}/ledger: every change of a balance, newest first, so a test
can check its billing code against the entries themselves."""

from __future__ import annotations

import httpx

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error
from tests.video.test_generate_video import generate


def test_the_ledger_adds_up_to_the_balance_entry_by_entry(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        chat = client.post(
            "/chat/completions",
            json={"model": "openai/gpt-4o-mini", "messages": [{"role": "user", "content": "x"}]},
        )
        emulator.top_up(tenant.account_id, 1_000)
        failing = generate(client, prompt="a storm [emulator:fail]").json()
        emulator.advance(600)  # the job fails; the ledger's read refunds it
        entries = emulator.ledger(tenant.account_id, asset="usd_micros")
        balance = client.get("/ai-gateway/balance").json()["balance_micros"]
    kinds = ["job_refund", "job_charge", "topup", "charge", "opening"]
    assert [e["kind"] for e in entries] == kinds
    charge = next(e for e in entries if e["kind"] == "charge")
    assert charge["reference"] == chat.headers["x-generation-id"]
    assert -charge["amount"] == chat.json()["usage"]["charge_micros"]
    assert entries[0]["amount"] == -entries[1]["amount"] == failing["charge_micros"]
    assert sum(e["amount"] for e in entries) == entries[0]["balance_after"] == balance
    running = 0
    for entry in reversed(entries):  # each entry's balance_after is the running sum
        running += entry["amount"]
        assert entry["balance_after"] == running


def test_the_ledger_pages_and_filters(emulator: EmulatorHandle, tenant: Tenant) -> None:
    for amount in (1, 2, 3):
        emulator.top_up(tenant.account_id, amount)
    url = f"{emulator.url}/_emulator/accounts/{tenant.account_id}/ledger"
    with httpx.Client() as http:
        first = http.get(url, params={"kind": "topup", "limit": 2}).json()
        rest = http.get(url, params={"kind": "topup", "cursor": first["next_cursor"]}).json()
        credits = http.get(url, params={"asset": "studio_credits"}).json()["data"]
        refused = [
            http.get(url, params={"kind": "gift"}),
            http.get(url, params={"asset": "gold"}),
            http.get(url, params={"limit": 0}),
            http.get(url, params={"cursor": "not-ours"}),
        ]
        unknown = http.get(f"{emulator.url}/_emulator/accounts/acct_none/ledger")
    assert [e["amount"] for e in first["data"]] == [3, 2] and first["has_more"]
    assert [e["amount"] for e in rest["data"]] == [1] and not rest["has_more"]
    assert [(e["kind"], e["amount"]) for e in credits] == [("opening", tenant.studio_credits)]
    for response in refused:
        assert response.status_code in (400, 422), response.text
        assert response.json()["error"]["param"] in ("kind", "asset", "limit", "cursor")
    assert assert_error(unknown, 404, "not_found")["param"] == "account_id"


def test_a_top_up_after_a_job_failed_comes_after_its_refund(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """A refund is written by the next write or read of the account's money, dated when
    the job failed: a top-up is such a write, so the ledger stays in time order."""
    with tenant.client() as client:
        generate(client, prompt="a storm [emulator:fail]")
    emulator.advance(3600)
    emulator.top_up(tenant.account_id, 1_000)
    entries = emulator.ledger(tenant.account_id, asset="usd_micros")
    assert [e["kind"] for e in entries[:2]] == ["topup", "job_refund"]
    assert entries[0]["created_at"] > entries[1]["created_at"]
    assert entries[0]["balance_after"] == entries[1]["balance_after"] + 1_000
