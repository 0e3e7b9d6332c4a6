"""Where faults act: before the handler (delay, error), on each provider route
(fail_route), in a stream (cut) and on the job a request creates (fail_job).

The request's subject and its `X-Emulator-Fault` items are set once, by the auth
hook, in a context variable: the route and stream points of the same request
(the same task) read them without threading them through every call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from emulator.errors import (
    ClientClosedRequest,
    InjectedFault,
    NoRouteAvailable,
    NotImplementedYet,
)
from emulator.faults.rules import EFFECTS, Action, Match, Subject

if TYPE_CHECKING:
    from litestar.types import Receive

    from emulator.faults.rules import FaultBook, FaultRule


@dataclass
class RequestFaults:
    book: FaultBook
    subject: Subject
    header: tuple[tuple[Match, Action], ...] = ()
    # Per point: the rules whose request-wide part (path, method, key, account) accepts
    # this request, checked once, not again at every provider route.
    _rules: dict[str, list[FaultRule]] = field(default_factory=dict, init=False, repr=False)
    # Rules acting at several points: whether each fired for this request (one hit).
    _decided: dict[str, bool] = field(default_factory=dict, init=False, repr=False)
    # The rule whose cut the request's stream was given (None: the header's, or none).
    cut_rule: FaultRule | None = field(default=None, init=False, repr=False)

    def fire(self, point: str, subject: Subject) -> list[Action]:
        """The header's items first (they win), then the rules, for what is still open."""
        open_effects = set(EFFECTS[point])
        fired = []
        for match, action in self.header:
            effects = open_effects.intersection(action.effects)
            if effects and match.accepts(subject):
                open_effects -= effects
                fired.append(action)
        rules = self._rules.get(point)
        if rules is None:
            accepted = [r for r in self.book.at(point) if r.match.accepts_request(subject)]
            rules = self._rules[point] = accepted
        return fired + self.book.fire(point, subject, open_effects, rules, self._decided)


_current: ContextVar[RequestFaults | None] = ContextVar("emulator_faults", default=None)


def begin(faults: RequestFaults | None) -> None:
    _current.set(faults)


async def before_handler(
    faults: RequestFaults, read_body: Callable[[], Awaitable[bytes]], receive: Receive
) -> None:
    """Latency first (a slow answer), then an error answer, if any fires."""
    actions = faults.fire("request", faults.subject)
    delay = next((a.delay_ms for a in actions if a.delay_ms), 0)
    if delay:
        await read_body()  # all of it: what arrives next can only be the client leaving
        await _wait_unless_left(delay / 1000, receive)
    error = next((a for a in actions if a.status is not None), None)
    if error is not None:
        raise _error(error)


async def _wait_unless_left(seconds: float, receive: Receive) -> None:
    """Sleep `seconds`; ClientClosedRequest if the client leaves meanwhile. An SDK whose
    timeout is shorter than the delay gives up and retries: the request it left must
    not run (hold, charge, claim its Idempotency-Key) after nobody waits for it."""
    message = asyncio.ensure_future(receive())
    try:
        await asyncio.wait({message}, timeout=seconds)
    finally:
        if not message.done():
            message.cancel()  # uvicorn's receive gives nothing away when cancelled
    if message.done() and not message.cancelled() and message.result()["type"] == "http.disconnect":
        raise ClientClosedRequest(
            "The client closed the connection during the delay a fault rule injected; "
            "the request was not run and nothing was charged."
        )


# Codes whose real errors tell SDKs not to retry (`x-should-retry: false`): an injected
# one says so too, or the client under test would back off and retry where it fails fast.
_FINAL_CODES = {NoRouteAvailable.code, NotImplementedYet.code}


def _error(action: Action) -> InjectedFault:
    status = action.status or 503
    headers: dict[str, str] = {}
    if status == 429 or action.retry_after is not None:
        retry = action.retry_after if action.retry_after is not None else 1
        headers |= {"Retry-After": str(retry), "retry-after-ms": str(retry * 1000)}
    if status in (402, 501) or action.code in _FINAL_CODES:
        headers["x-should-retry"] = "false"
    return InjectedFault(
        status,
        action.message or f"Injected fault: this request was answered {status} on purpose.",
        error_type=action.type,
        code=action.code,
        headers=headers,
    )


def route_fails(model: str, provider: str) -> bool:
    """Whether a fault fails this provider route of the current request."""
    faults = _current.get()
    if faults is None:
        return False
    subject = faults.subject.at(model, provider)
    return bool(faults.fire("route", subject))


def stream_cut(model: str, provider: str) -> int | None:
    """After how many chunks the current request's stream is cut, if it is."""
    faults = _current.get()
    if faults is None:
        return None
    subject = faults.subject.at(model, provider)
    actions = faults.fire("stream", subject)
    if not actions:
        return None
    rules = faults._rules.get("stream") or ()
    faults.cut_rule = next((r for r in rules if r.action is actions[0]), None)
    return actions[0].cut_stream_after


def cut_not_made() -> None:
    """The current request's stream ended (or its client left) before its cut: the
    rule did nothing, and its hit is given back."""
    faults = _current.get()
    if faults is not None and faults.cut_rule is not None:
        faults.book.give_back(faults.cut_rule)
        faults.cut_rule = None


def job_fails(model: str | None) -> bool:
    """Whether a fault fails the job the current request creates."""
    faults = _current.get()
    if faults is None:
        return False
    return bool(faults.fire("job", faults.subject.at(model)))
