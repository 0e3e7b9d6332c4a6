"""An ASGI app timed from inside the server: for `bench/inserver.py`, not a product route.

`TIMED_APP=hello` wraps the reference route (`hello_app.py`), anything else
the emulator as `emulator serve` builds it (in-memory database). Every HTTP
request is timed from the app's first line to its last, and so are its
`send` calls (uvicorn's writing of the response). `GET /__timing` answers the
means since the previous `GET /__timing` (which resets them) and is not timed.
"""

from __future__ import annotations

import os
import time
from typing import Any

import msgspec

if os.environ.get("TIMED_APP") == "hello":
    from hello_app import app as inner
else:
    from emulator.app import create_app
    from emulator.settings import Settings

    inner = create_app(Settings(db=":memory:"))

_totals = {"requests": 0, "app_s": 0.0, "send_s": 0.0}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        await inner(scope, receive, send)
        return
    if scope["path"] == "/__timing":
        await _report(send)
        return
    clock = time.perf_counter

    async def timed_send(message: dict[str, Any]) -> None:
        started = clock()
        await send(message)
        _totals["send_s"] += clock() - started

    started = clock()
    await inner(scope, receive, timed_send)
    _totals["app_s"] += clock() - started
    _totals["requests"] += 1


async def _report(send: Any) -> None:
    count = max(int(_totals["requests"]), 1)
    body = msgspec.json.encode(
        {
            "requests": _totals["requests"],
            "app_us": _totals["app_s"] / count * 1e6,
            "send_us": _totals["send_s"] / count * 1e6,
        }
    )
    _totals.update(requests=0, app_s=0.0, send_s=0.0)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
