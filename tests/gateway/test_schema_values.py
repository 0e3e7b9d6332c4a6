"""Values drawn for JSON schemas validate against them; schemas with no valid value are refused."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from emulator.gateway.pattern_values import string_for_pattern
from emulator.gateway.schema_values import WORDS, SchemaProblem, check_schema, value_for
from emulator.testing import Tenant
from tests.helpers import assert_error

TREE = {
    "type": "object",
    "properties": {"t": {"$ref": "#/$defs/Tree"}},
    "required": ["t"],
    "$defs": {
        "Tree": {
            "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
            "required": ["kids"],
        }
    },
}
LINKED = {
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
            },
            "required": ["n", "next"],
        }
    },
    "$ref": "#/$defs/Node",
}
SATISFIABLE: list[Any] = [
    TREE,
    LINKED,
    {"type": "object", "properties": {"child": {"$ref": "#"}, "v": {"type": "integer"}}},
    {
        "$defs": {
            "J": {
                "anyOf": [
                    {"type": "integer"},
                    {"type": "array", "items": {"$ref": "#/$defs/J"}},
                    {"type": "object", "additionalProperties": {"$ref": "#/$defs/J"}},
                ]
            }
        },
        "$ref": "#/$defs/J",
    },
    {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"},
    {"type": "string", "pattern": "^[0-9]{4}$"},
    {"type": "string", "pattern": "^(foo|bar)+baz?$"},
    {"type": "string", "pattern": r"^\d{3}-\d{3}-\d{4}$"},
    {"type": "string", "pattern": r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$"},
    {"type": "string", "pattern": r"^(?=.*\d)[a-z\d]{6,10}$"},
    {"type": "string", "pattern": r"^(\w)\1$"},
    {"type": "string", "pattern": "abc"},
    {"type": "string", "pattern": "^[a-z]+$", "minLength": 5, "maxLength": 7},
    *({"type": "string", "format": f} for f in ("date-time", "date", "time", "email", "uuid")),
    *({"type": "string", "format": f} for f in ("uri", "ipv4", "ipv6", "hostname", "duration")),
    {"type": "string", "minLength": 20, "maxLength": 25},
    {"type": "string", "maxLength": 0},
    {"type": "integer", "multipleOf": 7},
    {"type": "number", "multipleOf": 0.1},
    {"type": "number", "multipleOf": 0.25, "minimum": 1, "maximum": 2},
    {"type": "integer", "multipleOf": 2.5},
    {"type": "integer", "minimum": 1000},
    {"type": "integer", "maximum": -50},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 2},
    {"type": "number", "minimum": 0.5, "maximum": 0.5},
    {"minimum": 5, "maximum": 9},
    {
        "type": "array",
        "items": {"type": "integer", "minimum": 1, "maximum": 3},
        "uniqueItems": True,
        "minItems": 3,
    },
    {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True, "minItems": 2},
    {"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True, "minItems": 3},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
    {"type": "array", "prefixItems": [{"const": 1}], "minItems": 3, "items": {"type": "null"}},
    {"type": "array", "contains": {"const": "x"}, "items": {"type": "string"}},
    {"type": "array", "contains": {"type": "integer"}, "minContains": 2, "maxItems": 3},
    {"type": "array", "maxItems": 0},
    {"not": {"type": "string"}},
    {"not": {"enum": [1, 2]}, "type": "integer", "minimum": 1, "maximum": 3},
    {"type": "string", "not": {"const": "amber harbor"}},
    {"type": "object", "minProperties": 2},
    {"type": "object", "properties": {k: {"type": "string"} for k in "abc"}, "maxProperties": 1},
    {
        "type": "object",
        "additionalProperties": False,
        "patternProperties": {"^x_[a-z]+$": {"type": "integer"}},
        "minProperties": 2,
    },
    {"type": "object", "propertyNames": {"pattern": "^[a-z]{3}$"}, "minProperties": 3},
    {"type": "object", "additionalProperties": {"type": "integer"}, "required": ["z"]},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "dependentRequired": {"a": ["b"]}},
    {"const": {"a": [1, 2]}},
    {"enum": ["x", 3, None]},
    {"enum": [1, "a"], "type": "string"},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 2}]},
    {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
        "additionalProperties": False,
        "maxProperties": 1,
    },
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"a": {"minimum": 50}}},
        ]
    },
    {"allOf": [{"type": "integer", "minimum": 3}, {"maximum": 4}, {"multipleOf": 2}]},
    {"type": ["string", "null"]},
    {"type": ["null", "integer"], "minimum": 3},
    {"$ref": "#/$defs/X", "$defs": {"X": {"type": "string"}}, "maxLength": 3},
    True,
    {},
    {"type": "object"},
]
UNSATISFIABLE: list[Any] = [
    {"minimum": 5, "maximum": 3},
    {"type": "string", "minLength": 5, "maxLength": 2},
    {"type": "number", "exclusiveMinimum": 1, "maximum": 1},
    {"type": "string", "pattern": "^a$", "minLength": 3},
    {"type": "integer", "enum": ["a"]},
    {"type": "integer", "minimum": 1.2, "maximum": 1.8},
    {"type": "array", "minItems": 100_000},
    {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True, "minItems": 3},
    {"allOf": [{"type": "string"}, {"type": "integer"}]},
    {"type": "object", "properties": {"next": {"$ref": "#"}}, "required": ["next"]},
    {"$ref": "#/$defs/missing"},
    {"$ref": "https://example.com/elsewhere.json"},
    {"not": {}},
    False,
]


def assert_valid(schema: Any, value: Any) -> None:
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = [e.message for e in validator.iter_errors(value)]
    assert not errors, (schema, value, errors)


@pytest.mark.parametrize("schema", SATISFIABLE, ids=lambda s: json.dumps(s)[:60])
def test_drawn_values_validate(schema: Any) -> None:
    check_schema(schema)
    for seed in range(12):
        assert_valid(schema, value_for(schema, random.Random(seed)))
    assert value_for(schema, random.Random(3)) == value_for(schema, random.Random(3))


@pytest.mark.parametrize("schema", UNSATISFIABLE, ids=lambda s: json.dumps(s)[:60])
def test_unsatisfiable_schemas_are_refused_with_a_reason(schema: Any) -> None:
    with pytest.raises(SchemaProblem) as refused:
        check_schema(schema)
    assert not refused.value.invalid and refused.value.message
    try:  # contradictory bounds are refused even where, say, a string would pass
        value = value_for(schema, random.Random(0))
    except SchemaProblem:
        return
    assert_valid(schema, value)


@pytest.mark.parametrize("schema", [{"type": "nonsense"}, {"type": "string", "pattern": "("}])
def test_schemas_that_are_not_json_schemas_are_refused_as_invalid(schema: Any) -> None:
    with pytest.raises(SchemaProblem) as refused:
        check_schema(schema)
    assert refused.value.invalid


def test_recursion_stops_at_the_smallest_value() -> None:
    tree = value_for(TREE, random.Random(0))
    assert all(kid == {"kids": []} for kid in tree["t"]["kids"])
    assert value_for(LINKED, random.Random(0))["next"]["next"] is None


def test_values_valid_before_are_drawn_as_before() -> None:
    """The plain pass keeps earlier answers; keywords it ignored no longer give junk."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}}}
    assert value_for(schema, random.Random(0)) == {"a": "beacon canyon", "n": 6}
    patterned = {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"}
    assert value_for(patterned, random.Random(0)) != "pepper harbor"


@pytest.mark.parametrize(
    "pattern", [r"^[A-Z]{3}-[0-9]{2}$", r"^(ab|cd){2,3}x?$", r"^\w+@\w+\.com$"]
)
def test_patterns_are_built_from_their_parts(pattern: str) -> None:
    import re

    for seed in range(20):
        text = string_for_pattern(pattern, random.Random(seed), WORDS)
        assert text is not None and re.search(pattern, text)


# Satisfiable schemas built from parts, for hypothesis.
_PATTERNS = [
    "^[0-9]{4}$",
    "^[A-Z][a-z]{2,5}$",
    "^(red|green|blue)-[0-9]+$",
    "x",
    r"^\d+(\.\d{2})?$",
]
_FORMATS = ["date-time", "date", "email", "uuid", "uri", "ipv4"]
_scalar = st.one_of(st.integers(-5, 5), st.booleans(), st.none(), st.sampled_from(["a", "b"]))


@st.composite
def _strings(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    choice = draw(st.sampled_from(["plain", "pattern", "format"]))
    if choice == "pattern":
        schema["pattern"] = draw(st.sampled_from(_PATTERNS))
    elif choice == "format":
        schema["format"] = draw(st.sampled_from(_FORMATS))
    else:
        low = draw(st.integers(0, 12))
        schema |= {"minLength": low, "maxLength": low + draw(st.integers(0, 20))}
    return schema


@st.composite
def _numbers(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["integer", "number"]))
    low = draw(st.integers(-50, 50))
    schema: dict[str, Any] = {
        "type": kind,
        "minimum": low,
        "maximum": low + draw(st.integers(30, 99)),
    }
    if draw(st.booleans()):
        schema["multipleOf"] = draw(
            st.sampled_from([2, 3, 7] if kind == "integer" else [0.5, 0.25, 0.1, 3])
        )
    if draw(st.booleans()):
        schema["exclusiveMinimum"] = schema.pop("minimum")
    return schema


_leaves = st.one_of(
    _strings(),
    _numbers(),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.lists(_scalar, min_size=1, max_size=4, unique=True).map(lambda e: {"enum": e}),
    _scalar.map(lambda c: {"const": c}),
    st.sampled_from(["integer", "boolean", "null", "object"]).map(
        lambda t: {"type": "string", "not": {"type": t}}
    ),
)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    names = st.sampled_from(["id", "name", "city", "tags", "when", "n"])
    objects = st.builds(
        lambda props, closed, data: {
            "type": "object",
            "properties": props,
            "required": sorted(props)[: data.draw(st.integers(0, len(props)))],
            **({"additionalProperties": False} if closed else {}),
            "minProperties": data.draw(st.integers(0, len(props) if closed else len(props) + 2)),
        },
        st.dictionaries(names, children, max_size=4),
        st.booleans(),
        st.data(),
    )
    unique_items = st.one_of(st.just({"type": "string"}), _numbers())
    arrays = st.one_of(
        st.builds(
            lambda items, low, more: {
                "type": "array",
                "items": items,
                "minItems": low,
                "maxItems": low + more,
            },
            children,
            st.integers(0, 3),
            st.integers(0, 3),
        ),
        st.builds(
            lambda items, low: {
                "type": "array",
                "items": items,
                "minItems": low,
                "uniqueItems": True,
            },
            unique_items,
            st.integers(0, 3),
        ),
        st.builds(
            lambda prefix: {"type": "array", "prefixItems": prefix, "items": False},
            st.lists(children, min_size=1, max_size=3),
        ),
    )
    mixed = st.builds(
        lambda a, b: {"anyOf": [a, b]},
        children,
        children,
    )
    exclusive = st.builds(
        lambda s, o: {"oneOf": [s, {"type": "object", "properties": o}]},
        _strings(),
        st.dictionaries(names, children, max_size=2),
    )
    return st.one_of(objects, arrays, mixed, exclusive)


_schemas = st.recursive(_leaves, _containers, max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(schema=_schemas, seed=st.integers(0, 2**32))
def test_any_satisfiable_schema_gets_a_valid_value(schema: Any, seed: int) -> None:
    check_schema(schema)
    assert_valid(schema, value_for(schema, random.Random(seed)))


# Through HTTP: the refusals are 422s in the error envelope, recursion is answered.

HI = [{"role": "user", "content": "hi"}]


def _chat_format(schema: Any) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}


def _tool(schema: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "f", "parameters": schema}}


