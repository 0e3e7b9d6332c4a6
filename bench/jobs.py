"""Benchmarks of the jobs issue. Run: python bench/jobs.py [seconds]

Prints ours, the reference measured in the same run, and their ratio:
- polling GET /api/v1/generation/{id} requests per second against a bare
  litestar "hello" route (both on one core, wrk on the other); target at
  least 60 %;
- the same poll with 10,000 jobs in the store against the poll with one;
  target: at most 10 % slower (ratio >= 0.90).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

import httpx
from common import HERE, emulator_cmd, hello_cmd, report, server, wrk

BODY = {"model": "emulator/video", "task_type": "text2video", "prompt": "a poll", "duration": "5s"}


def write_get_script(path: Path, key: str) -> None:
    path.write_text(f'wrk.headers["Authorization"] = "Bearer {key}"\n')


def poll_rps(url: str, key: str, job_id: str, seconds: int) -> float:
    script = HERE / "results" / "poll.lua"
    script.parent.mkdir(exist_ok=True)
    write_get_script(script, key)
    target = f"{url}/api/v1/generation/{job_id}"
    wrk(target, 1, script=str(script.relative_to(HERE)))
    return wrk(target, seconds, script=str(script.relative_to(HERE)))


def make_jobs(url: str, count: int) -> tuple[str, str]:
    """A tenant with `count` generations; (its key, the id of the first)."""
    tenant = httpx.post(
        f"{url}/_emulator/accounts", json={"balance_micros": 10**12, "rate_limit_rpm": 10_000_000}
    ).json()
    headers = {"Authorization": f"Bearer {tenant['api_key']}"}
    first = ""
    with httpx.Client(base_url=f"{url}/api/v1", headers=headers) as client:
        for n in range(count):
            made = client.post("/generate/video", json=BODY).json()
            first = first or made["id"]
            if n == 0:
                client.get(f"/generation/{first}").raise_for_status()
    return tenant["api_key"], first


def bench_poll(seconds: int, many: int = 10_000) -> None:
    with server(hello_cmd(), "/hello") as hello_url:
        wrk(hello_url + "/hello", 1)
        hello = wrk(hello_url + "/hello", seconds)
    args = emulator_cmd("--db", ":memory:", "--clock", "manual")
    with tempfile.TemporaryDirectory() as tmp, server(args, "/_emulator/health", Path(tmp)) as url:
        key, job = make_jobs(url, 1)
        few = [poll_rps(url, key, job, seconds)]
        make_jobs(url, many)  # another tenant's 10,000: the table grows
        big_key, big_job = make_jobs(url, 1)
        crowded = [poll_rps(url, big_key, big_job, seconds)]
        few.append(poll_rps(url, key, job, seconds))
    report("poll GET /generation/{id} vs hello", statistics.median(few), hello, "req/s", ">= 0.60")
    report(
        f"poll with {many:,} jobs in the store vs few",
        statistics.median(crowded),
        statistics.median(few),
        "req/s",
        ">= 0.90",
    )


if __name__ == "__main__":
    bench_poll(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
