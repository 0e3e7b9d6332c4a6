"""Shared helpers of the benchmark scripts: start servers, run wrk, print figures."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVER_CPU = "0"  # the server gets one core, the load generator the other
LOAD_CPU = "1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pinned(cmd: list[str], cpu: str) -> list[str]:
    return ["taskset", "-c", cpu, *cmd] if shutil.which("taskset") and os.cpu_count() != 1 else cmd


def wait_until_up(url: str, timeout: float = 20.0) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            if httpx.get(url, timeout=0.5).status_code < 500:
                return time.perf_counter() - start
        except httpx.TransportError:
            time.sleep(0.005)
    raise RuntimeError(f"{url} did not answer")


@contextmanager
def server(cmd: list[str], probe_path: str, cwd: Path | None = None) -> Iterator[str]:
    port = free_port()
    full = pinned([*cmd, "--port", str(port)], SERVER_CPU)
    process = subprocess.Popen(full, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + probe_path)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def emulator_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "emulator", "serve", "--log-level", "warning", *args]


def hello_cmd() -> list[str]:
    return [
        sys.executable, "-m", "uvicorn", "hello_app:app", "--app-dir", str(HERE),
        "--loop", "uvloop", "--http", "httptools", "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip


def wrk(url: str, seconds: int = 5, connections: int = 16, script: str | None = None) -> float:
    """Requests per second of `wrk` against url (one thread, on the other core)."""
    return wrk_stats(url, seconds, connections, script)[0]


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def wrk_stats(
    url: str, seconds: int = 5, connections: int = 16, script: str | None = None
) -> tuple[float, float]:
    """(requests per second, p99 latency in ms) of `wrk` against url."""
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if script:
        cmd += ["-s", str(HERE / script)]
    out = subprocess.run(pinned([*cmd, url], LOAD_CPU), capture_output=True, text=True).stdout
    if "Non-2xx" in out:
        raise RuntimeError(f"non-2xx answers from {url}:\n{out}")
    match = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    if match is None or p99 is None:
        raise RuntimeError(out)
    return float(match.group(1)), float(p99.group(1)) * _UNITS_MS[p99.group(2)]


def report(name: str, ours: float, reference: float, unit: str, target: str) -> None:
    ratio = ours / reference if reference else float("nan")
    print(
        f"{name:<46} ours {ours:>9.3f} {unit:<5}  reference {reference:>9.3f} {unit:<5}  "
        f"ratio {ratio:5.2f}  target: {target}"
    )
