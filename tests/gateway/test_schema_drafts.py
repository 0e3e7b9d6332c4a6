"""Schemas of earlier drafts (`$schema`) are checked and validated by their own draft,
and their values drawn from the same constraints in 2020-12's words."""

from __future__ import annotations

import random
from typing import Any

import pytest
from jsonschema import Draft4Validator, Draft7Validator, Draft202012Validator

from emulator.gateway.schema_drafts import in_2020_words, validator_class
from emulator.gateway.schema_values import SchemaProblem, check_schema, value_for

DRAFT_7 = "http://json-schema.org/draft-07/schema#"
DRAFT_4 = "http://json-schema.org/draft-04/schema#"

SCHEMAS = [
    # zod's tuple (the AI SDK's generateObject), closed and open-ended
    {
        "$schema": DRAFT_7,
        "type": "array",
        "items": [{"type": "integer", "exclusiveMinimum": 0}, {"enum": ["a", "b"]}],
        "additionalItems": False,
        "minItems": 2,
        "maxItems": 2,
    },
    {
        "$schema": DRAFT_7,
        "type": "array",
        "items": [{"type": "integer"}],
        "additionalItems": {"type": "boolean"},
        "minItems": 3,
    },
    {
        "$schema": DRAFT_7,
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["a"],
        "dependencies": {"a": ["b"]},
        "additionalProperties": False,
    },
    {
        "$schema": DRAFT_7,
        "definitions": {"Small": {"type": "integer", "minimum": 3, "maximum": 4}},
        "type": "array",
        "items": {"$ref": "#/definitions/Small"},
        "minItems": 2,
    },
    {"$schema": DRAFT_4, "type": "number", "minimum": 5, "exclusiveMinimum": True, "maximum": 6},
    {"$schema": DRAFT_4, "type": "integer", "maximum": 10, "exclusiveMaximum": False},
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_values_of_earlier_drafts_validate_by_their_draft(schema: dict[str, Any]) -> None:
    check_schema(schema)
    validator = validator_class(schema)(schema)
    for seed in range(5):
        value = value_for(schema, random.Random(seed))
        assert validator.is_valid(value), value


def test_the_draft_is_the_one_schema_names() -> None:
    assert validator_class({"$schema": DRAFT_7}) is Draft7Validator
    assert validator_class({"$schema": DRAFT_4}) is Draft4Validator
    for other in ({}, {"$schema": "https://example.com/mine"}, {"$schema": 7}, True):
        assert validator_class(other) is Draft202012Validator


def test_a_2020_schema_is_drawn_as_sent() -> None:
    schema = {"type": "array", "prefixItems": [{"type": "string"}], "items": False}
    assert in_2020_words(schema) is schema


def test_in_2020_words() -> None:
    tuple_ = {"$schema": DRAFT_7, "items": [{"type": "string"}], "additionalItems": False}
    assert in_2020_words(tuple_) == {"prefixItems": [{"type": "string"}], "items": False}
    draft4 = {"$schema": DRAFT_4, "minimum": 1, "exclusiveMinimum": True}
    assert in_2020_words(draft4) == {"exclusiveMinimum": 1}
    nested = {"$schema": DRAFT_7, "properties": {"p": {"dependencies": {"x": {"required": ["y"]}}}}}
    assert in_2020_words(nested) == {
        "properties": {"p": {"dependentSchemas": {"x": {"required": ["y"]}}}}
    }


def test_earlier_drafts_are_held_to_their_own_meta_schema() -> None:
    # A list of schemas under `items` is draft-07; under 2020-12 it is not a schema.
    with pytest.raises(SchemaProblem) as refused:
        check_schema({"type": "array", "items": [{"type": "string"}]})
    assert refused.value.invalid
    with pytest.raises(SchemaProblem) as contradictory:
        check_schema({"$schema": DRAFT_4, "minimum": 5, "maximum": 5, "exclusiveMinimum": True})
    assert not contradictory.value.invalid
