"""Holds: what settling does when a charge comes out above its hold, and holds that
count a prompt as the provider that serves it reads it."""

from __future__ import annotations

import json
import logging

import pytest

from emulator.billing import holds
from emulator.gateway import charges
from emulator.runtime import open_runtime
from emulator.settings import Settings
from emulator.store import reservations
from emulator.store.accounts import get_account
from emulator.store.usage import UsageEvent, get_usage_event
from emulator.testing import EmulatorHandle, Tenant
from tests.billing.test_spend_limits import SLOW_STREAM
from tests.helpers import assert_error


def _event(rt_id: str, charge: int) -> UsageEvent:
    return UsageEvent(
        id=rt_id,
        account_id="acct_demo",
        key_id=None,
        created_at="2026-01-01T00:00:00Z",
        endpoint="chat.completions",
        model="emulator/echo",
        provider="echo",
        status="succeeded",
        prompt_tokens=10,
        completion_tokens=5,
        total_tokens=15,
        provider_cost_micros=charge - 10,
        platform_fee_micros=10,
        charge_micros=charge,
        margin_micros=10,
        route_attempts=[],
        metadata={},
    )


@pytest.mark.parametrize("charge", [500, 1_000])
def test_a_charge_is_never_more_than_its_hold(
    charge: int, caplog: pytest.LogCaptureFixture
) -> None:
    rt = open_runtime(Settings(db=":memory:"))
    with rt.store.read() as conn:
        account = get_account(conn, "acct_demo")
    assert account is not None
    opening = account.balance_micros
    taken = holds.hold(rt, "acct_demo", None, 600, None)
    event = _event(rt.new_id("gen"), charge)
    with caplog.at_level(logging.ERROR, logger="emulator"):
        holds.settle(rt, taken, event)
    charged = min(charge, 600)
    with rt.store.read() as conn:
        account = get_account(conn, "acct_demo")
        stored = get_usage_event(conn, "acct_demo", event.id)
        held = reservations.active_total(conn, "acct_demo")
    assert account is not None and stored is not None
    assert account.balance_micros == opening - charged
    assert held == 0
    assert stored.charge_micros == charged
    # The platform's margin pays for the difference: margin = charge - provider cost still.
    assert stored.margin_micros == stored.charge_micros - stored.provider_cost_micros
    if charge > 600:
        assert stored.metadata["charge_capped_from_micros"] == charge
        assert "above its hold" in caplog.text
    else:
        assert "charge_capped_from_micros" not in stored.metadata
        assert caplog.text == ""


WEATHER_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {
        "name": "lookup",
        "arguments": json.dumps({"city": "東京" * 400}, ensure_ascii=False),
    },
}
LOOKUP = {"type": "function", "function": {"name": "lookup", "parameters": {}}}
ASK = {"role": "user", "content": "Explain quantum physics in depth"}
RESHAPED = {  # requests a provider of another format reads as more tokens than sent
    "empty tool schemas, chat to a responses provider": (
        "/chat/completions",
        {
            "model": "openai/gpt-4o",
            "max_tokens": 3,
            "messages": [ASK],
            "tools": [
                {"type": "function", "function": {"name": f"t{i}", "parameters": {}}}
                for i in range(30)
            ],
            "tool_choice": "none",
        },
    ),
    "non-ASCII arguments, chat to a messages provider": (
        "/chat/completions",
        {
            "model": "anthropic/claude-sonnet-4",
            "max_tokens": 5,
            "tools": [LOOKUP],
            "messages": [
                ASK,
                {"role": "assistant", "content": None, "tool_calls": [WEATHER_CALL]},
                {"role": "tool", "tool_call_id": "call_1", "content": "found"},
                {"role": "user", "content": "And then?"},
            ],
        },
    ),
    "exponent numbers, responses to a messages provider": (
        "/responses",
        {
            "model": "anthropic/claude-sonnet-4",
            "max_output_tokens": 16,
            "tools": [{"type": "function", "name": "lookup", "parameters": {}}],
            "input": [
                {"role": "user", "content": "Sum these"},
                {
                    "type": "function_call",
                    "call_id": "c1",
                    "name": "lookup",
                    "arguments": '{"n":[' + ",".join(["1e5"] * 300) + "]}",
                },
                {"type": "function_call_output", "call_id": "c1", "output": "done"},
            ],
        },
    ),
}