@pytest.mark.parametrize("schema", [{"type": "nonsense"}, {"minimum": 5, "maximum": 3}])
def test_bad_output_schemas_are_400_on_both_endpoints(tenant: Tenant, schema: Any) -> None:
    with tenant.client() as http:
        chat = {"model": "openai/gpt-4o", "messages": HI, "response_format": _chat_format(schema)}
        error = assert_error(
            http.post("/chat/completions", json=chat), 400, "invalid_response_format"
        )
        assert error["param"] == "response_format.json_schema.schema"
        text = {"format": {"type": "json_schema", "name": "x", "schema": schema}}
        body = {"model": "openai/gpt-4o", "input": "hi", "text": text}
        error = assert_error(http.post("/responses", json=body), 400, "invalid_response_format")
        assert error["param"] == "text.format.schema"
        tools = {"model": "openai/gpt-4o", "messages": HI, "tools": [_tool(schema)]}
        error = assert_error(http.post("/chat/completions", json=tools), 400, "invalid_tool_schema")
        assert error["param"] == "tools[0].function.parameters"


def test_a_responses_json_schema_format_without_schema_is_400(tenant: Tenant) -> None:
    with tenant.client() as http:
        body = {
            "model": "openai/gpt-4o",
            "input": "hi",
            "text": {"format": {"type": "json_schema", "name": "x"}},
        }
        error = assert_error(http.post("/responses", json=body), 400, "invalid_request")
        assert error["param"] == "text.format.schema"


