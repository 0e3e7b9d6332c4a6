"""Constraints written into a schema's descriptions, read back as keywords.

Anthropic's SDKs send structured output (`messages.parse`, `output_format=Model`) with
the JSON-schema keywords its API does not take moved into the description, for the
model to read: `Field(ge=90, le=100)` arrives as `"description": "{minimum: 90,
maximum: 100}"` (after the field's own description and a blank line). A real model
mostly keeps to them, so values are drawn for the schema with them restored: the
value stays valid against the schema as sent, which says less.
"""

from __future__ import annotations

import json
import re
from typing import Any

# The keywords read back, by the type they constrain.
_KEYWORDS = {
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "array": ("minItems", "maxItems", "uniqueItems"),
}
_KNOWN = sorted({k for keys in _KEYWORDS.values() for k in keys}, key=len, reverse=True)
# Where a note starts: the text's start or ", ", then a keyword and ": ". A pattern's
# own commas are kept: only a known keyword after ", " starts a note.
_NOTE = re.compile(rf"(?:^|, )({'|'.join(_KNOWN)}): ")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_VALUES = ("enum", "const", "default", "examples")  # values, not schemas: left as sent


def restored(schema: Any) -> Any:
    """`schema` with the notes of its descriptions as keywords, where the node has none
    of its own; the same object when there are none (the drawers' caches hold)."""
    if isinstance(schema, list):
        items = [restored(item) for item in schema]
        return schema if all(a is b for a, b in zip(items, schema, strict=True)) else items
    if not isinstance(schema, dict):
        return schema
    changed = False
    out: dict[str, Any] = {}
    for key, value in schema.items():
        out[key] = value if key in _VALUES else restored(value)
        changed = changed or out[key] is not value
    notes = _notes(schema)
    for key, value in notes.items():
        out.setdefault(key, value)
    return out if changed or notes else schema


def _notes(node: dict[str, Any]) -> dict[str, Any]:
    description, kind = node.get("description"), node.get("type")
    if not isinstance(description, str) or not isinstance(kind, str) or kind not in _KEYWORDS:
        return {}
    block = description.rpartition("\n\n")[2]
    if not (block.startswith("{") and block.endswith("}")):
        return {}
    inner = block[1:-1]
    starts = list(_NOTE.finditer(inner))
    if not starts or starts[0].start() != 0:
        return {}
    notes: dict[str, Any] = {}
    for here, after in zip(starts, [*starts[1:], None], strict=True):
        raw = inner[here.end() : after.start() if after else len(inner)]
        key = here.group(1)
        if key in _KEYWORDS[kind] and key not in node:
            notes[key] = _value(key, raw)
    return {k: v for k, v in notes.items() if v is not None}


def _value(key: str, raw: str) -> Any:
    """A note's value as the Python SDK writes it (`str()`) or the TypeScript SDK
    (`JSON.stringify`: strings quoted, `true`)."""
    if key in ("pattern", "format"):
        text = _unquoted(raw)
        return text if key == "format" or (text is not None and _compiles(text)) else None
    if key == "uniqueItems":
        return {"True": True, "true": True, "False": False, "false": False}.get(raw)
    if not _NUMBER.fullmatch(raw):
        return None
    number = float(raw)
    return int(number) if number.is_integer() else number


def _unquoted(raw: str) -> str | None:
    if not raw.startswith('"'):
        return raw
    try:
        text = json.loads(raw)
    except ValueError:
        return None
    return text if isinstance(text, str) else None


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True