@pytest.mark.parametrize("case", RESHAPED)
def test_the_hold_counts_a_prompt_as_the_provider_reads_it(tenant: Tenant, case: str) -> None:
    path, body = RESHAPED[case]
    endpoint = path.strip("/").replace("/", ".")
    with tenant.client() as http:
        quoted = http.post("/ai-gateway/quote", json={**body, "endpoint": endpoint})
        assert quoted.status_code == 200, quoted.text
        quote = quoted.json()
        answer = http.post(path, json=body)
        assert answer.status_code == 200, answer.text
        (held,) = http.get("/ai-gateway/reservations").json()["data"]
        (event,) = http.get("/ai-gateway/usage").json()["data"]
    assert "charge_capped_from_micros" not in event["metadata"]
    assert held["charge_micros"] == event["charge_micros"] <= held["amount_micros"]
    assert quote["estimated_charge_micros"] <= quote["hold_micros"] == held["amount_micros"]


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_says_the_charge_settling_made(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    """Should a hold come out below the charge, the answer's usage (a stream's last chunk
    included, priced before settling) says the charge cut to the hold, as the ledger."""
    monkeypatch.setattr(charges, "worst_case", lambda *args, **kwargs: 7)  # in this process
    body = {"model": "emulator/echo", "messages": [ASK], "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    with tenant.client() as http:
        answer = http.post("/chat/completions", json=body)
        (event,) = http.get("/ai-gateway/usage").json()["data"]
    if stream:
        chunks = [line[6:] for line in answer.text.splitlines() if line.startswith("data: {")]
        usage = json.loads(chunks[-1])["usage"]
    else:
        usage = answer.json()["usage"]
    assert event["charge_micros"] == usage["charge_micros"] == 7
    assert usage["cost"] == 0.000007
    assert event["metadata"]["charge_capped_from_micros"] > 7


def test_a_second_stream_cannot_spend_what_the_first_holds(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as http:
        hold = http.post("/ai-gateway/quote", json=SLOW_STREAM).json()["hold_micros"]
    small = emulator.create_tenant(balance_micros=hold * 3 // 2)  # one hold, not two
    with small.client(timeout=30) as http:
        with http.stream("POST", "/chat/completions", json=SLOW_STREAM) as first:
            lines = first.iter_lines()  # kept: dropping it would close the stream
            next(lines)  # its hold is active
            second = http.post("/chat/completions", json=SLOW_STREAM)
            assert_error(second, 402, "insufficient_credits", "billing_error")
            assert [line for line in lines if line][-1] == "data: [DONE]"
        balance = http.get("/ai-gateway/balance").json()["balance_micros"]
    assert hold * 3 // 2 - hold <= balance < hold * 3 // 2


ASKS = {
    "three answers": {
        "model": "openai/gpt-4o-mini",
        "n": 3,
        "max_tokens": 20,
        "messages": [{"role": "user", "content": "Explain indexes in depth"}],
    },
    "a fallback route": {
        "model": "emulator/flaky",
        "max_tokens": 40,
        "messages": [{"role": "user", "content": "[emulator:tokens=40]"}],
    },
}


@pytest.mark.parametrize("ask", ASKS)
def test_the_hold_covers_every_answer_and_every_route(tenant: Tenant, ask: str) -> None:
    with tenant.client() as http:
        answer = http.post("/chat/completions", json=ASKS[ask])
        assert answer.status_code == 200, answer.text[:200]
        (held,) = http.get("/ai-gateway/reservations").json()["data"]
        event = http.get(f"/ai-gateway/usage/{answer.headers['x-generation-id']}").json()
    assert 0 < event["charge_micros"] <= held["amount_micros"]
    assert "charge_capped_from_micros" not in event["metadata"]


def test_a_hold_asks_no_more_output_than_the_route_gives(tenant: Tenant) -> None:
    """gpt-4o-mini's routes give at most 16,384 tokens: a larger `max_tokens` holds as
    much as that, and none holds as much as no cap."""
    body = {"model": "openai/gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    with tenant.client() as http:

        def hold(**cap: int) -> int:
            return int(http.post("/ai-gateway/quote", json={**body, **cap}).json()["hold_micros"])

        at_cap = hold(max_tokens=16_384)
        assert hold(max_tokens=1_000_000) == hold() == at_cap > hold(max_tokens=16_383)
