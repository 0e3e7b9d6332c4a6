"""How deep a schema may nest and how large its smallest valid value may be, for the
gateway to draw values for it.

`schema_values.check_schema` refuses a schema past either limit before anything
recursive runs over it (jsonschema's meta-schema check, the generator, the
validator):

- Depth: Python stops at 1000 nested calls and jsonschema's check spends about
  8 a level, so a schema nested a few hundred levels (the JSON body parser takes
  about 900) was an internal error rather than a refusal. 64 levels of JSON
  objects and arrays (31 levels of object properties, far past the handful
  OpenAI's strict structured outputs allow) take about half of that stack.
- Size: each `minItems` or `minLength` is at most `schema_values.MAX_SIZE`, but
  they multiply along the nesting: 4 arrays of 4096 strings of 4096 characters
  are 67 million characters, seconds of a single-threaded server. `too_large`
  bounds the smallest valid value from below, so it never refuses a schema
  whose smallest value fits. The generator draws larger values than the
  smallest, within budgets of its own (`schema_draws.MAX_NODES`, `MAX_CHARS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from emulator.gateway.pattern_values import pattern_cost
from emulator.gateway.schema_draws import MAX_NODES
from emulator.gateway.schema_parts import resolve

MAX_DEPTH = 64  # JSON objects and arrays nested in one schema
# In the smallest valid value. Past half its budget of values the generator draws the
# smallest values (`schema_draws`): the other half holds a smallest value this large.
MAX_VALUES = MAX_NODES // 2
MAX_CHARACTERS = 65_536  # of its strings and keys: 16 of the longest strings drawn


@dataclass(frozen=True)
class _Size:
    """At least this many values and characters; `past`: where (the innermost place, a
    JSON pointer) and how a smallest value is past a limit."""

    values: int
    chars: int = 0
    past: str | None = None


_ONE = _Size(1)


def too_deep(schema: Any) -> bool:
    """Does `schema` nest objects and arrays more than MAX_DEPTH levels deep? Walked
    with a stack of its own: a recursive walk would fail where the others do."""
    stack = [(schema, 1)] if isinstance(schema, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def too_large(schema: Any) -> str | None:
    """Why the smallest valid value of `schema` is past MAX_VALUES or MAX_CHARACTERS,
    naming the innermost place past it; None when it fits. Call it on a schema no
    deeper than MAX_DEPTH and with each size within `schema_values.MAX_SIZE`."""
    try:
        size = _Smallest(schema).of(schema, "", 0)
    except RecursionError:  # only through long `$ref` chains; the draw budgets still hold
        return None
    return None if size.past is None else f"the smallest value it allows {size.past}"


class _Smallest:
    """Lower bounds of the size of a valid value, part by part. Only a lower bound is
    safe to refuse on, so whatever is not counted (`not`, `if`, the keys of properties
    not required, a reference met again below itself, anything past twice MAX_DEPTH
    through references) counts as small."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.refs: dict[str, _Size] = {}

    def of(self, node: Any, where: str, depth: int) -> _Size:
        if not isinstance(node, dict) or depth > 2 * MAX_DEPTH:
            return _ONE
        parts = [self._own(node, where, depth)]
        if isinstance(node.get("$ref"), str):
            parts.append(self._ref(node["$ref"], depth))
        for i, part in enumerate(_list(node.get("allOf"))):
            parts.append(self.of(part, f"{where}/allOf/{i}", depth + 2))
        for key in ("anyOf", "oneOf"):
            branches = [
                self.of(b, f"{where}/{key}/{i}", depth + 2)
                for i, b in enumerate(_list(node.get(key)))
            ]
            if branches:
                parts.append(_least(branches))
        # All of them at once: the most of each count.
        most = _Size(max(p.values for p in parts), max(p.chars for p in parts))
        return _checked(most, _past(parts), where)

    def _ref(self, ref: str, depth: int) -> _Size:
        if not ref.startswith("#"):
            return _ONE
        if ref not in self.refs:
            self.refs[ref] = _ONE  # met again below itself: no bound from there
            self.refs[ref] = self.of(resolve(ref, self.root), ref[1:], depth + 1)
        return self.refs[ref]

    def _own(self, node: dict[str, Any], where: str, depth: int) -> _Size:
        kinds = node.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not isinstance(kinds, list) or not kinds or "const" in node or "enum" in node:
            return _ONE  # any kind (or a value given in full): a number is small
        return _least([self._kind(kind, node, where, depth) for kind in kinds])

    def _kind(self, kind: Any, node: dict[str, Any], where: str, depth: int) -> _Size:
        if kind == "string":  # within MAX_SIZE characters (`schema_values._contradiction`)
            return _Size(1, _chars(node))
        if kind == "array":
            return self._array(node, where, depth)
        if kind == "object":
            return self._object(node, where, depth)
        return _ONE

    def _array(self, node: dict[str, Any], where: str, depth: int) -> _Size:
        wanted = _count(node.get("minContains"), 1) if "contains" in node else 0
        count = max(_count(node.get("minItems")), wanted)
        prefix = _list(node.get("prefixItems"))[:count]
        parts = [self.of(p, f"{where}/prefixItems/{i}", depth + 2) for i, p in enumerate(prefix)]
        if count > len(prefix):
            items, times = (
                self.of(node.get("items"), f"{where}/items", depth + 1),
                count - len(prefix),
            )
            parts.append(_Size(items.values * times, items.chars * times, items.past))
        return _summed(parts, where)

    def _object(self, node: dict[str, Any], where: str, depth: int) -> _Size:
        properties = node.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = [k for k in dict.fromkeys(_list(node.get("required"))) if isinstance(k, str)]
        parts = [
            self.of(properties[k], f"{where}/properties/{k}", depth + 2)
            if k in properties
            else _ONE
            for k in required
        ]
        parts.append(_Size(0, sum(len(k) for k in required)))  # keys are characters too
        more = max(0, _count(node.get("minProperties")) - len(required))
        if more:
            extra, key = (
                self._extra(node, required, where, depth),
                _chars(node.get("propertyNames")),
            )
            parts.append(_Size(more * extra.values, more * (extra.chars + key), extra.past))
        return _summed(parts, where)

    def _extra(self, node: dict[str, Any], required: list[str], where: str, depth: int) -> _Size:
        """One more property than those required: an optional one, one a
        `patternProperties` key matches, or one `additionalProperties` allows."""
        sizes = [
            self.of(sub, f"{where}/{keyword}/{key}", depth + 2)
            for keyword in ("properties", "patternProperties")
            if isinstance(node.get(keyword), dict)
            for key, sub in node[keyword].items()
            if keyword == "patternProperties" or key not in required
        ]
        other = node.get("additionalProperties")
        if other is not False:
            sizes.append(self.of(other, f"{where}/additionalProperties", depth + 1))
        return _least(sizes) if sizes else _ONE


