"""The journal pages as every list does: `limit`, an opaque `cursor`, `has_more`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error


def journal_page(http: httpx.Client, **params: Any) -> dict[str, Any]:
    response = http.get("/_emulator/requests", params=params)
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


def test_pages_follow_next_cursor_to_the_end(tenant: Tenant, http: httpx.Client) -> None:
    with tenant.client() as client:
        for _ in range(5):
            client.get("/ai-gateway/balance")
    mine = {"account_id": tenant.account_id}
    every = [e["id"] for e in journal_page(http, **mine)["data"]]
    assert len(every) == 5
    first = journal_page(http, **mine, limit=2)
    assert first["has_more"] is True and first["next_cursor"]
    with tenant.client() as client:  # newer requests do not shift the pages after
        client.get("/ai-gateway/balance")
    seen, page = [e["id"] for e in first["data"]], first
    while page["has_more"]:
        page = journal_page(http, **mine, limit=2, cursor=page["next_cursor"])
        seen += [e["id"] for e in page["data"]]
    assert seen == every
    assert page["next_cursor"] is None


def test_a_cursor_it_did_not_give_out_is_a_422(http: httpx.Client) -> None:
    for cursor in ("zzz", "WyJhIl0"):  # garbage, and a well-formed cursor of another kind
        error = assert_error(
            http.get("/_emulator/requests", params={"cursor": cursor}), 422, "invalid_request"
        )
        assert error["param"] == "cursor"
    error = assert_error(
        http.get("/_emulator/requests", params={"limit": 1001}), 422, "invalid_request"
    )
    assert error["param"] == "limit"


def test_the_plugin_lists_every_match_across_pages(
    emulator: EmulatorHandle, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    with tenant.client() as client:
        for _ in range(5):
            client.get("/ai-gateway/balance")
    monkeypatch.setattr(emulator.journal, "page_size", 2)
    mine = {"account_id": tenant.account_id}
    assert len(emulator.journal.list(**mine)) == 5  # three pages followed
    assert len(emulator.journal.list(**mine, limit=3)) == 3  # one page, as asked
