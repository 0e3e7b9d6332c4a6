"""GET /_emulator/accounts: every account, newest first, as `GET /accounts/{id}` shows each."""

from __future__ import annotations

import httpx

from emulator.testing import EmulatorHandle
from tests.helpers import assert_error


def test_it_lists_accounts_newest_first_with_their_balances(emulator: EmulatorHandle) -> None:
    older, newer = emulator.create_tenant(), emulator.create_tenant(balance_micros=7)
    with httpx.Client(base_url=f"{emulator.url}/_emulator") as control:
        listed = control.get("/accounts", params={"limit": 2}).json()
        assert [a["id"] for a in listed["data"]] == [newer.account_id, older.account_id]
        assert listed["data"][0] == control.get(f"/accounts/{newer.account_id}").json()
        assert listed["data"][0]["balance_micros"] == 7 and listed["has_more"] is True
        fixtures = control.get("/accounts", params={"origin": "fixture"}).json()["data"]
        assert {"acct_demo", "acct_broke", "acct_other"} <= {a["id"] for a in fixtures}
        assert {a["origin"] for a in fixtures} == {"fixture"}


def test_it_pages_without_gaps_or_repeats(emulator: EmulatorHandle) -> None:
    made = {emulator.create_tenant().account_id for _ in range(5)}
    seen: list[str] = []
    with httpx.Client(base_url=f"{emulator.url}/_emulator") as control:
        cursor = None
        while True:
            params = {"limit": 3, "origin": "tenant", **({"cursor": cursor} if cursor else {})}
            listed = control.get("/accounts", params=params).json()
            seen += [a["id"] for a in listed["data"]]
            cursor = listed["next_cursor"]
            if not listed["has_more"]:
                break
        everyone = control.get("/accounts", params={"origin": "tenant", "limit": 1000}).json()
    assert len(seen) == len(set(seen)) and made <= set(seen)
    assert seen == [a["id"] for a in everyone["data"]]


def test_bad_filters_and_cursors_are_refused(emulator: EmulatorHandle) -> None:
    with httpx.Client(base_url=f"{emulator.url}/_emulator") as control:
        assert_error(control.get("/accounts", params={"origin": "moon"}), 422, "invalid_request")
        error = assert_error(
            control.get("/accounts", params={"cursor": "nope"}), 422, "invalid_request"
        )
        assert error["param"] == "cursor"
        error = assert_error(control.get("/accounts", params={"limit": 0}), 422, "invalid_request")
        assert error["param"] == "limit"
