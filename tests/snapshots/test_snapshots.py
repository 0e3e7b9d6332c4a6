"""Snapshots: named ones through HTTP, and files across a restart."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest

from emulator.server import BackgroundServer
from emulator.settings import Settings, default_fixtures_dir
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, every_page
from tests.test_serve import free_port, serving

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


def test_a_tenant_made_after_a_restore_has_an_identity_of_its_own(
    emulator: EmulatorHandle,
) -> None:
    """The journal and fault rules outlive a restore and name tenants by id: a tenant
    made after a restore must not take the id or key of one made before. Generation ids
    follow the restored state, as SPEC 2 has it."""
    with emulator.snapshots.saved("t-ids"):
        before = emulator.create_tenant()
        with before.client() as client:
            first = client.post("/chat/completions", json=CHAT).headers["x-generation-id"]
    after = emulator.create_tenant()
    with after.client() as client:
        second = client.post("/chat/completions", json=CHAT).headers["x-generation-id"]
    assert after.account_id != before.account_id and after.api_key != before.api_key
    assert second == first  # the same state, the same request: the same id
    assert [e["account_id"] for e in emulator.journal.list(account_id=after.account_id)] == [
        after.account_id
    ]


def test_unknown_and_bad_names(http: httpx.Client) -> None:
    assert_error(http.post("/_emulator/snapshots/nope/restore"), 404, "not_found")
    assert_error(http.delete("/_emulator/snapshots/nope"), 404, "not_found")
    for name in ("../etc", ".", "..", "-x", "", "a" * 65):
        bad = http.post("/_emulator/snapshots", json={"name": name})
        assert assert_error(bad, 422, "invalid_request")["param"] == "name"
    for name in ("v1.2", "a" * 64, "_x-y"):
        assert http.post("/_emulator/snapshots", json={"name": name}).status_code == 201
        assert http.delete(f"/_emulator/snapshots/{name}").status_code == 200


def test_snapshot_on_exit_and_restore_carry_a_state_across_runs(tmp_path: Path) -> None:
    from tests.test_serve import serving

    saved = tmp_path / "demo #1?%20.db"  # characters a URI would read otherwise
    headers = {"Authorization": "Bearer sk-emu-demo-all"}
    with serving("--db", ":memory:", "--snapshot-on-exit", str(saved), cwd=tmp_path) as (url, _):
        httpx.post(f"{url}/_emulator/accounts/acct_demo/topup", json={"amount_micros": 1234})
        balance = httpx.get(f"{url}/api/v1/ai-gateway/balance", headers=headers).json()
    assert saved.exists()  # written when the server stopped (SIGTERM)
    with serving("--db", ":memory:", "--restore", str(saved), cwd=tmp_path) as (url, _):
        again = httpx.get(f"{url}/api/v1/ai-gateway/balance", headers=headers).json()
    assert again["balance_micros"] == balance["balance_micros"] == 25_001_234
    assert sorted(p.name for p in tmp_path.iterdir()) == [saved.name]  # no stray file


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


def _balance(url: str) -> int:
    headers = {"Authorization": "Bearer sk-emu-demo-all"}
    response = httpx.get(f"{url}/api/v1/ai-gateway/balance", headers=headers)
    return int(response.json()["balance_micros"])


def _format_versions(path: Path) -> bytes:
    return path.read_bytes()[18:20]  # 1 rollback journal, 2 WAL


def test_a_snapshot_of_a_file_state_restores_into_memory(tmp_path: Path) -> None:
    state, saved, older = tmp_path / "state.db", tmp_path / "saved.db", tmp_path / "older.db"
    with serving("--db", str(state), "--snapshot-on-exit", str(saved), cwd=tmp_path) as (url, _):
        httpx.post(f"{url}/_emulator/accounts/acct_demo/topup", json={"amount_micros": 1234})
    assert _format_versions(saved) == b"\x01\x01"  # written in rollback mode
    # As snapshot files were written before: the WAL mark of the state in the header.
    with closing(sqlite3.connect(state)) as source, closing(sqlite3.connect(older)) as target:
        source.backup(target)
    assert _format_versions(older) == b"\x02\x02"
    for snapshot in (saved, older):
        with serving("--db", ":memory:", "--restore", str(snapshot), cwd=tmp_path) as (url, _):
            assert _balance(url) == 25_001_234


def _write_not_a_snapshot(path: Path, kind: str) -> None:
    if kind == "junk":
        path.write_bytes(b"not a database\n" * 100)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "another program's":
        with closing(sqlite3.connect(path)) as conn:
            conn.execute("CREATE TABLE notes (text TEXT)")


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("junk", "junk.db is not a snapshot: file is not a database"),
        ("empty", "junk.db is not a snapshot: it holds no emulator state"),
        ("another program's", "junk.db is not a snapshot: it holds no emulator state"),
        ("missing", "Invalid value for '--restore': File 'junk.db' does not exist."),
    ],
)
def test_restoring_a_file_that_is_not_a_snapshot_is_a_clear_error(
    tmp_path: Path, kind: str, message: str
) -> None:
    _write_not_a_snapshot(tmp_path / "junk.db", kind)
    args = ["serve", "--port", str(free_port()), "--db", ":memory:", "--restore", "junk.db"]
    done = subprocess.run(
        [sys.executable, "-m", "emulator", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == f"Error: {message}"


@pytest.fixture
def admin(slow_streams: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{slow_streams}/_emulator") as client:
        yield client


LONG = {
    "model": "openai/gpt-4o",
    "messages": [{"role": "user", "content": "[emulator:tokens=40] databases"}],
    "stream": True,
}


def _stream_across(url: str, key: str, idempotency_key: str, meanwhile: Callable[[], Any]) -> str:
    """Start a stream, do `meanwhile` once its first chunk is in, read the rest."""
    headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": idempotency_key}
    with httpx.stream(
        "POST", f"{url}/api/v1/chat/completions", json=LONG, headers=headers, timeout=30
    ) as response:
        lines = response.iter_lines()
        first = next(line for line in lines if line)
        meanwhile()
        return first + "".join(lines)


def _money(url: str, key: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[Any]]:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=f"{url}/api/v1", headers=headers) as client:
        balance = client.get("/ai-gateway/balance").json()
        holds = client.get("/ai-gateway/reservations").json()["data"]
        events = client.get("/ai-gateway/usage").json()["data"]
    return balance, holds, events


def test_a_stream_running_across_a_restore_charges_nothing_in_the_restored_state(
    slow_streams: str, admin: httpx.Client
) -> None:
    tenant = admin.post("/accounts", json={"balance_micros": 1_000_000}).json()
    key = tenant["api_key"]
    admin.post("/snapshots", json={"name": "before-stream"})
    before = _money(slow_streams, key)
    restore = lambda: admin.post("/snapshots/before-stream/restore").raise_for_status()  # noqa: E731
    streamed = _stream_across(slow_streams, key, "across-restore", restore)
    assert "[DONE]" in streamed  # the client still gets its whole answer
    assert _money(slow_streams, key) == before  # but the restored state is as saved
    # The ids the stream took are free again, so later requests do not clash with it.
    with httpx.Client(base_url=f"{slow_streams}/api/v1") as client:
        body = {**LONG, "stream": False}
        for _ in range(3):
            answer = client.post(
                "/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"}
            )
            assert answer.status_code == 200, answer.text


def test_a_key_made_by_an_account_a_restore_removes_is_401_never_500(
    emulator: EmulatorHandle,
) -> None:
    """A user-token request racing a restore that removes its account (the credential
    checked before, the write after) is refused 401 in the state now, not written there."""

    async def race() -> list[int]:
        seen = []
        async with httpx.AsyncClient(base_url=emulator.url, timeout=30) as http:
            for _ in range(25):
                made = (await http.post("/_emulator/accounts", json={})).json()
                token = {"Authorization": f"Bearer {made['user_token']}"}
                key, _ = await asyncio.gather(
                    http.post("/api/v1/keys", json={"name": "k"}, headers=token),
                    http.post("/_emulator/snapshots/t-no-accounts/restore"),
                )
                seen.append(key.status_code)
        return seen

    with emulator.snapshots.saved("t-no-accounts"):
        statuses = asyncio.run(race())
    assert set(statuses) <= {201, 401}, statuses


def test_a_restored_snapshot_taken_mid_stream_leaves_no_hold_or_key_in_flight(
    slow_streams: str, admin: httpx.Client
) -> None:
    tenant = admin.post("/accounts", json={"balance_micros": 1_000_000}).json()
    key = tenant["api_key"]
    save = lambda: admin.post("/snapshots", json={"name": "mid-stream"}).raise_for_status()  # noqa: E731
    _stream_across(slow_streams, key, "mid-stream", save)
    admin.post("/snapshots/mid-stream/restore").raise_for_status()
    balance, holds, events = _money(slow_streams, key)
    assert balance["pending_micros"] == 0 and balance["balance_micros"] == 1_000_000
    assert [(h["status"], h["reason"]) for h in holds] == [
        ("failed", "released at restore: its request ran in the state saved")
    ]
    assert events == []
    # Its Idempotency-Key is free: the same request runs again (not 409 for a day).
    again = _stream_across(slow_streams, key, "mid-stream", lambda: None)
    assert "[DONE]" in again
    balance, _, events = _money(slow_streams, key)
    assert balance["pending_micros"] == 0 and len(events) == 1
    assert balance["balance_micros"] == 1_000_000 - events[0]["charge_micros"]


def test_a_stream_running_across_a_reset_leaves_the_fixtures_balance(
    slow_streams: str, admin: httpx.Client
) -> None:
    admin.post("/reset").raise_for_status()
    before = _money(slow_streams, "sk-emu-demo-all")
    reset = lambda: admin.post("/reset").raise_for_status()  # noqa: E731
    assert "[DONE]" in _stream_across(slow_streams, "sk-emu-demo-all", "across-reset", reset)
    assert _money(slow_streams, "sk-emu-demo-all") == before


def test_a_restore_keeps_the_server_s_clock_mode_for_commands_beside_it(tmp_path: Path) -> None:
    from emulator.runtime import open_runtime
    from emulator.settings import Settings
    from emulator.snapshots.service import restore_file, save_file

    saved = tmp_path / "saved.db"
    manual = open_runtime(Settings(db=str(tmp_path / "a.db"), clock="manual"))
    save_file(manual, saved)
    real = open_runtime(Settings(db=str(tmp_path / "b.db"), clock="real"))
    restore_file(real, saved)
    beside = open_runtime(Settings(db=str(tmp_path / "b.db")), serving=False)
    assert beside.clock.mode == "real"


def test_the_list_pages_with_limit_and_cursor(emulator: EmulatorHandle, http: httpx.Client) -> None:
    mine = ["paged-a", "paged-b", "paged-c"]
    for name in mine:
        emulator.snapshots.save(name)
    try:
        seen = [s["name"] for s in every_page(f"{emulator.url}/_emulator/snapshots", limit=1)]
        assert [name for name in seen if name in mine] == mine  # in the order saved, once
        assert len(seen) == len(set(seen))
        bad = http.get("/_emulator/snapshots", params={"cursor": "garbage"})
        assert assert_error(bad, 422, "invalid_request")["param"] == "cursor"
        assert_error(http.get("/_emulator/snapshots", params={"limit": 0}), 422, "invalid_request")
    finally:
        for name in mine:
            emulator.snapshots.delete(name)


def test_the_next_page_follows_a_snapshot_deleted_since(
    emulator: EmulatorHandle, http: httpx.Client
) -> None:
    """The cursor keeps the snapshot's place, not only its name: deleting the last one
    shown does not end the list early; saving a name again moves it to the end."""
    mine = ["gone-a", "gone-b", "gone-c"]
    for name in mine:
        emulator.snapshots.save(name)
    try:
        names = [s["name"] for s in http.get("/_emulator/snapshots").json()["data"]]
        first = http.get("/_emulator/snapshots", params={"limit": names.index("gone-a") + 1})
        assert first.json()["data"][-1]["name"] == "gone-a"
        emulator.snapshots.delete("gone-a")
        emulator.snapshots.save("gone-b")  # replaced: now the newest
        after = http.get("/_emulator/snapshots", params={"cursor": first.json()["next_cursor"]})
        assert [s["name"] for s in after.json()["data"]][-2:] == ["gone-c", "gone-b"]
    finally:
        for name in mine[1:]:
            emulator.snapshots.delete(name)


def test_a_snapshots_size_is_that_of_its_state_not_of_the_files_past(tmp_path: Path) -> None:
    """The same state after a reset measures the same, however much was deleted before."""
    from emulator.runtime import open_runtime
    from emulator.settings import Settings
    from emulator.store.meta import new_id

    rt = open_runtime(Settings(db=str(tmp_path / "state.db")))
    fresh = rt.snapshots.save(rt, "fresh").wire()["size_bytes"]
    with rt.store.write() as conn:
        conn.execute("CREATE TEMP TABLE one AS SELECT * FROM accounts WHERE id = 'acct_demo'")
        for _ in range(300):  # accounts like the demo one, with long names
            conn.execute(
                "UPDATE one SET id = ?, name = ?", [new_id(conn, rt.ids, "acct"), "x" * 500]
            )
            conn.execute("INSERT INTO accounts SELECT * FROM one")
        conn.execute("DROP TABLE one")
    rt.reset()
    assert rt.snapshots.save(rt, "reset").wire()["size_bytes"] == fresh


@pytest.mark.parametrize("credential", ["user_token", "api_key"])
def test_a_request_admitted_before_a_restore_runs_in_the_restored_state(
    emulator: EmulatorHandle, credential: str
) -> None:
    """Its account, made after the snapshot, is gone there: 401, not a 500 or a charge
    written to an account the restored state does not have."""
    emulator.snapshots.save("t-race")
    late = emulator.create_tenant()
    token = late.user_token if credential == "user_token" else late.api_key
    path, body = (
        ("/keys", {"name": "k"}) if credential == "user_token" else ("/chat/completions", CHAT)
    )
    delayed = emulator.faults.add(account_id=late.account_id, delay_ms=600)
    with delayed, ThreadPoolExecutor(1) as pool:
        pending = pool.submit(
            httpx.post,
            f"{emulator.base_url}{path}",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        time.sleep(0.25)
        emulator.snapshots.restore("t-race")
        answer = pending.result()
    assert_error(answer, 401, "invalid_api_key")


def test_a_restore_brings_back_a_clock_before_the_fixtures_start_now(tmp_path: Path) -> None:
    """The restored state's own `clock_start` bounds its clock, not the one of fixtures
    changed since: a snapshot saved before a reset to a later start comes back whole."""
    fixtures = tmp_path / "fixtures"
    shutil.copytree(default_fixtures_dir(), fixtures)
    settings = Settings(db=":memory:", fixtures=fixtures, clock="manual", log_level="warning")
    server = BackgroundServer(settings).start()
    try:
        with httpx.Client(base_url=server.url + "/_emulator") as control:
            control.post("/clock", json={"advance_seconds": 3600}).raise_for_status()
            saved = control.get("/clock").json()["now"]
            control.post("/snapshots", json={"name": "early"}).raise_for_status()
            (fixtures / "world.yaml").write_text("clock_start: '2026-06-01T00:00:00Z'\n")
            control.post("/reset").raise_for_status()
            assert control.get("/clock").json()["now"] == "2026-06-01T00:00:00.000Z"
            restored = control.post("/snapshots/early/restore").json()
            assert restored["clock"] == saved == control.get("/clock").json()["now"]
            control.post("/reset").raise_for_status()  # and a reset then starts it anew
            assert control.get("/clock").json()["now"] == "2026-06-01T00:00:00.000Z"
    finally:
        server.stop()


def test_ledger_ids_after_a_restore_are_those_after_the_save_even_after_a_top_up(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """A top-up numbers its entry as charges do (in the server's blocks), so the next
    charge's entry id is the same right after the save and after the restore."""
    ledger = f"/accounts/{tenant.account_id}/ledger?limit=1"

    def charged_entry() -> str:
        with tenant.client() as client:
            assert client.post("/chat/completions", json=CHAT).status_code == 200
        entry: str = emulator.control("GET", ledger)["data"][0]["id"]
        return entry

    charged_entry()
    emulator.control("POST", f"/accounts/{tenant.account_id}/topup", {"amount_micros": 1000})
    with emulator.snapshots.saved("t-ledger-ids"):
        after_save = charged_entry()
        emulator.snapshots.restore("t-ledger-ids")
        assert charged_entry() == after_save
