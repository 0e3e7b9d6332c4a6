"""Snapshots: named ones through HTTP, and files across a restart."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

CHAT = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hello"}]}


def test_restore_puts_back_balances_usage_and_clock(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        before = client.get("/ai-gateway/balance").json()
        clock = emulator.clock()["now"]
        emulator.snapshots.save("t-before")
        assert client.post("/chat/completions", json=CHAT).status_code == 200
        emulator.advance(3600)
        restored = emulator.snapshots.restore("t-before")
        assert restored["restored"] and restored["clock"] == clock
        assert client.get("/ai-gateway/balance").json() == before
        assert client.get("/ai-gateway/usage").json()["data"] == []
        # Ids go on from the restored state without a clash.
        assert client.post("/chat/completions", json=CHAT).status_code == 200
    names = [s["name"] for s in emulator.control("GET", "/snapshots")["data"]]
    assert "t-before" in names
    emulator.snapshots.delete("t-before")


def test_a_key_created_after_a_snapshot_is_gone_after_restore(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with emulator.snapshots.saved("t-keys"):
        late = emulator.create_tenant()
        with late.client() as client:
            assert client.get("/ai-gateway/balance").status_code == 200
    with late.client() as client:  # the cached key went with the restore
        assert_error(client.get("/ai-gateway/balance"), 401, "invalid_api_key")


def test_unknown_and_bad_names(http: httpx.Client) -> None:
    assert_error(http.post("/_emulator/snapshots/nope/restore"), 404, "not_found")
    assert_error(http.delete("/_emulator/snapshots/nope"), 404, "not_found")
    bad = http.post("/_emulator/snapshots", json={"name": "../etc"})
    assert assert_error(bad, 422, "invalid_request")["param"] == "name"


def test_snapshot_on_exit_and_restore_carry_a_state_across_runs(tmp_path: Path) -> None:
    from tests.test_serve import serving

    saved = tmp_path / "demo.db"
    headers = {"Authorization": "Bearer sk-emu-demo-all"}
    with serving("--db", ":memory:", "--snapshot-on-exit", str(saved), cwd=tmp_path) as (url, _):
        httpx.post(f"{url}/_emulator/accounts/acct_demo/topup", json={"amount_micros": 1234})
        balance = httpx.get(f"{url}/api/v1/ai-gateway/balance", headers=headers).json()
    assert saved.exists()  # written when the server stopped (SIGTERM)
    with serving("--db", ":memory:", "--restore", str(saved), cwd=tmp_path) as (url, _):
        again = httpx.get(f"{url}/api/v1/ai-gateway/balance", headers=headers).json()
    assert again["balance_micros"] == balance["balance_micros"] == 25_001_234


def test_restores_while_requests_run_are_safe(emulator: EmulatorHandle, tenant: Tenant) -> None:
    import threading

    emulator.snapshots.save("t-busy")
    statuses: list[int] = []
    done = threading.Event()

    def load() -> None:
        with tenant.client() as client:
            while not done.is_set():
                statuses.append(client.post("/chat/completions", json=CHAT).status_code)

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        restores, deadline = 0, time.monotonic() + 30
        while (len(statuses) < 60 or restores < 5) and time.monotonic() < deadline:
            emulator.snapshots.restore("t-busy")
            restores += 1
    finally:
        done.set()
        for thread in threads:
            thread.join()
    assert statuses and set(statuses) == {200}
    emulator.snapshots.restore("t-busy")
    with tenant.client() as client:  # the ledger still adds up after all that
        balance = client.get("/ai-gateway/balance").json()
        assert balance["balance_micros"] == tenant.balance_micros
    emulator.snapshots.delete("t-busy")


def test_a_snapshot_file_of_an_earlier_version_gets_the_tables_added_since(
    tmp_path: Path,
) -> None:
    import sqlite3
    from contextlib import closing

    from emulator.runtime import open_runtime
    from emulator.settings import Settings
    from emulator.snapshots.service import restore_file, save_file

    rt = open_runtime(Settings(db=":memory:"))
    try:
        earlier = tmp_path / "earlier.db"
        save_file(rt, earlier)
        with closing(sqlite3.connect(earlier)) as conn, conn:  # as a version before them
            conn.execute("DROP TABLE response_items")
            conn.execute("DELETE FROM _migrations WHERE name = 'm0008_response_items'")
        restore_file(rt, earlier)
        with rt.store.read() as conn:
            assert conn.execute("SELECT count(*) FROM response_items").fetchone()[0] == 0
    finally:
        rt.store.close()