def test_a_recursive_schema_is_answered_with_a_valid_value(tenant: Tenant) -> None:
    with tenant.client() as http:
        chat = {"model": "openai/gpt-4o", "messages": HI, "response_format": _chat_format(TREE)}
        reply = http.post("/chat/completions", json=chat)
        assert reply.status_code == 200, reply.text
        assert_valid(TREE, json.loads(reply.json()["choices"][0]["message"]["content"]))
        text = {"format": {"type": "json_schema", "name": "x", "schema": TREE}}
        reply = http.post(
            "/responses", json={"model": "openai/gpt-4o", "input": "hi", "text": text}
        )
        assert reply.status_code == 200, reply.text
        assert_valid(TREE, json.loads(reply.json()["output"][0]["content"][0]["text"]))
        assert_valid(TREE, _tool_arguments(http, TREE))


def test_tool_arguments_honour_pattern(tenant: Tenant) -> None:
    pin = {"type": "string", "pattern": "^[0-9]{4}$"}
    schema = {"type": "object", "properties": {"pin": pin}, "required": ["pin"]}
    with tenant.client() as http:
        assert_valid(schema, _tool_arguments(http, schema))


def _tool_arguments(http: Any, schema: dict[str, Any]) -> Any:
    """The arguments of the tool call a chat request that requires one gets."""
    body = {"model": "openai/gpt-4o", "messages": HI, "tools": [_tool(schema)]}
    reply = http.post("/chat/completions", json={**body, "tool_choice": "required"})
    assert reply.status_code == 200, reply.text
    call = reply.json()["choices"][0]["message"]["tool_calls"][0]
    return json.loads(call["function"]["arguments"])


