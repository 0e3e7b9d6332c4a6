"""What the chat request would cost without its layers: an upper bound, not a mode.
Run: python bench/layers.py [requests]

Measures the billed chat request of `bench/inprocess.py` (in the process, on
uvloop, against the bare litestar route called the same way), then again with
its layers taken out one after another, cumulatively: each is replaced by
what it returns for this request (the first answer kept), so the storage,
the settlement and the answer's bytes stay. The last line is the floor of
`bench/floor_app.py` (the same storage and the least Python) called the same
way. The product never runs so: this script patches the modules it imports,
to show how far the throughput targets are from what the layers leave
(docs/performance.md).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import statistics
import sys
from collections.abc import Callable
from typing import Any

import msgspec
from hello_app import app as hello_app
from inprocess import CHAT, Call, caller, emulator_calls, per_request_us

from emulator import direct
from emulator.billing import limits
from emulator.gateway import chat_routes, service

ROUNDS = 5


class _Decoded:
    """A body decoded without validation, dumped as itself."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return self.data


def _first_kept(fn: Callable[..., Any]) -> Callable[..., Any]:
    kept: list[Any] = []

    def first(*args: Any) -> Any:
        if not kept:
            kept.append(fn(*args))
        return kept[0]

    return first


def _no_journal() -> None:
    direct.record_direct = lambda *_: None


def _no_validation() -> None:
    chat_routes.parse_body = lambda raw, _: _Decoded(msgspec.json.decode(raw))


def _no_worst_case_hold() -> None:
    service.worst_hold = _first_kept(service.worst_hold)


def _no_provider_round_trip() -> None:
    service._try = _first_kept(service._try)


def _no_rate_limit() -> None:
    standing = limits.Standing(10**9, 10**9 - 1, 30.0)
    limits.RateLimiter.admit = lambda *_: standing  # type: ignore[method-assign]


def _no_call_building() -> None:
    build = _first_kept(chat_routes.build_call)

    def rebuilt(body: dict[str, Any], metadata: dict[str, Any]) -> service.Call:
        first = build(body, metadata)  # a fresh call: it collects this request's attempts
        return service.Call(
            first.endpoint, first.model, first.fallbacks, first.prefs, first.request,
            first.stream, metadata,
        )  # fmt: skip

    chat_routes.build_call = rebuilt


LAYERS: list[tuple[str, Callable[[], None]]] = [
    ("the journal entry", _no_journal),
    ("body validation (pydantic)", _no_validation),
    ("the worst-case hold's pricing", _no_worst_case_hold),
    ("the provider round trip", _no_provider_round_trip),
    ("rate limits", _no_rate_limit),
    ("building the call", _no_call_building),
]


async def median_us(call: Call, count: int) -> float:
    return statistics.median([await per_request_us(call, count) for _ in range(ROUNDS)])


async def chat_us(count: int) -> float:
    return await median_us((await emulator_calls())["billed POST /chat/completions"], count)


async def main(count: int) -> None:
    logging.getLogger("httpx").setLevel(logging.WARNING)
    hello = await median_us(caller(hello_app, "GET", "/hello", {}), count)
    rows = [("billed POST /chat/completions", await chat_us(count))]
    for name, take_out in LAYERS:
        take_out()
        rows.append((f"  without {name}", await chat_us(count)))
    import floor_app  # opens its own runtime: imported once the others are measured

    floor = caller(
        floor_app.app, "POST", "/", {"Authorization": f"Bearer {floor_app.BENCH_KEY}"}, CHAT
    )
    rows.append(("floor (bench/floor_app.py)", await median_us(floor, count)))
    for name, ours in rows:
        print(
            f"{name:<40} ours {ours:7.1f} us  reference (hello) {hello:5.1f} us  "
            f"ratio {hello / ours:5.2f}"
        )


if __name__ == "__main__":
    if importlib.util.find_spec("uvloop"):
        import uvloop

        uvloop.install()
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 4000))
