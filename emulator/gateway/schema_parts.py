"""Reading a JSON schema's parts, for the generator (`schema_draws`): local `$ref`s,
merged `allOf` parts, the schema of a property by name, the kinds a schema without
`type` may be, and equal values told apart by their canonical text."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from emulator.gateway.pattern_search import search
from emulator.gateway.schema_meet import KINDS


def resolve(ref: str, root: Any) -> Any:
    """The part of `root` a local `$ref` (`#`, `#/$defs/...`) points at; None if elsewhere."""
    if not ref.startswith("#"):
        return None
    node = root
    for part in ref[1:].lstrip("/").split("/") if ref[1:] else ():
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            node = node.get(part, {}) if isinstance(node, dict) else {}
    return node


def merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two `allOf` parts as the plain pass reads them: `b` over `a`, properties of both."""
    merged = {**a, **b}
    merged["properties"] = {**a.get("properties", {}), **b.get("properties", {})}
    return merged


def null_branch(branch: Any) -> bool:
    return isinstance(branch, dict) and branch.get("type") == "null"


def inferred_kinds(schema: dict[str, Any]) -> list[str]:
    """The kinds to try for a schema without `type`, the one its keywords suggest first."""
    hints = (
        ("object", ("properties", "required", "minProperties", "additionalProperties")),
        ("array", ("items", "prefixItems", "minItems", "uniqueItems", "contains")),
        ("number", ("minimum", "maximum", "multipleOf", "exclusiveMinimum", "exclusiveMaximum")),
    )
    first = [kind for kind, keys in hints if any(k in schema for k in keys)]
    return first + [k for k in KINDS if k not in first]


def property_schema(schema: dict[str, Any], key: str) -> Any:
    """The schema a property named `key` must meet: its own, the `patternProperties`
    it matches, or else `additionalProperties`."""
    patterns = (schema.get("patternProperties") or {}).items()
    parts = [sub for pattern, sub in patterns if _matches(pattern, key)]
    if key in (schema.get("properties") or {}):
        parts.insert(0, schema["properties"][key])
    elif not parts:
        extra = schema.get("additionalProperties", {})
        parts = [extra if isinstance(extra, dict) else {}]
    return parts[0] if len(parts) == 1 else {"allOf": parts}


def _matches(pattern: str, key: str) -> bool:
    try:
        return search(pattern, key)
    except re.error:
        return False


def canonical(value: Any) -> str:
    """Equal JSON values (1 and 1.0 included) give the same text."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{k!r}:{canonical(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    return repr(value)
