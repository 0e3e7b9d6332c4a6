"""JSON mode (`response_format: {"type": "json_object"}`): the shape the prompt asks for.

A model in JSON mode answers in the shape its instructions describe. Clients
describe it with a JSON object in the prompt: the AI SDK, asked for an object
by a provider without structured outputs, writes the JSON schema into the
system message ("JSON schema: {...} You MUST answer with a JSON object that
matches the JSON schema above"), and people write an example ('Reply as
{"city": "...", "temperature": 0}'). `shape` finds the first such object in
the system and developer messages, then the last user message: a JSON schema
(an object with `properties`, or `"type": "object"`) is taken as it is (when
the emulator can draw for it), anything else as an example whose keys and
value types the answer keeps. No object: None, and the answer is the
generator's own JSON object.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from emulator.gateway.canonical import Message
from emulator.gateway.schema_values import SchemaProblem, check_schema

MAX_SCANNED = 100_000  # characters of a message looked through for an object
MAX_TRIES = 32  # opening braces tried a message: most are not JSON
_DECODER = json.JSONDecoder()


def shape(messages: tuple[Message, ...]) -> dict[str, Any] | None:
    """The JSON schema the answer should meet, from the prompt; None if it gives none."""
    instructions = [m for m in messages if m.role in ("system", "developer")]
    last_user = next((m for m in reversed(messages) if m.role == "user"), None)
    for message in (*instructions, *([last_user] if last_user else [])):
        found = _objects(message.text[:MAX_SCANNED])
        if found:
            return _schema_in(found)
    return None


def _objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects written in `text`, in order (those inside one not apart)."""
    found: list[dict[str, Any]] = []
    at = text.find("{")
    for _ in range(MAX_TRIES):
        if at < 0:
            break
        try:
            value, end = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):  # not JSON, or nested past the decoder's limit
            value, end = None, at + 1
        if isinstance(value, dict) and value:
            found.append(value)
        at = text.find("{", end)
    return found


def _schema_in(found: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last of `found` that is a JSON schema the emulator can draw for (LangChain's
    format instructions show an example schema first, then the real one), else the
    schema of the first as an example; None when there is neither (nested too deep)."""
    for schema in found[::-1]:
        if _looks_like_schema(schema) and _drawable(schema):
            return schema
    example: dict[str, Any] | None = None
    with contextlib.suppress(RecursionError):  # an example nested past Python's stack
        example = _example_schema(found[0])
    return example if example is not None and _drawable(example) else None


def _looks_like_schema(found: dict[str, Any]) -> bool:
    return isinstance(found.get("properties"), dict) or found.get("type") == "object"


def _drawable(schema: dict[str, Any]) -> bool:
    try:
        check_schema(schema)
    except (SchemaProblem, RecursionError):
        return False
    return True


def _example_schema(example: Any) -> dict[str, Any]:
    """A schema every value shaped as `example` meets: its keys all required, its values'
    types kept (a list's items shaped as its first)."""
    if isinstance(example, dict):
        properties = {str(k): _example_schema(v) for k, v in example.items()}
        return {"type": "object", "properties": properties, "required": list(properties)}
    if isinstance(example, list):
        return {"type": "array", "items": _example_schema(example[0]) if example else {}}
    if isinstance(example, bool):
        return {"type": "boolean"}
    if isinstance(example, int):
        return {"type": "integer"}
    if isinstance(example, float):
        return {"type": "number"}
    if example is None:
        return {"type": "null"}
    return {"type": "string"}
