"""Per-request cost inside the process, without HTTP or a load generator.
Run: python bench/inprocess.py [requests]

Calls the ASGI app directly, one request after another, each in its own task
on uvloop as `emulator serve` runs them, and prints the time a request takes
against the bare litestar "hello" route called the same way in the same run.
Far less noisy than wrk on a shared machine, so it is the figure
to watch while working on a hot path (the wrk benchmarks stay the targets'
judges). It understates a route's cost under wrk, where the same code runs
about 1.15x slower between the server's own work and the kernel's
(`bench/inserver.py` measures it; docs/performance.md).

The second line is the same chat request to a model that writes its text (the
echo of the first draws nothing from its generator). The last line is the cost
of a chat request once 50,000 are stored, against
the first ones on a fresh database: it must stay flat (an in-memory database
in a shared page cache made every commit slower as the database grew).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from hello_app import app as hello_app

from emulator.app import create_app
from emulator.settings import Settings

CHAT = b'{"model": "emulator/echo", "messages": [{"role": "user", "content": "hello there"}]}'
# The same request to a model that writes its answer (the echo draws nothing from
# its generator): what generating text adds to the route. Not "hello there": small talk
# is answered with a short reply of its own, not the sentences measured here.
WRITTEN = CHAT.replace(b"emulator/echo", b"meta-llama/llama-3.3-70b-instruct").replace(
    b"hello there", b"how do lanterns work"
)
VIDEO = {"model": "emulator/video", "task_type": "text2video", "prompt": "a poll"}
Call = Callable[[], Awaitable[int]]


def caller(app: Any, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> Call:
    """One request to `app` as uvicorn would make it; returns the status."""
    raw = [(b"host", b"bench"), *((k.lower().encode(), v.encode()) for k, v in headers.items())]
    base = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "scheme": "http",
        "server": ("127.0.0.1", 8787), "client": ("127.0.0.1", 50000), "root_path": "",
        "query_string": b"", "method": method, "path": path, "raw_path": path.encode(),
        "headers": raw,
    }  # fmt: skip

    async def call() -> int:
        status = 0

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await app(dict(base, state={}), receive, send)
        return status

    return call


async def per_request_us(call: Call, count: int) -> float:
    loop = asyncio.get_running_loop()
    for _ in range(200):  # warm up: caches, lazily built validators
        assert await call() == 200
    start = time.perf_counter()
    for _ in range(count):
        await loop.create_task(call())  # its own task, as a server runs each request
    return (time.perf_counter() - start) / count * 1e6


async def emulator_calls() -> dict[str, Call]:
    app = create_app(Settings(db=":memory:"))
    transport = httpx.ASGITransport(app=app)
    # a loopback address: the control plane answers a loopback server only there
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        tenant = await c.post(
            "/_emulator/accounts", json={"rate_limit_rpm": 10**7, "balance_micros": 10**12}
        )
        auth = {"Authorization": f"Bearer {tenant.json()['api_key']}"}
        job = (await c.post("/api/v1/generate/video", headers=auth, json=VIDEO)).json()["id"]
    post = auth | {"Content-Type": "application/json"}
    chat = caller(app, "POST", "/api/v1/chat/completions", post, CHAT)
    written = caller(app, "POST", "/api/v1/chat/completions", post, WRITTEN)
    return {
        "billed POST /chat/completions": chat,
        "the same, generated text": written,
        "GET /generation/{id} (poll)": caller(app, "GET", f"/api/v1/generation/{job}", auth),
        "GET /models": caller(app, "GET", "/api/v1/models", {}),
    }


async def later_cost(call: Call, count: int, stored: int) -> tuple[float, float]:
    """(cost of the first `count` requests, cost of `count` once `stored` are stored)."""
    first = await per_request_us(call, count)
    for _ in range(stored - count):
        await call()
    return first, await per_request_us(call, count)


def show(name: str, ours: float, reference: float, reference_name: str) -> None:
    print(
        f"{name:<34} ours {ours:8.1f} us  reference ({reference_name}) {reference:6.1f} us  "
        f"ratio {reference / ours:5.2f}  (cost per request; higher ratio is better)"
    )


async def main(count: int) -> None:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the set-up requests, unlogged
    hello = await per_request_us(caller(hello_app, "GET", "/hello", {}), count)
    for name, call in (await emulator_calls()).items():
        show(name, await per_request_us(call, count), hello, "hello")
    fresh = (await emulator_calls())["billed POST /chat/completions"]
    first, later = await later_cost(fresh, count, 50_000)
    show("chat with 50,000 stored", later, first, "first")


if __name__ == "__main__":
    if importlib.util.find_spec("uvloop"):  # the loop `emulator serve` runs on
        import uvloop

        uvloop.install()
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
