"""`emulator serve` as a user runs it: a real process on a real port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


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
    result: dict[str, str] = {}
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
