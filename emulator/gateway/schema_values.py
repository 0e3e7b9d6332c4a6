"""Values that validate against a JSON schema: tool-call arguments and structured output.

Covers what function schemas and structured outputs use: `type` (and type
lists), `properties`/`required`, `items`, `enum`, `const`, `anyOf`/`oneOf`
(first branch), `allOf`, `$ref` into `$defs`/`definitions`, string, number
and array bounds, and common `format`s. `pattern` is not generated (a plain
word is used), which is documented in docs/fidelity.md.
"""

from __future__ import annotations

import random
from typing import Any

WORDS = (
    "amber", "harbor", "lantern", "meadow", "orbit", "pepper", "quartz", "river",
    "summit", "timber", "velvet", "willow", "beacon", "canyon", "falcon", "garden",
)  # fmt: skip
_BY_NAME = {
    "name": ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson"),
    "city": ("Lisbon", "Osaka", "Toronto", "Nairobi", "Oslo"),
    "location": ("Lisbon, Portugal", "Osaka, Japan", "Toronto, Canada"),
    "country": ("Portugal", "Japan", "Canada", "Kenya"),
    "unit": ("celsius", "fahrenheit"),
    "email": ("ada@example.com", "grace@example.org"),
    "language": ("en", "fr", "ja"),
}


def value_for(schema: Any, rng: random.Random, root: Any = None, name: str = "") -> Any:
    root = schema if root is None else root
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        return value_for(_resolve(schema["$ref"], root), rng, root, name)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            branches = [b for b in schema[key] if b.get("type") != "null"] or schema[key]
            return value_for(branches[0], rng, root, name)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged = _merge(merged, _resolve(part["$ref"], root) if "$ref" in part else part)
        return value_for(merged, rng, root, name)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    return _BUILDERS.get(kind, _string)(schema, rng, root, name)


def _object(schema: dict[str, Any], rng: random.Random, root: Any, name: str) -> Any:
    properties = schema.get("properties", {})
    return {key: value_for(sub, rng, root, key) for key, sub in properties.items()}


def _array(schema: dict[str, Any], rng: random.Random, root: Any, name: str) -> Any:
    low = schema.get("minItems", 1)
    high = max(low, min(schema.get("maxItems", 3), low + 2))
    items = schema.get("items", {"type": "string"})
    return [value_for(items, rng, root, name) for _ in range(rng.randint(low, high))]


def _string(schema: dict[str, Any], rng: random.Random, root: Any, name: str) -> Any:
    fmt = schema.get("format")
    if fmt == "date-time":
        return f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T09:30:00Z"
    if fmt == "date":
        return f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
    if fmt == "email":
        return f"{rng.choice(WORDS)}@example.com"
    if fmt in ("uri", "url"):
        return f"https://example.com/{rng.choice(WORDS)}"
    if fmt == "uuid":
        a, b, c, d, e = (rng.getrandbits(bits) for bits in (32, 16, 12, 12, 48))
        return f"{a:08x}-{b:04x}-4{c:03x}-8{d:03x}-{e:012x}"
    key = next((k for k in _BY_NAME if k in name.lower()), None)
    text = rng.choice(_BY_NAME[key]) if key else f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    while len(text) < low:
        text += " " + rng.choice(WORDS)
    return text[:high] if high is not None else text


def _number(schema: dict[str, Any], rng: random.Random, root: Any, name: str) -> Any:
    low, high = _bounds(schema, 0, 100)
    value = round(rng.uniform(low, high), 2)
    return min(max(value, low), high)


def _integer(schema: dict[str, Any], rng: random.Random, root: Any, name: str) -> Any:
    low, high = _bounds(schema, 1, 100)
    import math

    return rng.randint(math.ceil(low), math.floor(high))


def _bounds(schema: dict[str, Any], low: float, high: float) -> tuple[float, float]:
    low = schema.get("minimum", low)
    high = schema.get("maximum", max(high, low + 1))
    if "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"] + 1
    if "exclusiveMaximum" in schema:
        high = schema["exclusiveMaximum"] - 1
    return low, max(low, high)


def _boolean(schema: dict[str, Any], rng: random.Random, root: Any, name: str) -> Any:
    return rng.random() < 0.5


def _null(schema: dict[str, Any], rng: random.Random, root: Any, name: str) -> Any:
    return None


_BUILDERS = {
    "object": _object,
    "array": _array,
    "string": _string,
    "number": _number,
    "integer": _integer,
    "boolean": _boolean,
    "null": _null,
}


def _resolve(ref: str, root: Any) -> Any:
    node = root
    for part in ref.lstrip("#/").split("/"):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    merged = {**a, **b}
    merged["properties"] = {**a.get("properties", {}), **b.get("properties", {})}
    return merged
