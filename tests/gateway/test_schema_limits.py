"""Schemas past the emulator's limits are refused at once, naming the field; those within
them are answered, without holding the (single-threaded) server.

An audit found a `pattern` of `^((a{1000}){1000}){1000}$` froze the server (a billion
characters built), sizes each within 4096 but multiplying along the nesting held it
17 s, and a schema nested a few hundred levels deep was a 500 (a RecursionError). The
HTTP clients here have a timeout, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import random
from typing import Any

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from emulator.gateway.pattern_values import pattern_cost, string_for_pattern
from emulator.gateway.schema_draws import MAX_CHARS, MAX_NODES
from emulator.gateway.schema_limits import MAX_CHARACTERS, MAX_DEPTH, MAX_VALUES
from emulator.gateway.schema_values import WORDS, SchemaProblem, check_schema, value_for
from emulator.testing import Tenant
from tests.helpers import assert_error

HI = [{"role": "user", "content": "hi"}]
TIMEOUT = 10  # seconds: each refusal takes milliseconds; a regression took minutes
BILLION = {"type": "string", "pattern": "^((a{1000}){1000}){1000}$"}
PRODUCT = {  # 4 x 4096 x 4096: 67 million characters, each size within 4096
    "type": "array",
    "minItems": 4,
    "items": {
        "type": "array",
        "minItems": 4096,
        "items": {"type": "string", "minLength": 4096},
    },
}


def _nested(levels: int, wrap: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        if wrap == "properties":
            schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
        else:
            schema = {"type": "array", "items": schema, "minItems": 1, "maxItems": 1}
    return schema


def _bare_arrays(levels: int) -> dict[str, Any]:
    """Arrays of arrays with no sizes: 1 to 3 items a level, as drawn."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return schema


def _refusals(schema: Any) -> list[tuple[str, dict[str, Any], str, str]]:
    """(path, body, code, param) of each place a schema is sent."""
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    text = {"format": {"type": "json_schema", "name": "x", "schema": schema}}
    chat_tool = {"type": "function", "function": {"name": "f", "parameters": schema}}
    responses_tool = {"type": "function", "name": "f", "parameters": schema}
    chat, responses = {"messages": HI}, {"input": "hi"}
    return [
        ("/chat/completions", {**chat, "response_format": fmt},
         "invalid_response_format", "response_format.json_schema.schema"),
        ("/chat/completions", {**chat, "tools": [chat_tool], "tool_choice": "required"},
         "invalid_tool_schema", "tools[0].function.parameters"),
        ("/responses", {**responses, "text": text},
         "invalid_response_format", "text.format.schema"),
        ("/responses", {**responses, "tools": [responses_tool]},
         "invalid_tool_schema", "tools[0].parameters"),
    ]  # fmt: skip


def _assert_refused(tenant: Tenant, schema: Any, *words: str) -> None:
    with tenant.client(timeout=TIMEOUT) as http:
        for path, body, code, param in _refusals(schema):
            reply = http.post(path, json={"model": "openai/gpt-4o", **body})
            error = assert_error(reply, 400, code, "invalid_request_error")
            assert error["param"] == param, (path, error)
            assert all(word in error["message"] for word in words), error["message"]


def test_a_pattern_of_a_billion_characters_is_refused_at_once(tenant: Tenant) -> None:
    _assert_refused(tenant, BILLION, "`pattern` at /", "1000000000 characters", "4096")


def test_a_pattern_that_repeats_nothing_millions_of_times_is_refused(tenant: Tenant) -> None:
    """`re` steps through each required repeat even of an empty group: validating any
    string against it would hold the server as long as drawing one."""
    schema = {"type": "object", "properties": {"k": {"type": "string", "pattern": "(?:){9999999}"}}}
    _assert_refused(tenant, schema, "/properties/k", "9999999")


def test_sizes_multiplying_along_the_nesting_are_refused_at_once(tenant: Tenant) -> None:
    _assert_refused(tenant, PRODUCT, "smallest value", "at /items ", f"{MAX_CHARACTERS} characters")


DEEP_CONST = {"const": json.loads("[" * 700 + "]" * 700)}  # a value, nested as deep


@pytest.mark.parametrize(
    "schema",
    [_nested(200, "properties"), _nested(300, "items"), DEEP_CONST],
    ids=["200-levels-of-properties", "300-levels-of-items", "700-levels-of-const"],
)
def test_a_schema_nested_too_deep_is_refused_not_an_internal_error(
    tenant: Tenant, schema: Any
) -> None:
    _assert_refused(tenant, schema, f"more than {MAX_DEPTH} levels deep")


def test_a_hundred_levels_of_items_get_the_depth_reason(tenant: Tenant) -> None:
    """It was refused as "no value could be generated", a reason that misled."""
    _assert_refused(tenant, _bare_arrays(100), "levels deep")


