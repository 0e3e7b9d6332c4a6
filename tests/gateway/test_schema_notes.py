"""Constraints an SDK wrote into descriptions are kept to (`schema_notes`)."""

from __future__ import annotations

import random
from typing import Any

import anthropic
import jsonschema
import pytest
from anthropic.lib._parse._transform import transform_schema
from pydantic import BaseModel, Field

from emulator.gateway.schema_notes import restored
from emulator.gateway.schema_values import value_for


class Record(BaseModel):
    code: str = Field(pattern=r"^[A-Z]{3}-\d{4}$", description="The record's code")
    tags: list[str] = Field(min_length=2, max_length=2)
    score: int = Field(ge=90, le=100)
    ratio: float = Field(gt=0, lt=1, multiple_of=0.25)
    name: str = Field(min_length=3, max_length=5)


def test_the_python_sdks_notes_are_read_back() -> None:
    sent = transform_schema(Record)  # what anthropic's messages.parse sends
    assert "pattern" not in sent["properties"]["code"]  # moved into the description
    kept = restored(sent)["properties"]
    assert kept["code"]["pattern"] == r"^[A-Z]{3}-\d{4}$"
    assert (kept["tags"]["minItems"], kept["tags"]["maxItems"]) == (2, 2)
    assert (kept["score"]["minimum"], kept["score"]["maximum"]) == (90, 100)
    assert kept["ratio"]["multipleOf"] == 0.25 and kept["ratio"]["exclusiveMaximum"] == 1
    assert (kept["name"]["minLength"], kept["name"]["maxLength"]) == (3, 5)


def test_the_typescript_sdks_notes_are_read_back() -> None:
    """`JSON.stringify` values: strings quoted and escaped, `true`."""
    sent = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": 'Code\n\n{pattern: "^[A-Z]{3}-\\\\d{4}$"}'},
            "ids": {"type": "array", "items": {}, "description": "{uniqueItems: true}"},
        },
    }
    kept = restored(sent)["properties"]
    assert kept["code"]["pattern"] == r"^[A-Z]{3}-\d{4}$" and kept["ids"]["uniqueItems"] is True


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string", "description": "plain"}}},
        {"type": "string", "description": "{not: a note}"},
        {"type": "integer", "description": "{pattern: x}"},  # not an integer's keyword
        {"type": "integer", "minimum": 5, "description": "{minimum: 90}"},  # its own wins
        {"type": "string", "description": "{pattern: ([}"},  # does not compile
        {"enum": ["{minimum: 1}"], "description": "{minimum: 1}"},  # no type: no notes
    ],
)
def test_what_is_no_note_changes_nothing(schema: dict[str, Any]) -> None:
    assert restored(schema) is schema


def test_notes_that_cannot_be_met_leave_the_schema_as_sent() -> None:
    schema = {"type": "string", "maxLength": 2, "description": "{minLength: 9}"}
    value = value_for(schema, random.Random(1))
    assert isinstance(value, str) and len(value) <= 2


def test_messages_parse_meets_the_constraints_it_moved(claude: anthropic.Anthropic) -> None:
    """The exploratory run's case: three of three failed validation before."""
    for topic in ("make a record", "another one, for the archive", "a record of a cat"):
        parsed = claude.messages.parse(
            model="anthropic/claude-sonnet-4",
            max_tokens=500,
            messages=[{"role": "user", "content": topic}],
            output_format=Record,
        )
        record = parsed.parsed_output
        assert isinstance(record, Record)
        jsonschema.validate(record.model_dump(), Record.model_json_schema())
