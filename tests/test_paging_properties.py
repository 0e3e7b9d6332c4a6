"""Paging through any list, with any page size, yields every item exactly once, in order."""

from __future__ import annotations

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.testing import EmulatorHandle


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(total=st.integers(min_value=0, max_value=12), size=st.integers(min_value=1, max_value=7))
def test_key_pages_cover_everything_once(emulator: EmulatorHandle, total: int, size: int) -> None:
    tenant = emulator.create_tenant()
    headers = {"Authorization": f"Bearer {tenant.user_token}"}
    with httpx.Client(base_url=tenant.base_url, headers=headers) as client:
        for i in range(total):
            client.post("/keys", json={"name": f"k{i}"})
        everything = [k["id"] for k in client.get("/keys", params={"limit": 100}).json()["data"]]
        seen, cursor = [], None
        while True:
            params = {"limit": size} | ({"cursor": cursor} if cursor else {})
            page = client.get("/keys", params=params).json()
            assert len(page["data"]) <= size
            seen += [k["id"] for k in page["data"]]
            if not page["has_more"]:
                break
            cursor = page["next_cursor"]
    assert seen == everything and len(everything) == total + 1


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(size=st.integers(min_value=1, max_value=30))
def test_model_pages_cover_the_catalog(emulator: EmulatorHandle, size: int) -> None:
    with httpx.Client(base_url=emulator.base_url) as client:
        everything = [m["id"] for m in client.get("/models").json()["data"]]
        seen, cursor = [], None
        while True:
            params = {"limit": size} | ({"cursor": cursor} if cursor else {})
            page = client.get("/models", params=params).json()
            seen += [m["id"] for m in page["data"]]
            if not page["has_more"]:
                break
            cursor = page["next_cursor"]
    assert seen == everything
