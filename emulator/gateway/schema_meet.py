"""Intersecting two JSON schemas: one schema for the values both accept, for the strict
pass of `schema_draws` (`allOf`, `$ref` and `anyOf`/`oneOf` branches with siblings)."""

from __future__ import annotations

from typing import Any

KINDS = ("string", "integer", "number", "boolean", "object", "array", "null")

_BOUNDS = {
    "minimum": "maximum", "exclusiveMinimum": "exclusiveMaximum", "minLength": "maxLength",
    "minItems": "maxItems", "minProperties": "maxProperties", "minContains": "maxContains",
}  # fmt: skip
_HIGHER = set(_BOUNDS)
_LOWER = set(_BOUNDS.values())


def meet(a: dict[str, Any], b: Any) -> dict[str, Any]:
    """A schema for values both `a` and `b` accept (exactly where the keywords allow)."""
    if b is True or not isinstance(b, dict):
        return a if b is not False else {**a, "not": {}}
    out = dict(a)
    for key, value in b.items():
        if key not in out:
            out[key] = value
            continue
        mine = out[key]
        if key == "properties" and isinstance(mine, dict) and isinstance(value, dict):
            both = {k: _both(mine[k], v) if k in mine else v for k, v in value.items()}
            out[key] = {**mine, **both}
        elif key == "required" and isinstance(mine, list) and isinstance(value, list):
            out[key] = list(dict.fromkeys([*mine, *value]))
        elif key in _HIGHER and _numbers(mine, value):
            out[key] = max(mine, value)
        elif key in _LOWER and _numbers(mine, value):
            out[key] = min(mine, value)
        elif key == "type":
            out[key] = _types_meet(mine, value)
        elif key == "enum" and isinstance(mine, list) and isinstance(value, list):
            out[key] = [e for e in mine if e in value]
        elif key == "allOf" and isinstance(mine, list) and isinstance(value, list):
            out[key] = [*mine, *value]
        elif key in ("$defs", "definitions", "$schema", "$id", "title", "description"):
            continue
        elif mine != value:
            out["allOf"] = [*out.get("allOf", []), {key: value}]
    return out


def _types_meet(a: Any, b: Any) -> Any:
    ours, theirs = (set(t if isinstance(t, list) else [t]) for t in (a, b))
    both = ours & theirs | ({"integer"} if {"integer", "number"} <= ours | theirs else set())
    both &= {k for k in ours | theirs if k in ours or (k == "integer" and "number" in ours)}
    both &= {k for k in ours | theirs if k in theirs or (k == "integer" and "number" in theirs)}
    kinds = [k for k in KINDS if k in both]
    return kinds[0] if len(kinds) == 1 else kinds


def _both(a: Any, b: Any) -> Any:
    return {"allOf": [a, b]}


def _numbers(*values: Any) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
