"""Fails the test that leaves an HTTP client unclosed (loaded by tests/conftest.py).

An unclosed client leaves its pooled sockets to the garbage collector, whose
ResourceWarning comes whenever a collection happens to run: under warnings-as-errors,
in a later, unrelated test. So after each test a full collection runs here, and the
test fails if

- an `httpx` client (or an `httpx2` one: the `openai` and `anthropic` SDKs' own) was
  collected with connections still open, or
- anything else collected warned of a resource left open (an event loop's transports).

The first check is what makes the failure certain. An SDK's client closes itself when
collected, but in the same collection as its sockets, in no set order: only sometimes
does a socket warn first. A weak reference's callback runs before either.

What outlives the collection is then frozen (`gc.freeze`), so the next test's
collection walks only what that test made: about a millisecond a test. Every
THAW_EVERY tests all is unfrozen and walked once, so what died after it was frozen
(a module's fixtures) is freed. EMULATOR_TEST_LEAKS=0 leaves the check out.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import os
import sys
import warnings
import weakref
from collections.abc import Generator
from typing import Any

import pytest

ON = os.environ.get("EMULATOR_TEST_LEAKS", "1") != "0"
THAW_EVERY = 200  # tests: a worker's peak memory grew by 120 MB unthawed, by 60 so
TESTS = os.path.dirname(os.path.abspath(__file__)) + os.sep

_collected_open: list[str] = []  # the clients collected with connections open
_watching: set[weakref.ref[Any]] = set()  # a weak reference's callback runs while it lives
_checked = 0


def _made_at() -> str:
    """Where the tests made the client (else the first caller of the client's `__init__`)."""
    frame = sys._getframe(3)  # _made_at, _watch, the wrapped __init__, its caller
    first = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    at: Any = frame
    while at is not None:
        name = at.f_code.co_filename
        if name.startswith(TESTS) and name != __file__:
            return f"{os.path.relpath(name)}:{at.f_lineno}"
        at = at.f_back
    return first


def _watch(client: Any) -> None:
    # The callback holds the client's transports, not the client: it runs as the client
    # is collected, before any finalizer, and closes a sync pool itself.
    transports = [client._transport, *(t for t in client._mounts.values() if t)]
    what = f"{type(client).__module__}.{type(client).__qualname__} made at {_made_at()}"

    def collected(ref: weakref.ref[Any]) -> None:
        _watching.discard(ref)
        if any(getattr(getattr(t, "_pool", None), "connections", None) for t in transports):
            _collected_open.append(f"{what}, collected with connections open")
            for transport in transports:
                with contextlib.suppress(Exception):  # an async pool's close needs its loop
                    transport.close()

    _watching.add(weakref.ref(client, collected))


def _watch_clients() -> None:
    for name in ("httpx", "httpx2"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for cls in (module.Client, module.AsyncClient):
            init = cls.__init__
            if getattr(init, "_watched", False):
                continue

            @functools.wraps(init)
            def watched(self: Any, *args: Any, _init: Any = init, **kwargs: Any) -> None:
                _init(self, *args, **kwargs)
                with contextlib.suppress(AttributeError):  # another version's insides
                    _watch(self)

            watched._watched = True  # type: ignore[attr-defined]
            cls.__init__ = watched  # type: ignore[method-assign]


if ON:
    _watch_clients()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    global _checked
    yield
    if not ON:
        return
    _checked += 1
    if _checked % THAW_EVERY == 0:
        gc.unfreeze()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        gc.collect()
        gc.collect()  # what the callbacks let go of: an async pool they could not close
    gc.freeze()
    leaked = _collected_open[:]
    _collected_open.clear()
    leaked += [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    if leaked:
        pytest.fail(
            "left unclosed (close each client: `with`, or a fixture that closes it):\n  "
            + "\n  ".join(leaked),
            pytrace=False,
        )
