"""Benchmarks of the test-double toolkit issue. Run: python bench/toolkit.py [seconds]

Prints ours, the reference measured in the same run, and their ratio:
- billed POST /chat/completions requests per second with 20 fault rules
  loaded (none of them firing for this load, as in a suite where rules target
  other tenants) against the same server with none; target: at most 10 % fewer;
- an isolated tenant per test (POST /_emulator/accounts) against a
  GET /_emulator/health round trip; target under 5 ms;
- restoring a snapshot of a state with 10,000 usage events against the same
  health round trip; target under 200 ms.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from common import HERE, emulator_cmd, report, server, wrk
from gateway import BODY, bench_tenant_key, write_wrk_script


def add_rules(url: str, count: int) -> None:
    for n in range(count):
        rule = {"match": {"account_id": f"acct_other_{n}"}, "action": {"status": 503}}
        if n % 2:
            rule = {"match": {"path": f"/api/v1/other/{n}/*"}, "action": {"fail_route": True}}
        httpx.post(f"{url}/_emulator/faults", json=rule).raise_for_status()


def bench_faults_overhead(seconds: int, rounds: int = 5) -> None:
    script = HERE / "results" / "toolkit_chat.lua"
    script.parent.mkdir(exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as tmp,
        server(emulator_cmd("--db", ":memory:"), "/_emulator/health", Path(tmp)) as url,
    ):
        write_wrk_script(script, BODY, bench_tenant_key(url))
        target, lua = url + "/api/v1/chat/completions", str(script.relative_to(HERE))
        wrk(target, 1, script=lua)
        without, with_rules = [], []
        for _ in range(rounds):  # interleaved: the machine's noise hits both alike
            httpx.delete(f"{url}/_emulator/faults")
            without.append(wrk(target, seconds, script=lua))
            add_rules(url, 20)
            with_rules.append(wrk(target, seconds, script=lua))
    report(
        "chat with 20 fault rules vs none",
        statistics.median(with_rules),
        statistics.median(without),
        "req/s",
        ">= 0.90",
    )


def timed(client: httpx.Client, method: str, path: str, runs: int, **kw: object) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        client.request(method, path, **kw).raise_for_status()  # type: ignore[arg-type]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench_tenant_and_restore(events: int = 10_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "state.db"
        fill_usage(db, events)
        args = emulator_cmd("--db", str(db))
        with server(args, "/_emulator/health", Path(tmp)) as url, httpx.Client(base_url=url) as c:
            ping = timed(c, "GET", "/_emulator/health", 200)
            tenant = timed(c, "POST", "/_emulator/accounts", 200, json={})
            c.post("/_emulator/snapshots", json={"name": "big"}).raise_for_status()
            restore = timed(c, "POST", "/_emulator/snapshots/big/restore", 20)
    report("isolated tenant (POST /_emulator/accounts)", tenant, ping, "ms", "< 5 ms; ref: health")
    report(f"restore a snapshot with {events:,} usage events", restore, ping, "ms", "< 200 ms")


def fill_usage(db: Path, count: int) -> None:
    """A state file with `count` usage events of the demo account, written directly."""
    from emulator.runtime import open_runtime
    from emulator.settings import Settings
    from emulator.store.usage import UsageEvent, insert_usage_event

    rt = open_runtime(Settings(db=str(db)))
    with rt.store.write() as conn:
        for n in range(count):
            insert_usage_event(
                conn,
                UsageEvent(
                    id=f"gen_bench_{n}", account_id="acct_demo", key_id=None,
                    created_at=rt.clock.now_iso(), endpoint="chat.completions",
                    model="openai/gpt-4o", provider="openai", status="succeeded",
                    prompt_tokens=12, completion_tokens=40, total_tokens=52,
                    provider_cost_micros=30, platform_fee_micros=2, charge_micros=32,
                    margin_micros=2, route_attempts=[], metadata={"stream": False},
                ),
            )  # fmt: skip
    rt.store.close()


if __name__ == "__main__":
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    bench_tenant_and_restore()
    bench_faults_overhead(seconds)