@pytest.mark.parametrize("schema", [_nested(31, "properties"), _nested(MAX_DEPTH - 1, "items")])
def test_schemas_at_the_depth_limit_are_answered_with_valid_values(
    tenant: Tenant, schema: Any
) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    body = {"model": "openai/gpt-4o", "messages": HI, "response_format": fmt}
    with tenant.client(timeout=TIMEOUT) as http:
        reply = http.post("/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
    _assert_valid(schema, json.loads(reply.json()["choices"][0]["message"]["content"]))


def test_arrays_of_arrays_without_sizes_are_drawn_small() -> None:
    """1 to 3 items a level multiply past the values one answer draws in ten levels;
    past half of them the rest is the smallest the schema allows."""
    schema = _bare_arrays(40)  # refused before as "no value could be generated"
    check_schema(schema)
    value = value_for(schema, random.Random(0))
    _assert_valid(schema, value)
    assert _size(value)[0] <= MAX_NODES


@pytest.mark.parametrize(
    ("pattern", "chars", "steps"),
    [
        (r"^[A-Z]{3}-[0-9]{2}$", 6, 6),
        ("^((a{1000}){1000}){1000}$", 10**9, 10**9),
        ("(?:){4000}", 0, 4000),
        ("^(a|b{5000})$", 1, 5000),
        (r"^(ab){3}\1$", 8, 8),
        ("^(?=(?:x?){50})y$", 1, 51),
        ("^[a-z]*$", 0, 0),
    ],
)
def test_pattern_cost_is_the_shortest_match_and_the_required_repeats(
    pattern: str, chars: int, steps: int
) -> None:
    assert pattern_cost(pattern) == (chars, steps)


def test_optional_repeats_stop_once_a_pattern_string_is_long() -> None:
    """Nested stars with many repeats allowed were millions of characters."""
    for seed in range(5):
        text = string_for_pattern("^([a-z]*)*$", random.Random(seed), WORDS, extra=8195)
        assert text is not None and 0 < len(text) < 20_000


def test_an_unchecked_pattern_too_costly_to_match_gives_no_string() -> None:
    assert string_for_pattern("(?:){200000}x", random.Random(0), WORDS) is None


HUGE = {"type": "array", "items": {"type": "string", "minLength": 4096}, "minItems": 4096}
HOLDS_HUGE = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "bb": HUGE},
    "required": ["a", "bb"],
}


@pytest.mark.parametrize(
    ("schema", "smallest"),
    [
        ({"type": "array", "items": HOLDS_HUGE, "minItems": 0}, []),
        ({"type": "object", "properties": {"big": HUGE}}, {}),
        (
            {"type": "object", "properties": {"n": {"const": 1}, "big": HUGE}, "required": ["n"]},
            {"n": 1},
        ),
        ({"type": "array", "items": HOLDS_HUGE, "minItems": 0, "uniqueItems": True}, []),
        ({"type": "object", "properties": {"big": HUGE}, "maxProperties": 1}, {}),
    ],
)
def test_an_optional_part_too_large_to_draw_is_left_out(schema: Any, smallest: Any) -> None:
    """Property tests found an array of at least no items, each item 16 MB, refused as
    having no value: every try drew an item, and ran out of room. `[]` is valid."""
    check_schema(schema)
    for seed in range(3):
        assert value_for(schema, random.Random(seed)) == smallest


def test_such_a_schema_is_answered_over_http(client: openai.OpenAI) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "big": HUGE}}
    tool: Any = {"type": "function", "function": {"name": "f", "parameters": schema}}
    completion = client.chat.completions.create(
        model="openai/gpt-4o",
        messages=[{"role": "user", "content": "hi"}],
        tools=[tool],
        tool_choice="required",
    )
    call: Any = (completion.choices[0].message.tool_calls or [])[0]
    assert set(json.loads(call.function.arguments)) == {"n"}


# Nested arrays and objects of strings: the smallest valid value's size is exact.

Sized = tuple[dict[str, Any], int, int]  # (schema, values, characters of the smallest value)


@st.composite
def _leaves(draw: st.DrawFn) -> Sized:
    length = draw(st.sampled_from([0, 1, 7, 300, 4096]))
    if draw(st.booleans()):
        return {"type": "string", "minLength": length}, 1, length
    return {"type": "string", "pattern": f"^[a-z]{{{length}}}$"}, 1, length


def _containers(children: st.SearchStrategy[Sized]) -> st.SearchStrategy[Sized]:
    arrays = st.builds(
        lambda child, low: (
            {"type": "array", "items": child[0], "minItems": low},
            1 + low * child[1],
            low * child[2],
        ),
        children,
        st.sampled_from([0, 1, 2, 5, 16, 64, 4096]),
    )
    objects = st.builds(
        lambda a, b: (
            {"type": "object", "properties": {"a": a[0], "bb": b[0]}, "required": ["a", "bb"]},
            1 + a[1] + b[1],
            len("a") + a[2] + len("bb") + b[2],
        ),
        children,
        children,
    )
    return st.one_of(arrays, objects)


@settings(max_examples=40, deadline=None)
@given(sized=st.recursive(_leaves(), _containers, max_leaves=4), seed=st.integers(0, 2**32))
def test_refused_exactly_when_the_smallest_value_is_too_large(sized: Sized, seed: int) -> None:
    schema, values, chars = sized
    if values > MAX_VALUES or chars > MAX_CHARACTERS:
        with pytest.raises(SchemaProblem, match="smallest value"):
            check_schema(schema)
        return
    check_schema(schema)
    value = value_for(schema, random.Random(seed))
    _assert_valid(schema, value)
    nodes, drawn_chars = _size(value)
    assert nodes <= MAX_NODES and drawn_chars <= MAX_CHARS


def _assert_valid(schema: Any, value: Any) -> None:
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert validator.is_valid(value)


def _size(value: Any) -> tuple[int, int]:
    """(values, characters of the strings) in a drawn value."""
    stack, nodes, chars = [value], 0, 0
    while stack:
        item = stack.pop()
        nodes += 1
        if isinstance(item, str):
            chars += len(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return nodes, chars
