"""How far the billed chat route is from its floor. Run: python bench/floor.py [seconds]

Three servers in one run, each on one core with wrk on the other: the
reference (a bare litestar "hello" route), the floor (`floor_app.py`: the
storage and HTTP a billed chat request needs, through the emulator's own
store functions, with no layers around them), and the emulator's real
`POST /chat/completions`. Prints the floor and the route against the
reference. Not a target of any issue: it tells whether a throughput target
is out of reach of the storage itself (the floor below it) or of the layers
around it (the floor above it, the route below).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from common import HERE, emulator_cmd, hello_cmd, report, server, wrk
from gateway import BODY, bench_tenant_key, write_wrk_script

UVICORN = [sys.executable, "-m", "uvicorn", "--loop", "uvloop", "--log-level", "warning"]
BATCHED = "emulator.batched_writes:BatchedHttpToolsProtocol"  # what `emulator serve` runs


def floor_cmd() -> list[str]:
    """Served as `emulator serve` serves (its batched writes), in this directory."""
    http = ["--http", BATCHED, "--no-access-log"]
    return [*UVICORN, *http, "--app-dir", str(HERE), "floor_app:app"]


def measure(seconds: int) -> None:
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    with server(hello_cmd(), "/hello") as url:
        wrk(url + "/hello", 1)
        hello = wrk(url + "/hello", seconds)
    floor_script = results / "floor.lua"
    write_wrk_script(floor_script, BODY, "sk-emu-demo-all")
    with server(floor_cmd(), "/") as url:
        wrk(url + "/", 1, script=str(floor_script.relative_to(HERE)))
        floor = wrk(url + "/", seconds, script=str(floor_script.relative_to(HERE)))
    args = emulator_cmd("--db", ":memory:")
    with tempfile.TemporaryDirectory() as tmp, server(args, "/_emulator/health", Path(tmp)) as url:
        chat_script = results / "chat.lua"
        write_wrk_script(chat_script, BODY, bench_tenant_key(url))
        target = url + "/api/v1/chat/completions"
        wrk(target, 1, script=str(chat_script.relative_to(HERE)))
        chat = wrk(target, seconds, script=str(chat_script.relative_to(HERE)))
    report("floor of a billed chat request vs hello", floor, hello, "req/s", "(none: a bound)")
    report("billed POST /chat/completions vs hello", chat, hello, "req/s", ">= 0.40 (0.35 billed)")
    report("billed POST /chat/completions vs its floor", chat, floor, "req/s", "(layers)")


if __name__ == "__main__":
    measure(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
