"""For every account at every moment: balance = opening + top-ups - settled charges,
available = balance - active holds, never negative. Checked after random sequences."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.testing import EmulatorHandle
from tests.billing.test_charges import EXACT

OPERATIONS = st.lists(
    st.sampled_from(["chat", "stream", "fail", "topup", "responses", "idempotent"]),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=OPERATIONS, opening=st.sampled_from([0, 40, 200, 5_000]))
def test_the_ledger_always_balances(
    emulator: EmulatorHandle, operations: list[str], opening: int
) -> None:
    tenant = emulator.create_tenant(balance_micros=opening, rate_limit_rpm=10_000)
    topups = 0
    with tenant.client() as http:
        for op in operations:
            if op == "topup":
                emulator.top_up(tenant.account_id, 100)
                topups += 100
            elif op == "fail":
                http.post(
                    "/chat/completions",
                    json={**EXACT, "model": "emulator/fail-503", "provider": {}},
                )
            elif op == "stream":
                http.post("/chat/completions", json={**EXACT, "stream": True})
            elif op == "responses":
                http.post(
                    "/responses",
                    json={
                        "model": "emulator/echo",
                        "input": "one two three four five six",
                        "max_output_tokens": 5,
                    },
                )
            elif op == "idempotent":
                http.post("/chat/completions", json=EXACT, headers={"Idempotency-Key": "same"})
            else:
                http.post("/chat/completions", json=EXACT)
            account = emulator.account(tenant.account_id)
            events = http.get("/ai-gateway/usage", params={"limit": 200}).json()["data"]
            settled = sum(e["charge_micros"] for e in events)
            assert account["balance_micros"] == opening + topups - settled
            assert (
                account["available_micros"] == account["balance_micros"] - account["pending_micros"]
            )
            assert account["pending_micros"] == 0  # nothing is in flight between requests
            assert account["balance_micros"] >= 0
