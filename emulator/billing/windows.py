"""Spend-limit windows: UTC calendar boundaries of the virtual clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def window_bounds(interval: str | None, now: float) -> tuple[float, float | None]:
    """(start, next reset) of the window holding `now`; no interval: all time, no reset."""
    if interval is None:
        return 0.0, None
    day = datetime.fromtimestamp(now, tz=UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if interval == "daily":
        start, end = day, day + timedelta(days=1)
    elif interval == "weekly":  # weeks start on Monday
        start = day - timedelta(days=day.weekday())
        end = start + timedelta(days=7)
    else:  # monthly
        start = day.replace(day=1)
        end = (start + timedelta(days=32)).replace(day=1)
    return start.timestamp(), end.timestamp()
