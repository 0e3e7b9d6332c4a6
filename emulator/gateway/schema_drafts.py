"""Schemas of the drafts before 2020-12, as clients still send them.

zod-to-json-schema (the AI SDK, `generateObject`) writes draft-07 and names it
in `$schema`; older tools write draft-04. A schema is checked, and its values
validated, by the validator of the draft its `$schema` names (2020-12 when it
names none or one jsonschema does not know). Values are drawn in 2020-12's
words only (`schema_draws`), so `in_2020_words` says the same constraints so:
`items` as a list is `prefixItems` (and `additionalItems` is `items`),
`dependencies` is `dependentRequired` or `dependentSchemas`, and draft-04's
boolean `exclusiveMinimum`/`exclusiveMaximum` bound the number themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.gateway.pattern_search import timed_jsonschema

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

# Keywords whose value is a schema, a list of schemas, or a map of names to schemas.
_ONE = ("additionalProperties", "contains", "not", "if", "then", "else", "propertyNames")
_LIST = ("allOf", "anyOf", "oneOf")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def validator_class(schema: Any) -> type[Validator]:
    """The validator of the draft `schema` names in `$schema` (2020-12 by default)."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    timed_jsonschema()  # its `pattern` checks run under a timeout
    if not isinstance(schema, dict) or not isinstance(schema.get("$schema"), str):
        return Draft202012Validator
    return validator_for(schema, default=Draft202012Validator)


def in_2020_words(schema: Any) -> Any:
    """`schema`, of the draft `$schema` names, with the same constraints in 2020-12's
    keywords; a 2020-12 schema as it is. For drawing values, not for validating them."""
    from jsonschema import Draft202012Validator

    if validator_class(schema) is Draft202012Validator:
        return schema
    converted = _convert(schema)
    converted.pop("$schema", None)  # now 2020-12: resolved as such
    return converted


def _convert(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in _ONE:
        if key in out:
            out[key] = _convert(out[key])
    for key in _LIST:
        if isinstance(out.get(key), list):
            out[key] = [_convert(part) for part in out[key]]
    for key in _MAP:
        if isinstance(out.get(key), dict):
            out[key] = {name: _convert(part) for name, part in out[key].items()}
    _tuple(out)
    _dependencies(out)
    _draft4_bounds(out)
    return out


def _tuple(out: dict[str, Any]) -> None:
    items, rest = out.get("items"), out.pop("additionalItems", None)
    if isinstance(items, list):
        out["prefixItems"] = [_convert(part) for part in items]
        if rest is None:
            del out["items"]  # past the tuple: anything
        else:
            out["items"] = _convert(rest)
    elif items is not None:
        out["items"] = _convert(items)  # `additionalItems` beside one schema is ignored


def _dependencies(out: dict[str, Any]) -> None:
    dependencies = out.pop("dependencies", None)
    if not isinstance(dependencies, dict):
        return
    for name, needs in dependencies.items():
        kind = "dependentRequired" if isinstance(needs, list) else "dependentSchemas"
        out.setdefault(kind, {})[name] = needs if isinstance(needs, list) else _convert(needs)


def _draft4_bounds(out: dict[str, Any]) -> None:
    for exclusive, inclusive in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = out.get(exclusive)
        if isinstance(flag, bool):
            del out[exclusive]
            if flag and inclusive in out:
                out[exclusive] = out.pop(inclusive)
