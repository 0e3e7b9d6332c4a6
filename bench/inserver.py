"""Where a request's time goes under load. Run: python bench/inserver.py [seconds]

Not a target of any issue: it explains the gap between `bench/inprocess.py`
and the `wrk` figures. Both the billed chat request and the reference
("hello") are served under `wrk` (16 connections, server and load on their
own cores) through `timed_app.py`, which times each request inside the ASGI
app and inside its `send` calls. For each it prints the cost of a request
under load (from `wrk`'s rate), the part of it spent inside the app, the
part of that spent in uvicorn's `send`, and what is left outside the app
(uvicorn's parsing and bookkeeping, the event loop, the kernel).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import httpx
from common import HERE, server, wrk
from floor import BATCHED, UVICORN
from gateway import BODY, bench_tenant_key, write_wrk_script

# The reference runs under plain uvicorn, as the issues define it; the emulator
# as `emulator serve` serves it (BATCHED: its batched writes).


def timed_cmd(http: str) -> list[str]:
    return [*UVICORN, "--http", http, "--no-access-log", "--app-dir", str(HERE), "timed_app:app"]


def measure(name: str, url: str, path: str, seconds: int, script: str | None) -> None:
    wrk(url + path, 1, script=script)
    httpx.get(url + "/__timing")  # the warm-up's requests are not counted
    rate = wrk(url + path, seconds, script=script)
    timing = httpx.get(url + "/__timing").json()
    total, app_us, send_us = 1e6 / rate, timing["app_us"], timing["send_us"]
    print(
        f"{name:<32} {rate:>9,.0f} req/s  {total:6.1f} us a request: in the app "
        f"{app_us:6.1f} (uvicorn's send {send_us:5.1f}), outside it {total - app_us:6.1f}"
    )


def main(seconds: int) -> None:
    os.environ["TIMED_APP"] = "hello"
    with server(timed_cmd("httptools"), "/hello") as url:
        measure("reference (hello)", url, "/hello", seconds, None)
    os.environ["TIMED_APP"] = "emulator"
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as tmp,
        server(timed_cmd(BATCHED), "/__timing", Path(tmp)) as url,
    ):
        script = results / "chat.lua"
        write_wrk_script(script, BODY, bench_tenant_key(url))
        relative = str(script.relative_to(HERE))
        measure("billed POST /chat/completions", url, "/api/v1/chat/completions", seconds, relative)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
