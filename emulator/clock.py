"""The one clock of the emulator: every timestamp it writes comes from here.

`real` follows the wall clock plus an offset that `advance` grows; `manual`
stands still at a fixed instant until it is advanced or set. Neither ever
moves backwards. Nothing else in the package may read the time of day.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Literal

from emulator.errors import ValidationFailed

ClockMode = Literal["real", "manual"]


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
        with self._lock:
            if self.mode == "manual":
                self._manual_now += seconds
            else:
                self._offset += seconds
        return self.now()

    def set(self, when: float) -> float:
        current = self.now()
        if when < current:
            raise ValidationFailed(
                f"The clock never moves backwards: {iso(when)} is before the current "
                f"virtual time {iso(current)}.",
                param="now",
                code="clock_backwards",
            )
        return self.advance(when - current)

    def restore(self, manual_now: float | None, offset: float) -> None:
        """Put back the state saved by `state()` (used at start-up)."""
        with self._lock:
            if manual_now is not None:
                self._manual_now = max(manual_now, self._start)
            self._offset = max(offset, 0.0)

    def state(self) -> tuple[float, float]:
        return self._manual_now, self._offset

    def reset(self, start: float | None = None) -> None:
        """Back to the fixtures' start (manual) or to the wall clock (real)."""
        with self._lock:
            if start is not None:
                self._start = start
            self._manual_now = self._start
            self._offset = 0.0


_SECONDS: dict[int, str] = {}  # formatted seconds: most timestamps share a few of them


def iso(ts: float) -> str:
    """The wire form of a timestamp: ISO-8601, UTC, milliseconds, `Z`."""
    second = int(ts // 1)
    micros = round((ts - second) * 1_000_000)  # as datetime rounds, then truncate to ms
    if micros == 1_000_000:
        second, micros = second + 1, 0
    text = _SECONDS.get(second)
    if text is None:  # formatting is costly; keep the last few seconds
        if len(_SECONDS) > 8:
            _SECONDS.clear()
        text = _SECONDS[second] = datetime.fromtimestamp(second, tz=UTC).strftime(
            "%Y-%m-%dT%H:%M:%S."
        )
    return f"{text}{micros // 1000:03d}Z"


def parse_iso(text: str) -> float:
    """Parse an ISO-8601 instant; a naive one is taken as UTC."""
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()
