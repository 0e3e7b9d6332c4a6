"""Instructions per request, counted by valgrind: the deterministic figure.
Run: python bench/instructions.py [chat|written|floor ...]   (needs valgrind)

Timing on a shared 2-core machine moves by 5-10 % from run to run, more than
most single changes to a hot path gain. Valgrind's callgrind counts the
instructions the CPU runs instead, and the count repeats to about 1 %. Each
request is called in process, as `bench/inprocess.py` calls it (uvloop, its
own task); the count of a run of 300 requests is taken from one of 1,300, so
start-up and warm-up cancel out. The reference is the bare litestar route
counted the same way; the ratio is ours against it (lower is costlier).

Instructions are not time (a cache miss costs more than an add), but under
`wrk` the two have moved together on this route: every 1,000 instructions
cut took about 0.2 us off a request (docs/performance.md).
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from inprocess import CHAT, Call, caller

HERE = Path(__file__).resolve().parent
SHORT, LONG = 300, 1300
ROUTES = ("hello", "chat", "written", "floor")


async def _call_for(which: str) -> Call:
    if which == "hello":
        from hello_app import app

        return caller(app, "GET", "/hello", {})
    if which == "floor":
        import floor_app

        auth = {"Authorization": f"Bearer {floor_app.BENCH_KEY}"}
        return caller(floor_app.app, "POST", "/", auth, CHAT)
    from inprocess import emulator_calls

    names = {"chat": "billed POST /chat/completions", "written": "the same, generated text"}
    return (await emulator_calls())[names[which]]


async def _run(which: str, count: int) -> None:
    logging.getLogger("httpx").setLevel(logging.WARNING)
    call = await _call_for(which)
    # As `emulator serve` once started: what start-up made is never scanned again. Else
    # a full collection that lands in one of the two runs and not the other moves the
    # count by about 40k a request (seen: the same calls counted 1,194k and 1,234k).
    gc.collect()
    gc.freeze()
    loop = asyncio.get_running_loop()
    for _ in range(count):
        assert await loop.create_task(call()) == 200


def _count(which: str, requests: int) -> int:
    """The instructions of one whole run of `requests` requests."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        subprocess.run(
            [
                "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                sys.executable, str(Path(__file__).resolve()), "--run", which, str(requests),
            ],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=HERE,
            env=dict(os.environ, PYTHONHASHSEED="0"),
        )  # fmt: skip
        found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
        if not found:
            raise RuntimeError("callgrind wrote no total")
        return int(found.group(1))


def per_request(which: str) -> float:
    return (_count(which, LONG) - _count(which, SHORT)) / (LONG - SHORT)


def main(routes: list[str]) -> None:
    if not shutil.which("valgrind"):
        sys.exit("valgrind is needed: apt-get install valgrind")
    unknown = set(routes) - set(ROUTES)
    if unknown:
        sys.exit(f"unknown route(s) {sorted(unknown)}; choose from {ROUTES[1:]}")
    hello = per_request("hello")
    for which in routes:
        ours = per_request(which)
        print(
            f"{which:<8} ours {ours / 1000:8.1f}k instructions  reference (hello) "
            f"{hello / 1000:6.1f}k  ratio {hello / ours:5.2f}  (per request; higher is better)"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--run":
        if importlib.util.find_spec("uvloop"):
            import uvloop

            uvloop.install()
        asyncio.run(_run(sys.argv[2], int(sys.argv[3])))
    else:
        main(sys.argv[1:] or ["chat"])
