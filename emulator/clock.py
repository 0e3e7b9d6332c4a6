"""The one clock of the emulator: every timestamp it writes comes from here.

`real` follows the wall clock plus an offset that `advance` grows; `manual`
stands still at a fixed instant until it is advanced or set. Neither ever
moves backwards, nor leaves [EARLIEST, LATEST]. Nothing else in the package
may read the time of day.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Literal

from emulator.errors import ValidationFailed

ClockMode = Literal["real", "manual"]

# The clock may be set or advanced only within these. LATEST leaves centuries of
# headroom below datetime's year 9999, so an instant derived from the clock (an
# expiry, a job's finish, a billing window) still formats as a date.
EARLIEST = 0.0  # 1970-01-01T00:00:00Z
LATEST = 221845392000.0  # 9000-01-01T00:00:00Z


class Clock:
    def __init__(self, mode: ClockMode, start: float) -> None:
        self.mode: ClockMode = mode
        self._start = start
        self._lock = threading.Lock()
        self._manual_now = start
        self._offset = 0.0
        self._booted = time.monotonic()

    def now(self) -> float:
        """Seconds since the epoch, on the virtual clock."""
        if self.mode == "manual":
            return self._manual_now
        return time.time() + self._offset

    def now_iso(self) -> str:
        return iso(self.now())

    def uptime(self) -> float:
        return time.monotonic() - self._booted

    @staticmethod
    def monotonic() -> float:
        """For measuring durations; not a timestamp."""
        return time.monotonic()

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValidationFailed(
                "The clock never moves backwards: advance_seconds must be 0 or more.",
                param="advance_seconds",
                code="clock_backwards",
            )
        return self._move(lambda now: now + seconds, "advance_seconds")

    def set(self, when: float) -> float:
        return self._move(lambda now: when, "now")

    def _move(self, target: Callable[[float], float], param: str) -> float:
        """Move to `target(now)`, checked under the lock before anything changes."""
        with self._lock:
            current = self.now()
            when = target(current)
            _check_range(when, param)
            if when < current:
                # Shown to the millisecond: a gap below one says so, or it reads "X is before X".
                gap = "" if iso(when) != iso(current) else " (by less than a millisecond)"
                raise ValidationFailed(
                    f"The clock never moves backwards: {iso(when)} is before the current "
                    f"virtual time {iso(current)}{gap}; set a later instant or reset.",
                    param=param,
                    code="clock_backwards",
                )
            if self.mode == "manual":
                self._manual_now = when
            else:
                self._offset += when - current
        return self.now()

    def restore(
        self, manual_now: float | None, offset: float, saved_now: float | None = None
    ) -> None:
        """Put back the state saved by `state()` (at start-up, at a restore). `saved_now`,
        the time it read then, is a floor: a state saved in the other mode (a manual clock
        set ahead, then served `real`; or the reverse) does not go back behind what it
        dated."""
        with self._lock:
            if manual_now is not None:  # a state saved by an older version may be too late
                self._manual_now = min(max(manual_now, self._start), LATEST)
            self._offset = min(max(offset, 0.0), max(LATEST - time.time(), 0.0))
            if saved_now is None or not EARLIEST <= saved_now <= LATEST:
                return
            if self.mode == "manual":
                self._manual_now = max(self._manual_now, saved_now)
            else:
                self._offset = max(self._offset, saved_now - time.time())

    def state(self) -> tuple[float, float]:
        return self._manual_now, self._offset

    def reset(self, start: float | None = None) -> None:
        """Back to the fixtures' start (manual) or to the wall clock (real)."""
        with self._lock:
            if start is not None:
                self._start = start
            self._manual_now = self._start
            self._offset = 0.0


def _check_range(when: float, param: str) -> None:
    if not EARLIEST <= when <= LATEST:  # also refuses NaN
        raise ValidationFailed(
            f"The virtual clock stays between {iso(EARLIEST)} and {iso(LATEST)}; "
            f"this would move it to {_shown(when)}, so it has not moved. "
            "Pick an instant in that range.",
            param=param,
            code="clock_out_of_range",
        )


def _shown(when: float) -> str:
    """`iso(when)`, but saying so when iso() would have to clamp it."""
    if _FIRST <= when <= _LAST:
        return iso(when)
    return "an instant outside the years 0001 to 9999"


_SECONDS: dict[int, str] = {}  # formatted seconds: most timestamps share a few of them
_EPOCH = datetime(1970, 1, 1)
# What a datetime can hold: iso() clamps to these rather than raise, so an instant
# beyond them (a real clock running past LATEST, a far expiry) cannot fail a request.
_FIRST = -62135596800.0  # 0001-01-01T00:00:00Z
_LAST = 253402300799.999  # 9999-12-31T23:59:59.999Z: its milliseconds never round up


def iso(ts: float) -> str:
    """The wire form of a timestamp: ISO-8601, UTC, milliseconds, `Z`."""
    ts = _LAST if ts > _LAST else ts if ts >= _FIRST else _FIRST  # NaN -> _FIRST
    second = int(ts // 1)
    micros = round((ts - second) * 1_000_000)  # as datetime rounds, then truncate to ms
    if micros == 1_000_000:
        second, micros = second + 1, 0
    text = _SECONDS.get(second)
    if text is None:  # formatting is costly; keep the last few seconds
        if len(_SECONDS) > 8:
            _SECONDS.clear()
        # isoformat, not strftime: strftime writes year 1 as "1", not "0001".
        text = _SECONDS[second] = (_EPOCH + timedelta(seconds=second)).isoformat() + "."
    return f"{text}{micros // 1000:03d}Z"


def parse_iso(text: str) -> float:
    """Parse an ISO-8601 instant; a naive one is taken as UTC. RFC 3339 allows a
    lower-case `z` for UTC (and `t`, which fromisoformat reads already)."""
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def instant_param(text: str, param: str) -> str:
    """A query's time bound (any offset; a naive one is UTC) in the wire's form, which
    compares with stored times as instants do; else a 422 naming `param`."""
    try:
        return iso(parse_iso(text))
    except ValueError as exc:
        raise ValidationFailed(
            f"{param} must be an ISO-8601 instant such as 2026-01-01T00:00:00Z; got {text!r}.",
            param=param,
        ) from exc
