"""Requests per minute, per API key and per account, on the virtual clock.

Fixed one-minute windows aligned to the clock's minutes: a window's count
resets when the virtual clock enters the next minute (advancing the clock
frees it). A request over either limit is 429 `rate_limit_exceeded` with
`Retry-After`; every gateway answer says where the caller stands in
`X-RateLimit-Limit`, `-Remaining` and `-Reset` (seconds until the window ends).
`count` keeps windows of any length the same way (the free tier's minute and
day: `gateway.free_tier`), `counted` reads one, and `uncount` gives a count back.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from emulator.errors import RateLimited

WINDOW_S = 60


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class Standing:
    limit: int
    remaining: int
    reset_s: float

    def headers(self) -> list[tuple[bytes, bytes]]:
        return [
            (b"x-ratelimit-limit", str(self.limit).encode()),
            (b"x-ratelimit-remaining", str(self.remaining).encode()),
            (b"x-ratelimit-reset", str(math.ceil(self.reset_s)).encode()),
        ]


class RateLimiter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, int], int] = {}
        # Windows of any length (`count`): (scope, length, index) -> requests.
        self._long_counts: dict[tuple[str, int, int], int] = {}

    def admit(self, now: float, limits: list[tuple[str, int]]) -> Standing:
        """Count one request against every (scope, rpm) limit, or refuse it whole."""
        window = int(now // WINDOW_S)
        reset_s = (window + 1) * WINDOW_S - now
        with self._lock:
            if len(self._counts) > 100_000:  # old windows: forget them
                self._counts = {k: v for k, v in self._counts.items() if k[1] == window}
            used = [(scope, rpm, self._counts.get((scope, window), 0)) for scope, rpm in limits]
            for scope, rpm, count in used:
                if count >= rpm:
                    kind = "API key" if scope.startswith("key:") else "account"
                    headers = {
                        k.decode(): v.decode() for k, v in Standing(rpm, 0, reset_s).headers()
                    }
                    raise RateLimited(
                        f"Rate limit of the {kind} reached: {rpm} requests per minute. Retry in "
                        f"{math.ceil(reset_s)} s (Retry-After), or ask for a higher limit.",
                        headers={
                            **headers,
                            "Retry-After": str(math.ceil(reset_s)),
                            "retry-after-ms": str(math.ceil(reset_s * 1000)),
                        },
                        metadata={"limit": rpm, "scope": kind},
                    )
            for scope, _, count in used:
                self._counts[(scope, window)] = count + 1
        tightest = min(((rpm - count - 1, rpm) for _, rpm, count in used), default=(0, 0))
        return Standing(tightest[1], max(tightest[0], 0), reset_s)

    def count(self, now: float, windows: list[tuple[str, int, int]]) -> tuple[int, int] | None:
        """Count one request in each (scope, limit, window in seconds) of the clock's
        windows of that length, or none of them when one is full: then the (limit,
        window) of the full one that frees last."""
        with self._lock:
            if len(self._long_counts) > 100_000:  # old windows: forget them
                self._long_counts = {
                    k: v for k, v in self._long_counts.items() if k[2] == int(now // k[1])
                }
            keys = [
                ((scope, length, int(now // length)), limit) for scope, limit, length in windows
            ]
            full = [  # (when it frees, its limit, its length); a key: (scope, length, index)
                ((key[2] + 1) * key[1], limit, key[1])
                for key, limit in keys
                if self._long_counts.get(key, 0) >= limit
            ]
            if full:
                _, limit, length = max(full)
                return limit, length
            for key, _ in keys:
                self._long_counts[key] = self._long_counts.get(key, 0) + 1
        return None

    def counted(self, now: float, scope: str, length: int) -> int:
        """What `count` counted in the scope's window of that length that holds `now`."""
        with self._lock:
            return self._long_counts.get((scope, length, int(now // length)), 0)

    def uncount(self, counted: list[tuple[str, int, int]]) -> None:
        """Give back what `count` counted ((scope, window length, window index) keys)."""
        with self._lock:
            for key in counted:
                if self._long_counts.get(key, 0) > 0:
                    self._long_counts[key] -= 1

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self._long_counts.clear()
