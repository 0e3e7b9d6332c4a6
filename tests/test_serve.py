"""`emulator serve` as a user runs it: a real process on a real port."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from emulator.clock import parse_iso


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[str, dict[str, str]]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "emulator", "serve", "--port", str(port), *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    result: dict[str, str] = {"pid": str(process.pid)}
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{url}/_emulator/health", timeout=0.5)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        else:
            raise AssertionError("the emulator did not start")
        yield url, result
    finally:
        process.terminate()
        result["output"] = process.communicate(timeout=10)[0]


def test_serve_prints_urls_and_credentials_and_keeps_state(tmp_path: Path) -> None:
    with serving(cwd=tmp_path) as (url, result):
        httpx.post(f"{url}/_emulator/accounts/acct_demo/topup", json={"amount_micros": 1_000_000})
    output = result["output"]
    assert f"{url}/api/v1" in output and f"{url}/schema" in output
    assert "sk-emu-demo-all" in output and "emu_user_demo" in output
    assert (tmp_path / ".emulator" / "state.db").exists()
    # A second start keeps the state...
    with serving(cwd=tmp_path) as (url, _):
        assert (
            httpx.get(f"{url}/_emulator/accounts/acct_demo").json()["balance_micros"] == 26_000_000
        )
    # ...and --reset re-seeds it.
    with serving("--reset", cwd=tmp_path) as (url, _):
        assert (
            httpx.get(f"{url}/_emulator/accounts/acct_demo").json()["balance_micros"] == 25_000_000
        )


def test_a_port_in_use_is_one_error_line_and_leaves_the_state_alone(tmp_path: Path) -> None:
    """The socket is bound before the state is opened: `serve --reset` on a taken port
    does not wipe the file of the server already there."""
    with serving(cwd=tmp_path) as (url, _):
        httpx.post(f"{url}/_emulator/accounts/acct_demo/topup", json={"amount_micros": 1_000_000})
        port = url.rsplit(":", 1)[1]
        done = subprocess.run(
            [sys.executable, "-m", "emulator", "serve", "--port", port, "--reset"],
            cwd=tmp_path, capture_output=True, text=True, timeout=20,
        )  # fmt: skip
        assert done.returncode == 1
        assert f"Error: cannot listen on 127.0.0.1:{port}" in done.stderr
        assert "Traceback" not in done.stderr
        account = httpx.get(f"{url}/_emulator/accounts/acct_demo").json()
        assert account["balance_micros"] == 26_000_000


def test_memory_state_and_environment_variables(tmp_path: Path) -> None:
    env = {"EMULATOR_DB": ":memory:", "EMULATOR_CLOCK": "manual", "EMULATOR_SEED": "7"}
    with serving(cwd=tmp_path, env=env) as (url, _):
        health = httpx.get(f"{url}/_emulator/health").json()
        assert health["db"] == ":memory:" and health["seed"] == 7
        assert health["clock"]["now"] == "2026-01-01T00:00:00.000Z"
    assert not (tmp_path / ".emulator").exists()


def test_admin_token_from_the_environment(tmp_path: Path) -> None:
    env = {"EMULATOR_DB": ":memory:", "EMULATOR_ADMIN_TOKEN": "t0k"}
    with serving(cwd=tmp_path, env=env) as (url, _):
        assert httpx.get(f"{url}/_emulator/clock").status_code == 401
        clock = httpx.get(f"{url}/_emulator/clock", headers={"Authorization": "Bearer t0k"})
        assert clock.status_code == 200


def test_a_killed_server_loses_no_charge_and_leaves_no_active_hold(tmp_path: Path) -> None:
    import signal
    from concurrent.futures import ThreadPoolExecutor

    body = {
        "model": "emulator/slow",
        "messages": [{"role": "user", "content": "[emulator:tokens=40]"}],
        "stream": True,
    }
    with serving("--stream-delay-ms", "0", cwd=tmp_path) as (url, killed):
        api = f"{url}/api/v1"
        headers = {"Authorization": "Bearer sk-emu-demo-gateway"}
        quick = {"model": "emulator/echo", "messages": [{"role": "user", "content": "hi"}]}
        for _ in range(5):  # settled before the kill
            assert (
                httpx.post(f"{api}/chat/completions", json=quick, headers=headers).status_code
                == 200
            )

        def start_stream(index: int) -> None:
            keyed = {**headers, "Idempotency-Key": f"killed-{index}"}
            try:
                with httpx.stream(
                    "POST", f"{api}/chat/completions", json=body, headers=keyed, timeout=5
                ) as r:
                    for _line in r.iter_lines():
                        pass
            except httpx.HTTPError:
                pass

        pool = ThreadPoolExecutor(3)
        futures = [pool.submit(start_stream, i) for i in range(3)]
        time.sleep(1.0)  # the slow streams are mid-way: their holds are active
        os.kill(int(killed["pid"]), signal.SIGKILL)
        for future in futures:
            future.result()
        pool.shutdown()
    with serving(cwd=tmp_path) as (url, _):
        api = f"{url}/api/v1"
        headers = {"Authorization": "Bearer sk-emu-demo-gateway"}
        holds = httpx.get(f"{api}/ai-gateway/reservations", headers=headers).json()["data"]
        events = httpx.get(
            f"{api}/ai-gateway/usage", headers=headers, params={"limit": 200}
        ).json()["data"]
        balance = httpx.get(f"{api}/ai-gateway/balance", headers=headers).json()
        # The keys of the killed requests are free again (not 409 for a day).
        retry = {**headers, "Idempotency-Key": "killed-0"}
        with httpx.stream(
            "POST", f"{api}/chat/completions", json=body, headers=retry, timeout=5
        ) as again:
            assert again.status_code == 200
    assert not [h for h in holds if h["status"] == "active"]
    released = [h for h in holds if h["reason"] and "released at start" in h["reason"]]
    assert len(released) == 3
    settled = [e for e in events if e["status"] == "succeeded"]
    assert len(settled) == 5
    assert balance["balance_micros"] == 25_000_000 - sum(e["charge_micros"] for e in settled)
    assert balance["pending_micros"] == 0


def test_emulator_reset_beside_a_live_server(tmp_path: Path) -> None:
    """`emulator reset` on the file a server runs on is a reset of that server: a stream
    in flight charges nothing into the new state, ids start again as after `POST
    /_emulator/reset` (numbers the server had kept would collide), the clock, fault
    rules and journal are those of a fresh start."""
    from concurrent.futures import ThreadPoolExecutor

    headers = {"Authorization": "Bearer sk-emu-demo-gateway"}
    quick = {"model": "emulator/echo", "messages": [{"role": "user", "content": "hi"}]}
    slow = {
        "model": "emulator/slow",
        "messages": [{"role": "user", "content": "[emulator:tokens=40]"}],
        "stream": True,
    }
    with serving("--clock", "manual", cwd=tmp_path) as (url, _):
        api, control = f"{url}/api/v1", f"{url}/_emulator"

        def chat() -> httpx.Response:
            return httpx.post(f"{api}/chat/completions", json=quick, headers=headers)

        def stream() -> list[str]:
            with httpx.stream(
                "POST", f"{api}/chat/completions", json=slow, headers=headers, timeout=10
            ) as r:
                assert r.status_code == 200
                return [line for line in r.iter_lines() if line]

        assert httpx.post(f"{control}/reset").status_code == 200
        fresh = chat().json()["id"]
        for _ in range(5):
            assert chat().status_code == 200
        httpx.post(f"{control}/clock", json={"advance_seconds": 86_400})
        httpx.post(f"{control}/faults", json={"match": {"path": "/api/nowhere"}, "status": 503})
        pool = ThreadPoolExecutor(1)
        in_flight = pool.submit(stream)
        time.sleep(0.3)  # the slow stream is mid-way: its hold is active
        done = subprocess.run(
            [sys.executable, "-m", "emulator", "reset"], cwd=tmp_path, capture_output=True
        )
        assert done.returncode == 0, done.stderr
        assert in_flight.result()[-1] == "data: [DONE]"
        pool.shutdown()

        assert chat().json()["id"] == fresh  # as after POST /_emulator/reset
        for _ in range(70):  # past the block of numbers the server had taken before
            assert chat().status_code == 200
        balance = httpx.get(f"{api}/ai-gateway/balance", headers=headers).json()
        events = httpx.get(
            f"{api}/ai-gateway/usage", headers=headers, params={"limit": 200}
        ).json()["data"]
        holds = httpx.get(
            f"{api}/ai-gateway/reservations", headers=headers, params={"limit": 200}
        ).json()["data"]
        ledger = httpx.get(f"{control}/accounts/acct_demo/ledger", params={"limit": 200})
        clock = httpx.get(f"{control}/clock").json()
        faults = httpx.get(f"{control}/faults").json()["data"]
        journal = httpx.get(f"{control}/requests", params={"limit": 500}).json()["data"]
    assert len(events) == 71 and {e["status"] for e in events} == {"succeeded"}
    assert len(holds) == 71 and {h["status"] for h in holds} == {"settled"}
    charges = [e for e in ledger.json()["data"] if e["kind"] == "charge"]
    assert len(charges) == 71
    assert balance["balance_micros"] == 25_000_000 - sum(e["charge_micros"] for e in events)
    assert balance["pending_micros"] == 0
    assert clock["now"] == "2026-01-01T00:00:00.000Z"
    assert faults == []
    assert not [r for r in journal if r["path"] == "/_emulator/faults" and r["method"] == "POST"]


def test_a_stop_ends_open_streams_and_writes_the_snapshot_with_the_clock(tmp_path: Path) -> None:
    """Ctrl-C while a slow stream runs: the stream ends with an error event (billed for
    what was sent), the process exits 0 within seconds, and the snapshot it writes holds
    the clock as it stopped, not as it started."""
    snap = tmp_path / "out.snap"
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "emulator", "serve", "--port", str(port), "--db", ":memory:",
         "--snapshot-on-exit", str(snap)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            started = httpx.get(f"{url}/_emulator/health", timeout=0.5).json()["clock"]["now"]
            break
        except httpx.TransportError:
            time.sleep(0.05)
    body = {"model": "emulator/slow", "stream": True,
            "messages": [{"role": "user", "content": "go [emulator:tokens=400]"}]}  # fmt: skip
    lines: list[str] = []

    def read() -> None:
        headers = {"Authorization": "Bearer sk-emu-demo-all"}
        with httpx.stream("POST", f"{url}/api/v1/chat/completions", json=body,
                          headers=headers, timeout=30) as response:  # fmt: skip
            lines.extend(response.iter_lines())

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(1.2)
    stopped_at = time.monotonic()
    process.send_signal(signal.SIGINT)
    output = process.communicate(timeout=20)[0]
    reader.join(timeout=10)
    assert process.returncode == 0, output
    assert time.monotonic() - stopped_at < 5 and "Traceback" not in output
    assert "The emulator is stopping" in "\n".join(lines)
    with sqlite3.connect(snap) as conn:
        (saved,) = conn.execute("SELECT value FROM meta WHERE key = 'clock'").fetchone()
    assert json.loads(saved)["now"] > parse_iso(started) + 1  # the stream ran 1.2 s
