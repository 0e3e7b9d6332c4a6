"""Many threads on one account at once: nothing is lost, nothing is counted twice."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

from emulator.testing import EmulatorHandle

THREADS = 16
PER_THREAD = 25


def test_concurrent_top_ups_all_land_in_the_ledger(emulator: EmulatorHandle) -> None:
    tenant = emulator.create_tenant(balance_micros=0)
    url = f"{emulator.url}/_emulator/accounts/{tenant.account_id}/topup"

    def worker(n: int) -> list[str]:
        with httpx.Client() as client:
            return [
                client.post(url, json={"amount_micros": n + 1}).json()["ledger_entry_id"]
                for _ in range(PER_THREAD)
            ]

    with ThreadPoolExecutor(THREADS) as pool:
        entries = [e for batch in pool.map(worker, range(THREADS)) for e in batch]
    assert len(set(entries)) == THREADS * PER_THREAD
    expected = PER_THREAD * sum(n + 1 for n in range(THREADS))
    assert emulator.account(tenant.account_id)["balance_micros"] == expected


def test_concurrent_key_creation_gives_distinct_ids_and_secrets(emulator: EmulatorHandle) -> None:
    tenant = emulator.create_tenant()
    headers = {"Authorization": f"Bearer {tenant.user_token}"}

    def worker(n: int) -> list[tuple[str, str]]:
        with httpx.Client(base_url=tenant.base_url, headers=headers) as client:
            made = [client.post("/keys", json={"name": f"k{n}-{i}"}).json() for i in range(10)]
        return [(k["id"], k["key"]) for k in made]

    with ThreadPoolExecutor(THREADS) as pool:
        made = [k for batch in pool.map(worker, range(THREADS)) for k in batch]
    assert len({i for i, _ in made}) == len({s for _, s in made}) == THREADS * 10
    with httpx.Client(base_url=tenant.base_url, headers=headers) as client:
        listed = []
        cursor = None
        while True:
            page = client.get(
                "/keys", params={"limit": 100} | ({"cursor": cursor} if cursor else {})
            )
            listed += page.json()["data"]
            if not page.json()["has_more"]:
                break
            cursor = page.json()["next_cursor"]
    assert len(listed) == THREADS * 10 + 1
