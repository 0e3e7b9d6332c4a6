"""`since` and `until` are instants: any offset reads the same, a non-instant is a 422."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error


def with_offset(instant: str, hours: int) -> str:
    """The same instant written in another time zone, e.g. `...T22:56:30+01:00`."""
    parsed = datetime.fromisoformat(instant.replace("Z", "+00:00"))
    return parsed.astimezone(timezone(timedelta(hours=hours))).isoformat()


def test_bounds_with_an_offset_mean_the_same_instant(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        client.get("/ai-gateway/balance")
        before = emulator.clock()["now"]
        emulator.advance(60)
        after = emulator.clock()["now"]
        client.get("/ai-gateway/balance")
        client.get("/ai-gateway/balance")
    mine = {"account_id": tenant.account_id}
    for hours in (0, 1, -5):
        assert len(emulator.journal.list(**mine, since=with_offset(after, hours))) == 2
        assert len(emulator.journal.list(**mine, until=with_offset(before, hours))) == 1
    assert len(emulator.journal.list(**mine, since=after.replace("Z", ""))) == 2  # naive: UTC


@pytest.mark.parametrize("param", ["since", "until"])
@pytest.mark.parametrize("value", ["garbage", "2026-13-01T00:00:00Z"])
def test_a_bound_that_is_not_an_instant_is_a_422(
    http: httpx.Client, param: str, value: str
) -> None:
    error = assert_error(
        http.get("/_emulator/requests", params={param: value}), 422, "invalid_request"
    )
    assert error["param"] == param and param in error["message"]