SAFE = 2**53 - 1  # zod writes +-SAFE as the bounds of every `.int()`
ZOD_INTEGERS = {
    "type": "object",
    "properties": {
        "plain": {"type": "integer", "minimum": -SAFE, "maximum": SAFE},
        "at_least_2": {"type": "integer", "minimum": 2, "maximum": SAFE},
        "positive": {"type": "integer", "exclusiveMinimum": 0, "maximum": SAFE},
        "at_most_7": {"type": "integer", "minimum": -SAFE, "maximum": 7},
        "below_minus_5": {"type": "integer", "minimum": -SAFE, "maximum": -5},
        "step_5": {"type": "integer", "minimum": -SAFE, "maximum": SAFE, "multipleOf": 5},
    },
    "required": ["plain", "at_least_2", "positive", "at_most_7", "below_minus_5", "step_5"],
    "additionalProperties": False,
}


def test_zod_integer_bounds_are_the_type_not_a_range() -> None:
    """`z.number().int()` gets a number a model would write, not one near 9e15."""
    for seed in range(12):
        value = value_for(ZOD_INTEGERS, random.Random(seed))
        assert_valid(ZOD_INTEGERS, value)
        assert 1 <= value["plain"] <= 100 and 2 <= value["at_least_2"] <= 100
        assert 1 <= value["positive"] <= 100 and -93 <= value["at_most_7"] <= 7
        assert -105 <= value["below_minus_5"] <= -5 and abs(value["step_5"]) <= 600


