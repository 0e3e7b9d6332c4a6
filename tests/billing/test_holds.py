"""Holds on their own: what settling does when a charge comes out above its hold."""

from __future__ import annotations

import logging

import pytest

from emulator.billing import holds
from emulator.runtime import open_runtime
from emulator.settings import Settings
from emulator.store import reservations
from emulator.store.accounts import get_account
from emulator.store.usage import UsageEvent, get_usage_event


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
