"""Drawing one value for a JSON schema: the plain pass and the strict pass.

`schema_values.value_for` runs these and validates what they draw; see its
docstring for what each pass honours. Every choice comes from `Gen.rng`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from emulator.gateway.pattern_search import PatternTooSlow
from emulator.gateway.pattern_values import string_for_pattern
from emulator.gateway.schema_meet import meet
from emulator.gateway.schema_numbers import plain_number, strict_number
from emulator.gateway.schema_parts import (
    canonical,
    inferred_kinds,
    merge,
    null_branch,
    property_schema,
    resolve,
)
from emulator.gateway.schema_strings import WORDS, text_for

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from emulator.gateway.prompt_hints import Hints

MAX_REF_DEPTH = 24  # nested `$ref` expansions on one path: deeper is a failed try
MAX_NODES = 20_000  # values drawn for one answer
# Past half of either budget, a try draws the smallest values the schema allows, as
# below a repeated `$ref`: arrays of arrays, each of 1 to 3 items, multiply past
# MAX_NODES in 10 levels. Answers of earlier versions, far smaller, are drawn as before.
_CROWD = ("#crowded", "#crowded")  # on `refs`, makes `_minimal` true from there down
# Characters of the strings drawn for one answer: a few times the most the gateway
# accepts in a schema's smallest value (`schema_limits.MAX_CHARACTERS`), so a try
# that draws sizes multiplying along the nesting ends in a fraction of a second.
MAX_CHARS = 262_144
_CROWDED_NODES, _CROWDED_CHARS = MAX_NODES // 2, MAX_CHARS // 2


class Failed(Exception):
    """This try cannot finish (recursion without end, too large)."""


@dataclass
class Gen:
    """One try: the generator, the root schema (for `$ref`s) and its validator."""

    rng: random.Random
    root: Any
    validator: Validator  # 2020-12's, over the schema drawn from (`schema_drafts`)
    strict: bool = False
    attempt: int = 0
    hints: Hints | None = None  # what the user said, taken where the schema allows
    nodes: int = 0
    chars: int = 0

    def fits(self, schema: Any, value: Any) -> bool:
        """Does `value` satisfy `schema`, a part of the root (its `$ref`s resolve there)?"""
        try:
            return bool(self.validator.evolve(schema=schema).is_valid(value))
        except PatternTooSlow:
            raise
        except Exception:
            return False


def draw(schema: Any, g: Gen) -> Any:
    """One value for `schema`; Failed when the try cannot finish."""
    return _value(schema, g, "", ())


def _value(schema: Any, g: Gen, name: str, refs: tuple[str, ...]) -> Any:
    if not isinstance(schema, dict):
        return None
    g.nodes += 1
    if g.nodes > MAX_NODES:
        raise Failed("too many values")
    if (g.nodes > _CROWDED_NODES or g.chars > _CROWDED_CHARS) and not _minimal(refs):
        refs = (*refs, *_CROWD)
    if "$ref" in schema:
        return _ref(schema, g, name, refs)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        if g.strict:
            return _enum(schema, g)
        drawn = g.rng.choice(schema["enum"])
        return g.hints.choice(schema["enum"], drawn) if g.hints else drawn
    if g.strict:
        return _strict(schema, g, name, refs)
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            branches = [b for b in schema[key] if b.get("type") != "null"] or schema[key]
            if _minimal(refs):
                branches = [b for b in schema[key] if b.get("type") == "null"] or branches
            return _value(branches[0], g, name, refs)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged = merge(merged, resolve(part["$ref"], g.root) if "$ref" in part else part)
        return _value(merged, g, name, refs)
    kind = schema.get("type")
    if isinstance(kind, list):
        nullable = "null" if _minimal(refs) and "null" in kind else None
        kind = nullable or next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    return _BUILDERS.get(kind, _string)(schema, g, name, refs)


def _ref(schema: dict[str, Any], g: Gen, name: str, refs: tuple[str, ...]) -> Any:
    ref = schema["$ref"]
    if len(refs) >= MAX_REF_DEPTH:
        raise Failed("recursion without end")
    target = resolve(ref, g.root)
    rest = {k: v for k, v in schema.items() if k != "$ref"}
    if g.strict and rest and isinstance(target, dict):
        target = meet(target, rest)
    return _value(target, g, name, (*refs, ref))


def _minimal(refs: tuple[str, ...]) -> bool:
    """Below a `$ref` met again on the path: generate the smallest value."""
    return len(set(refs)) < len(refs)


_SKIPPED = object()  # a part left out (`_part`)


def _part(g: Gen, part: Any, name: str, refs: tuple[str, ...], required: bool) -> Any:
    """A value for a property or an item. One the schema does not require (an optional
    property, an item past `minItems`) is _SKIPPED when the try cannot draw it (too
    large, recursion without end): the value goes on without it, its budgets as before."""
    if required:
        return _value(part, g, name, refs)
    nodes, chars = g.nodes, g.chars
    try:
        return _value(part, g, name, refs)
    except Failed:
        g.nodes, g.chars = nodes, chars
        return _SKIPPED


def _properties(
    g: Gen, parts: dict[str, Any], required: Any, refs: tuple[str, ...]
) -> dict[str, Any]:
    """A value for each of `parts` by name, but the optional ones left out (`_part`)."""
    drawn = {key: _part(g, sub, key, refs, key in required) for key, sub in parts.items()}
    return {key: value for key, value in drawn.items() if value is not _SKIPPED}


def _object(schema: dict[str, Any], g: Gen, name: str, refs: tuple[str, ...]) -> Any:
    if g.strict:
        return _strict_object(schema, g, refs)
    properties = schema.get("properties", {})
    required = schema.get("required", ())
    if _minimal(refs):
        properties = {k: v for k, v in properties.items() if k in required}
    return _properties(g, properties, required, refs)


def _array(schema: dict[str, Any], g: Gen, name: str, refs: tuple[str, ...]) -> Any:
    if g.strict:
        return _strict_array(schema, g, name, refs)
    low = schema.get("minItems", 0 if _minimal(refs) else 1)
    high = max(low, min(schema.get("maxItems", 3), low + 2))
    count = low if _minimal(refs) else g.rng.randint(low, high)
    items = schema.get("items", {"type": "string"})
    out = []
    for index in range(count):
        value = _part(g, items, name, refs, index < low)
        if value is _SKIPPED:
            break
        out.append(value)
    return out


def _string(schema: dict[str, Any], g: Gen, name: str, refs: tuple[str, ...]) -> Any:
    text = text_for(schema, g.rng, name, g.strict)
    if g.hints:
        text = g.hints.string(name, schema, text, lambda hint: g.fits(schema, hint))
    g.chars += len(text) if isinstance(text, str) else 0
    if g.chars > MAX_CHARS:
        raise Failed("too many characters")
    return text


def _number(schema: dict[str, Any], g: Gen, name: str, refs: tuple[str, ...]) -> Any:
    draw_number = strict_number if g.strict else plain_number
    return _told(schema, g, draw_number(schema, g.rng, integer=False))


def _integer(schema: dict[str, Any], g: Gen, name: str, refs: tuple[str, ...]) -> Any:
    draw_number = strict_number if g.strict else plain_number
    return _told(schema, g, draw_number(schema, g.rng, integer=True))


def _told(schema: dict[str, Any], g: Gen, drawn: Any) -> Any:
    """`drawn`, or the next number the user said that `schema` takes."""
    return g.hints.number(drawn, lambda hint: g.fits(schema, hint)) if g.hints else drawn


def _boolean(schema: dict[str, Any], g: Gen, name: str, refs: tuple[str, ...]) -> Any:
    drawn = g.rng.random() < 0.5
    return g.hints.flag(name, drawn) if g.hints else drawn


def _null(schema: dict[str, Any], g: Gen, name: str, refs: tuple[str, ...]) -> Any:
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


# The strict pass: the keywords the plain pass does not honour.


def _strict(schema: dict[str, Any], g: Gen, name: str, refs: tuple[str, ...]) -> Any:
    if schema.get("allOf"):
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part, refs = _deref(part, g, refs)
            merged = meet(merged, part)
        return _value(merged, g, name, refs)
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _branch(schema, key, g, name, refs)
    value = None
    for kind in _kinds(schema, g, refs):
        for _ in range(3):
            value = _BUILDERS[kind](schema, g, name, refs)
            if "not" not in schema or not g.fits(schema["not"], value):
                return value
    return value


def _branch(schema: dict[str, Any], key: str, g: Gen, name: str, refs: tuple[str, ...]) -> Any:
    """A value from one `anyOf`/`oneOf` branch (with the sibling keywords) the whole accepts."""
    rest = {k: v for k, v in schema.items() if k != key}
    branches = [b for b in schema[key] if not null_branch(b)] + [
        b for b in schema[key] if null_branch(b)
    ]
    if _minimal(refs):
        branches.sort(key=lambda b: (not null_branch(b), "$ref" in repr(b)))
    shift = g.attempt % len(branches)
    value = None
    for branch in branches[shift:] + branches[:shift]:
        value = _value(meet(rest, branch) if isinstance(branch, dict) else branch, g, name, refs)
        if g.fits(schema, value):
            return value
    return value


def _deref(part: Any, g: Gen, refs: tuple[str, ...]) -> tuple[Any, tuple[str, ...]]:
    while isinstance(part, dict) and "$ref" in part:
        if len(refs) >= MAX_REF_DEPTH:
            raise Failed("recursion without end")
        ref = part["$ref"]
        target = resolve(ref, g.root)
        rest = {k: v for k, v in part.items() if k != "$ref"}
        part, refs = (meet(target, rest) if isinstance(target, dict) else target), (*refs, ref)
    return part, refs


def _kinds(schema: dict[str, Any], g: Gen, refs: tuple[str, ...]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        kinds = [kind]
    elif isinstance(kind, list):
        kinds = [k for k in kind if k != "null"] + (["null"] if "null" in kind else [])
        if _minimal(refs) and "null" in kinds:
            kinds = ["null", *kinds[:-1]]
    else:
        kinds = inferred_kinds(schema)
    kinds = [k for k in kinds if k in _BUILDERS]
    shift = g.attempt % len(kinds) if kinds else 0
    return kinds[shift:] + kinds[:shift]


def _enum(schema: dict[str, Any], g: Gen) -> Any:
    rest = {k: v for k, v in schema.items() if k != "enum"}
    fitting = [e for e in schema["enum"] if g.fits(rest, e)] if rest else schema["enum"]
    drawn = g.rng.choice(fitting or schema["enum"])
    return g.hints.choice(fitting, drawn) if g.hints else drawn


def _strict_object(schema: dict[str, Any], g: Gen, refs: tuple[str, ...]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    required = [k for k in schema.get("required") or () if isinstance(k, str)]
    keys = list(dict.fromkeys(required))
    optional = [k for k in properties if k not in keys]
    if not _minimal(refs):
        keys += optional
    for key in list(keys):
        keys += [d for d in (schema.get("dependentRequired") or {}).get(key, ()) if d not in keys]
    high = schema.get("maxProperties")
    if high is not None:
        keys = keys[: max(high, len(required))]
    out = _properties(g, {key: property_schema(schema, key) for key in keys}, required, refs)
    spare = iter([k for k in optional if k not in keys])
    for index in range(min(schema.get("minProperties", 0), 4096)):
        if len(out) >= schema.get("minProperties", 0):
            break
        extra = next(spare, None) or _extra_key(schema, g, out, index)
        if extra is None:
            break
        out[extra] = _value(property_schema(schema, extra), g, extra, refs)
    return out


def _extra_key(schema: dict[str, Any], g: Gen, taken: dict[str, Any], index: int) -> str | None:
    """A name for one more property, allowed by `propertyNames` and `patternProperties`."""
    for _ in range(8):
        if schema.get("additionalProperties") is False:
            patterns = list(schema.get("patternProperties") or ())
            if not patterns:
                return None
            key = string_for_pattern(g.rng.choice(patterns), g.rng, WORDS)
        elif isinstance(schema.get("propertyNames"), dict):
            key = _value({"type": "string", **schema["propertyNames"]}, g, "", ())
        else:
            key = f"{g.rng.choice(WORDS)}_{index + 1}"
        if isinstance(key, str) and key not in taken:
            return key
    return None


def _strict_array(schema: dict[str, Any], g: Gen, name: str, refs: tuple[str, ...]) -> list[Any]:
    prefix = schema.get("prefixItems") or []
    contains, wanted = schema.get("contains"), schema.get("minContains", 1)
    items = schema.get("items", {} if prefix or contains is not None else {"type": "string"})
    low = schema.get("minItems", 0 if _minimal(refs) else 1)
    high = schema.get("maxItems", math.inf)
    if items is False:
        high = min(high, len(prefix))
    floor = max(low, len(prefix), len(prefix) + wanted if contains is not None else 0)
    count = min(floor if _minimal(refs) else g.rng.randint(floor, floor + 2), high)
    out: list[Any] = []
    seen: set[str] = set()
    for _ in range(count * 4 + 8):
        if len(out) >= count:
            break
        index = len(out)
        sub = prefix[index] if index < len(prefix) else items
        if contains is not None and len(prefix) <= index < len(prefix) + wanted:
            sub = {"allOf": [sub, contains]} if isinstance(sub, dict) else contains
        if (value := _part(g, sub, name, refs, index < floor)) is _SKIPPED:
            break
        key = canonical(value)
        if schema.get("uniqueItems") and key in seen:
            continue
        seen.add(key)
        out.append(value)
    return out