LARGE_BOUNDS = {
    "type": "object",
    "properties": {
        "nanoseconds": {"type": "integer", "minimum": 10**16},
        "far_below": {"type": "number", "maximum": -1e16},
        "after": {"type": "integer", "exclusiveMinimum": 2**60},
    },
    "required": ["nanoseconds", "far_below", "after"],
    "additionalProperties": False,
}


def test_a_large_bound_on_the_far_side_of_zero_is_a_real_one(tenant: Tenant) -> None:
    """Only the side zod's type limit sits on is ignored: a minimum of 1e16 holds."""
    for seed in range(6):
        assert_valid(LARGE_BOUNDS, value_for(LARGE_BOUNDS, random.Random(seed)))
    with tenant.client() as http:
        assert_valid(LARGE_BOUNDS, _tool_arguments(http, LARGE_BOUNDS))


def test_structured_output_with_zod_integers_over_http(tenant: Tenant) -> None:
    body = {"model": "openai/gpt-4o", "messages": HI, "response_format": _chat_format(ZOD_INTEGERS)}
    with tenant.client() as http:
        reply = http.post("/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
    value = json.loads(reply.json()["choices"][0]["message"]["content"])
    assert_valid(ZOD_INTEGERS, value)
    assert all(abs(number) <= 600 for number in value.values())


def test_tool_names_are_unique_and_errors_name_the_field_as_each_format_writes_it(
    tenant: Tenant,
) -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    twice = [_tool(schema), _tool(schema)]
    responses_tool = {"type": "function", "name": twice[0]["function"]["name"]}
    responses_twice = [{**responses_tool, "parameters": schema}] * 2
    bad = {**responses_tool, "parameters": {"type": "nonsense"}}
    cases = [
        ("/chat/completions", {"messages": HI, "tools": twice}, "tools[1].function.name"),
        ("/responses", {"input": "hi", "tools": responses_twice}, "tools[1].name"),
        ("/responses/input_tokens", {"input": "hi", "tools": responses_twice}, "tools[1].name"),
        ("/ai-gateway/quote", {"messages": HI, "tools": twice}, "tools[1].function.name"),
        ("/ai-gateway/quote", {"input": "hi", "tools": responses_twice}, "tools[1].name"),
    ]
    with tenant.client() as http:
        for path, body, param in cases:
            sent = {"model": "openai/gpt-4o", **body}
            error = assert_error(http.post(path, json=sent), 400, "duplicate_tool_name")
            assert error["param"] == param, path
            assert "unique" in error["message"]
        body = {"model": "openai/gpt-4o", "input": "hi", "tools": [bad]}
        error = assert_error(http.post("/responses", json=body), 400, "invalid_tool_schema")
        assert error["param"] == "tools[0].parameters"
        usage = http.get("/ai-gateway/usage").json()["data"]
    assert usage == []  # refused before any route: nothing served, held or charged


def test_a_string_of_two_words_never_says_one_twice() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    pairs = [value_for(schema, random.Random(seed))["x"].split() for seed in range(300)]
    assert all(len(pair) == 2 and pair[0] != pair[1] for pair in pairs)