def _summed(parts: list[_Size], where: str) -> _Size:
    """One value holding all the parts (an array's items, an object's properties)."""
    total = _Size(1 + sum(p.values for p in parts), sum(p.chars for p in parts))
    return _checked(total, _past(parts), where)


def _least(alternatives: list[_Size]) -> _Size:
    """Any one of them (`anyOf` branches, kinds of a `type` list): the least of each count."""
    values, chars = min(a.values for a in alternatives), min(a.chars for a in alternatives)
    return _Size(values, chars, _past(alternatives))


def _past(parts: list[_Size]) -> str | None:
    return next((p.past for p in parts if p.past), None)


def _checked(size: _Size, inner: str | None, where: str) -> _Size:
    """`size` at `where`, saying how the innermost place past a limit is (a part's,
    `inner`, or else this one). Past a limit the counts stop growing: products of
    them stay small numbers."""
    if size.values <= MAX_VALUES and size.chars <= MAX_CHARACTERS:
        return _Size(size.values, size.chars)
    if inner is None:
        what = (
            f"{MAX_CHARACTERS} characters"
            if size.chars > MAX_CHARACTERS
            else f"{MAX_VALUES} values"
        )
        inner = f"at {where or '/'} holds more than {what}"
    return _Size(min(size.values, MAX_VALUES + 1), min(size.chars, MAX_CHARACTERS + 1), inner)


def _chars(node: Any) -> int:
    """The fewest characters of a string `node` accepts (`minLength`, `pattern`)."""
    if not isinstance(node, dict):
        return 0
    pattern = node.get("pattern")
    return max(
        _count(node.get("minLength")), pattern_cost(pattern)[0] if isinstance(pattern, str) else 0
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _count(value: Any, default: int = 0) -> int:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return int(value) if ok else default
