"""Benchmarks of the foundation issue. Run: python bench/foundation.py

Prints, for each figure, ours, the reference measured in the same run on the
same machine, and their ratio:
- cold start of `emulator serve` to the first 200 on /_emulator/health
  (first start, which seeds a new state file; and a second start), against a
  bare litestar app on uvicorn; target under 1.0 s;
- GET /api/v1/models requests per second against a bare litestar "hello"
  route (both on one core, wrk on the other); target at least 70 %;
- POST /_emulator/reset and POST /_emulator/accounts latency, measured by a
  keep-alive client; target under 20 ms each.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from common import (  # bench/ is a folder of scripts: its own folder is on sys.path
    ROOT,
    SERVER_CPU,
    emulator_cmd,
    free_port,
    hello_cmd,
    pinned,
    report,
    server,
    wait_until_up,
    wrk,
)


def cold_start(cmd: list[str], probe: str, cwd: Path) -> float:
    port = free_port()
    start = time.perf_counter()
    process = subprocess.Popen(
        pinned([*cmd, "--port", str(port)], SERVER_CPU),
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}{probe}")
        return time.perf_counter() - start
    finally:
        process.terminate()
        process.wait(timeout=10)


def bench_cold_start(runs: int = 5) -> None:
    # An installed package has byte-compiled modules; an editable checkout run with
    # PYTHONDONTWRITEBYTECODE (as on this machine) would recompile ours on every start.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "emulator")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        first, second, hello = [], [], []
        for i in range(runs):
            folder = Path(tmp) / str(i)
            folder.mkdir()
            first.append(cold_start(emulator_cmd(), "/_emulator/health", folder))
            second.append(cold_start(emulator_cmd(), "/_emulator/health", folder))
            hello.append(cold_start(hello_cmd(), "/hello", folder))
    ref = statistics.median(hello)
    report(
        "cold start, first start (seeds state.db)", statistics.median(first), ref, "s", "< 1.0 s"
    )
    report("cold start, second start", statistics.median(second), ref, "s", "< 1.0 s")


def bench_models_rps(seconds: int) -> None:
    with server(hello_cmd(), "/hello") as hello_url:
        wrk(hello_url + "/hello", 1)
        hello = wrk(hello_url + "/hello", seconds)
    with (
        tempfile.TemporaryDirectory() as tmp,
        server(emulator_cmd(), "/_emulator/health", Path(tmp)) as url,
    ):
        wrk(url + "/api/v1/models", 1)
        models = wrk(url + "/api/v1/models", seconds)
    report("GET /api/v1/models vs bare hello route", models, hello, "req/s", ">= 0.70")


def latencies_ms(client: httpx.Client, method: str, path: str, runs: int) -> list[float]:
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        response = client.request(method, path)
        timings.append((time.perf_counter() - start) * 1000)
        assert response.status_code < 300, response.text
    return sorted(timings)


def bench_control_latency(runs: int = 200) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        server(emulator_cmd(), "/_emulator/health", Path(tmp)) as url,
        httpx.Client(base_url=url) as client,
    ):
        ping = statistics.median(latencies_ms(client, "GET", "/_emulator/clock", runs))
        for path in ("/_emulator/reset", "/_emulator/accounts"):
            timings = latencies_ms(client, "POST", path, runs)
            p95 = timings[int(len(timings) * 0.95)]
            name = f"POST {path} median (p95 {p95:.1f} ms)"
            report(name, statistics.median(timings), ping, "ms", "< 20 ms; ref: GET /clock")


if __name__ == "__main__":
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    bench_cold_start()
    bench_models_rps(seconds)
    bench_control_latency()
