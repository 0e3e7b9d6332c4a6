"""JSON mode answers in the shape the prompt shows: a JSON schema written into the
instructions (as the AI SDK's `injectJsonInstruction` writes it), or an example."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from jsonschema import Draft202012Validator

from emulator.gateway.canonical import Message
from emulator.gateway.json_mode import shape

RECIPE = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "servings": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["title", "servings", "tags"],
    "additionalProperties": False,
}
INJECTED = (  # provider-utils' words
    f"JSON schema:\n{json.dumps(RECIPE)}\n"
    "You MUST answer with a JSON object that matches the JSON schema above."
)


def said(*messages: tuple[str, str]) -> tuple[Message, ...]:
    return tuple(Message(role=role, text=text) for role, text in messages)


def test_a_schema_in_the_instructions_is_taken_as_it_is() -> None:
    assert shape(said(("system", INJECTED), ("user", "A quick dinner"))) == RECIPE


def test_an_example_gives_its_keys_and_types() -> None:
    example = 'Reply only as {"city": "...", "temperature": 0, "rain": false, "hours": [1.5]}'
    assert shape(said(("user", f"Weather in Lima? {example}"))) == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "temperature": {"type": "integer"},
            "rain": {"type": "boolean"},
            "hours": {"type": "array", "items": {"type": "number"}},
        },
        "required": ["city", "temperature", "rain", "hours"],
    }


@pytest.mark.parametrize(
    "messages",
    [
        said(("user", "Answer in JSON please")),  # no object at all
        said(("user", "Use {braces} and {} freely")),  # braces, but no JSON object
        said(("user", '{"a":' * 3000 + "1" + "}" * 3000)),  # nested past what is drawn
        said(("assistant", '{"earlier": "answer"}'), ("user", "Again, in JSON")),
    ],
)
def test_no_shape_leaves_the_generators_own_object(messages: tuple[Message, ...]) -> None:
    assert shape(messages) is None


def test_the_instructions_come_before_the_user_message() -> None:
    found = shape(said(("system", 'Answer as {"verdict": "yes"}'), ("user", '{"x": 1}')))
    assert found is not None and set(found["properties"]) == {"verdict"}


def ask(client: openai.OpenAI, messages: list[dict[str, Any]]) -> Any:
    answer = client.chat.completions.create(
        model="openai/gpt-4o-mini", messages=messages, response_format={"type": "json_object"}
    )
    return json.loads(answer.choices[0].message.content or "")


def test_the_answer_meets_the_shape_and_takes_what_was_asked(client: openai.OpenAI) -> None:
    recipe = ask(
        client,
        [{"role": "system", "content": INJECTED}, {"role": "user", "content": "Dinner for 4"}],
    )
    Draft202012Validator(RECIPE).validate(recipe)
    assert recipe["servings"] == 4
    weather = ask(
        client,
        [
            {"role": "system", "content": 'Reply as JSON: {"city": "...", "temperature": 0}'},
            {"role": "user", "content": "Weather in Lima today?"},
        ],
    )
    assert set(weather) == {"city", "temperature"} and weather["city"] == "Lima"
    assert isinstance(weather["temperature"], int)
    # No shape in the prompt: the generator's own object, as before.
    own = ask(client, [{"role": "user", "content": "Tell me about Lima, in JSON"}])
    assert set(own) == {"answer", "topic", "confidence"}


def test_responses_json_mode_too(client: openai.OpenAI) -> None:
    made = client.responses.create(
        model="anthropic/claude-sonnet-4",  # a messages provider: translated both ways
        instructions=INJECTED,
        input="A recipe for 2",
        text={"format": {"type": "json_object"}},
    )
    recipe = json.loads(made.output_text)
    Draft202012Validator(RECIPE).validate(recipe)
    assert recipe["servings"] == 2


def test_langchains_format_instructions_give_their_last_schema(client: openai.OpenAI) -> None:
    from langchain_core.output_parsers import PydanticOutputParser
    from pydantic import BaseModel

    class Stay(BaseModel):
        city: str
        nights: int

    parser = PydanticOutputParser(pydantic_object=Stay)
    # Its instructions show an example schema ({"foo": ...}) first, then Stay's.
    instructions = parser.get_format_instructions()
    found = shape(said(("system", instructions)))
    assert found is not None and found["required"] == ["city", "nights"]
    answer = client.chat.completions.create(
        model="openai/gpt-4o-mini",
        messages=[
            {"role": "system", "content": instructions},
            {"role": "user", "content": "Three nights in Kyoto, please"},
        ],
        response_format={"type": "json_object"},
    )
    assert parser.parse(answer.choices[0].message.content or "") == Stay(city="Kyoto", nights=3)
