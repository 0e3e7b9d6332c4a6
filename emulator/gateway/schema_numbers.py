"""Numbers for a JSON schema: the plain pass's within bounds, the strict pass's with
exclusive bounds and `multipleOf` too."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any

# zod, the usual source of JSON schemas in JavaScript, writes +-(2**53 - 1) as the
# bounds of every `.int()`: the limits of the type, not a range the caller chose. A
# model answers such a field with a small number, so a lower bound at or below
# -(2**53 - 1) and an upper one at or above 2**53 - 1 count as absent; every drawn
# value is still within them. A large bound on the other side (a minimum of 1e16,
# for a timestamp in nanoseconds) is a real one.
JS_SAFE_INTEGER = 2**53 - 1


def chosen_bound(schema: dict[str, Any], key: str, default: Any = None) -> Any:
    """`schema[key]` (`minimum`, `exclusiveMaximum`, ...), or `default` when it is absent
    or only the limit of JavaScript's safe integers on its side."""
    bound = schema.get(key)
    if bound is None:
        return default
    if not isinstance(bound, (int, float)) or isinstance(bound, bool):
        return bound
    lower = key in ("minimum", "exclusiveMinimum")
    type_limit = bound <= -JS_SAFE_INTEGER if lower else bound >= JS_SAFE_INTEGER
    return default if type_limit else bound


def plain_number(schema: dict[str, Any], rng: random.Random, *, integer: bool) -> Any:
    """The plain pass's number: within `minimum`/`maximum` (and their exclusive forms),
    an integer from 1 to 100 or a number from 0 to 100 with two decimals by default."""
    if integer:
        low, high = _bounds(schema, 1, 100)
        return rng.randint(math.ceil(low), math.floor(high))
    low, high = _bounds(schema, 0, 100)
    value = round(rng.uniform(low, high), 2)
    return min(max(value, low), high)


def _bounds(schema: dict[str, Any], low: float, high: float) -> tuple[float, float]:
    low = chosen_bound(schema, "minimum", low)
    high = chosen_bound(schema, "maximum", max(high, low + 1))
    if (exclusive := chosen_bound(schema, "exclusiveMinimum")) is not None:
        low = exclusive + 1
    if (exclusive := chosen_bound(schema, "exclusiveMaximum")) is not None:
        high = exclusive - 1
    return low, max(low, high)


def strict_number(schema: dict[str, Any], rng: random.Random, *, integer: bool) -> Any:
    low, high, open_low, open_high, open_ended = _strict_bounds(schema, integer)
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
        if open_ended:
            high = max(high, low + 100 * step)
        return _multiple(step, low, high, open_low, open_high, integer, rng)
    if integer:
        first = math.ceil(low) + (1 if open_low and math.ceil(low) == low else 0)
        last = math.floor(high) - (1 if open_high and math.floor(high) == high else 0)
        return rng.randint(first, last) if first <= last else first
    value = round(rng.uniform(low, high), 2)
    if value < low or value > high or (open_low and value == low) or (open_high and value == high):
        value = (low + high) / 2
    return value


def _strict_bounds(schema: dict[str, Any], integer: bool) -> tuple[Any, Any, bool, bool, bool]:
    """(low, high, low excluded, high excluded, no upper bound given)."""
    low: Any = chosen_bound(schema, "minimum")
    high: Any = chosen_bound(schema, "maximum")
    open_low = open_high = False
    exclusive = chosen_bound(schema, "exclusiveMinimum")
    if isinstance(exclusive, (int, float)) and (low is None or exclusive >= low):
        low, open_low = exclusive, True
    exclusive = chosen_bound(schema, "exclusiveMaximum")
    if isinstance(exclusive, (int, float)) and (high is None or exclusive <= high):
        high, open_high = exclusive, True
    open_ended = high is None
    if low is None and high is None:
        low, high = (1, 100) if integer else (0, 100)
    elif low is None:
        low = high - 100
    elif high is None:
        high = low + 100
    return low, high, open_low, open_high, open_ended


def _multiple(
    step: float, low: float, high: float, open_low: bool, open_high: bool, integer: bool,
    rng: random.Random,
) -> Any:  # fmt: skip
    unit = Fraction(str(step)) if isinstance(step, float) else Fraction(step)
    if integer:
        unit = Fraction(unit.numerator)  # the smallest positive whole multiple of `step`
    first, last = math.ceil(Fraction(low) / unit), math.floor(Fraction(high) / unit)
    first += 1 if open_low and first * unit == low else 0
    last -= 1 if open_high and last * unit == high else 0
    if first > last:
        return low
    start = rng.randint(first, last)
    value: Any = low
    for k in [*range(start, min(last, start + 20) + 1), *range(first, min(last, first + 20) + 1)]:
        exact = k * unit
        whole = exact.denominator == 1 and (integer or isinstance(step, int))
        value = int(exact) if whole else float(exact)
        if _is_multiple(value, step):
            return value
    return value


def _is_multiple(value: Any, step: Any) -> bool:
    """The test jsonschema applies to `multipleOf`."""
    if isinstance(step, float):
        quotient = value / step
        try:
            return bool(int(quotient) == quotient)
        except OverflowError:
            return False
    return bool(value % step == 0)
