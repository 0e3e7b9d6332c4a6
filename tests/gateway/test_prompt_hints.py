"""Values of tool calls and structured answers are taken from what the user said
(`prompt_hints`), where the schema accepts them, and nothing else moves."""

from __future__ import annotations

import datetime
import json
import random
from typing import Any

import anthropic
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from emulator.gateway.prompt_facts import Facts
from emulator.gateway.schema_values import value_for
from tests.gateway.test_prompt_facts import STRING, facts, obj


def test_places_and_people_take_the_names_in_order() -> None:
    schema = obj(origin=STRING, destination=STRING, passengerName=STRING, seat=STRING)
    said = facts("Book a flight from New York to San Francisco for Ada Lovelace")
    value = value_for(schema, random.Random(1), said)
    assert value["origin"] == "New York" and value["destination"] == "San Francisco"
    assert value["passengerName"] == "Ada Lovelace"
    assert value["seat"] == value_for(schema, random.Random(1))["seat"]  # no hint: drawn


def test_each_kind_of_property_takes_its_own_fact() -> None:
    schema = obj(
        query=STRING,
        keywords={"type": "array", "items": STRING, "minItems": 2, "maxItems": 2},
        summary=STRING,
        contact_email=STRING,
        website={"type": "string", "format": "uri"},
        unit={"type": "string", "enum": ["celsius", "fahrenheit"]},
        count={"type": "integer"},
        file_name=STRING,  # a name, but not a person's: no hint
    )
    said = facts(
        "Find Lisbon hotels near https://example.com/map for ada@example.com, 3 rooms, "
        "prices in Fahrenheit"
    )
    value = value_for(schema, random.Random(7), said)
    assert value["query"] == said.message
    assert value["keywords"] == list(said.topics[:2])
    assert value["summary"].startswith("prose ")
    assert value["contact_email"] == "ada@example.com"
    assert value["website"] == "https://example.com/map"
    assert value["unit"] == "fahrenheit"
    assert value["count"] == 3
    assert value["file_name"] == value_for(schema, random.Random(7))["file_name"]
    quoted = value_for(schema, random.Random(7), facts("Search for 'rust async'"))
    assert quoted["query"] == "rust async"


def test_a_hint_the_schema_refuses_leaves_the_value_drawn() -> None:
    schema = obj(
        city={"type": "string", "maxLength": 6},
        age={"type": "integer", "minimum": 18},
        tag={"type": "string", "pattern": "^[0-9]+$"},
    )
    said = facts("Meet San Francisco people, then Bergen ones, aged 7 or 30, about cats")
    value = value_for(schema, random.Random(3), said)
    assert value["city"] == "Bergen"  # San Francisco is too long: the next name
    assert value["age"] == 30  # 7 is below the minimum: the next number
    assert value["tag"].isdigit()  # a topic word does not match the pattern
    Draft202012Validator(schema).validate(value)


SCHEMAS = [
    obj(city=STRING, name=STRING, note={"type": "string", "maxLength": 12}),
    obj(a={"type": "number", "maximum": 10}, b={"type": "integer", "multipleOf": 5}),
    obj(q={"type": "string", "minLength": 5, "maxLength": 40}, mode={"enum": ["fast", "slow"]}),
    obj(places={"type": "array", "items": {"type": "string", "format": "email"}}),
]
WORDS = st.sampled_from(
    ["Paris", "New York", "fast", "slow", "7", "12.5", "'x y'", "a@b.io", "in", "the", "?"]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, max_size=12).map(" ".join), st.integers(0, 2**32), st.sampled_from(SCHEMAS))
def test_values_told_still_validate_and_leave_the_rest_as_drawn(
    text: str, seed: int, schema: dict[str, Any]
) -> None:
    told = value_for(schema, random.Random(seed), facts(text))
    Draft202012Validator(schema).validate(told)
    drawn = value_for(schema, random.Random(seed))
    said = facts(text)
    hinted: set[Any] = {*said.names, *said.numbers, *said.quoted, said.message, *said.emails}
    hinted |= {"fast", "slow"} | {f"prose {n}" for n in range(10)}
    for key, value in told.items():  # a value either was said or is the one drawn
        if isinstance(value, list):
            assert all(item in said.emails or item in drawn[key] for item in value)
        else:
            assert value == drawn[key] or value in hinted, (key, value)


DATED = st.sampled_from(
    ["2026-02-30", "2026-12-01", "Dec 5, 2026", "31 April 2026", "May", "Ada", "a@b.io"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=60) | DATED, max_size=6).map(" ".join), st.integers(0, 2**32))
def test_any_text_gives_facts_found_in_it_and_valid_values(text: str, seed: int) -> None:
    said = facts(text)
    for found in (*said.quoted, *said.emails, *said.urls):
        assert found and found in text
    for name in said.names:  # its words as written, one space between them
        assert name[0].isupper() and name in " ".join(text.split())
    for number in said.numbers:
        assert number >= 0
    for date in said.dates:  # real days only
        assert datetime.date.fromisoformat(date).isoformat() == date
    for schema in SCHEMAS:
        Draft202012Validator(schema).validate(value_for(schema, random.Random(seed), said))


WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city", "unit"],
}
ASK = "What's the weather in Paris, in fahrenheit?"


def test_each_client_format_calls_the_tool_with_what_was_asked(
    client: openai.OpenAI, claude: anthropic.Anthropic
) -> None:
    told = {"city": "Paris", "unit": "fahrenheit"}
    chat = client.chat.completions.create(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": ASK}],
        tools=[{"type": "function", "function": {"name": "weather", "parameters": WEATHER}}],
    )
    call = chat.choices[0].message.tool_calls[0]
    assert json.loads(call.function.arguments) == told
    made = client.responses.create(
        model="anthropic/claude-sonnet-4",  # the messages provider's tool_use, translated
        input=ASK,
        tools=[{"type": "function", "name": "weather", "parameters": WEATHER}],
    )
    assert json.loads(made.output[0].arguments) == told
    said = claude.messages.create(
        model="google/gemini-2.5-flash",
        max_tokens=400,
        messages=[{"role": "user", "content": ASK}],
        tools=[{"name": "weather", "input_schema": WEATHER}],
        tool_choice={"type": "any"},
    )
    assert [b.input for b in said.content if b.type == "tool_use"] == [told]


class Trip(BaseModel):
    origin: str
    destination: str
    travellers: int
    summary: str


def test_structured_output_takes_what_was_asked(client: openai.OpenAI) -> None:
    ask = "Plan a trip from Lisbon to Osaka for 3 people, via Toronto."
    trip = (
        client.chat.completions.parse(
            model="openai/gpt-4o", messages=[{"role": "user", "content": ask}], response_format=Trip
        )
        .choices[0]
        .message.parsed
    )
    assert trip is not None
    assert (trip.origin, trip.destination, trip.travellers) == ("Lisbon", "Osaka", 3)
    assert trip.summary.endswith(".") and len(trip.summary.split()) > 6  # sentences


WEATHER_TOOL = {"type": "function", "function": {"name": "weather", "parameters": WEATHER}}
TWO_CITIES = "Compare the weather in Paris and Tokyo, in celsius"


def test_a_call_for_each_name_the_user_gave(client: openai.OpenAI) -> None:
    def cities(**more: Any) -> list[str]:
        answer = client.chat.completions.create(
            model="openai/gpt-4o-mini",
            messages=[{"role": "user", "content": TWO_CITIES}],
            **{"tools": [WEATHER_TOOL], **more},
        )
        calls = answer.choices[0].message.tool_calls or []
        assert len({c.id for c in calls}) == len(calls)  # each its own id
        return [json.loads(c.function.arguments)["city"] for c in calls]

    assert cities() == ["Paris", "Tokyo"]
    assert cities(parallel_tool_calls=False) == ["Paris"]
    with client.chat.completions.stream(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": TWO_CITIES}],
        tools=[WEATHER_TOOL],
    ) as stream:
        streamed = stream.get_final_completion().choices[0].message.tool_calls or []
    assert [json.loads(c.function.arguments)["city"] for c in streamed] == ["Paris", "Tokyo"]
    # A tool that takes both names in one call is called once.
    trip = {"type": "object", "properties": {"origin": STRING, "destination": STRING}}
    flight = {"type": "function", "function": {"name": "flight", "parameters": trip}}
    once = client.chat.completions.create(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": "Fly from Paris to Tokyo"}],
        tools=[flight],
    )
    calls = once.choices[0].message.tool_calls or []
    assert [json.loads(c.function.arguments) for c in calls] == [
        {"origin": "Paris", "destination": "Tokyo"}
    ]


def test_at_most_eight_calls_at_once(client: openai.OpenAI) -> None:
    cities = "Oslo, Lima, Kyoto, Porto, Quito, Accra, Hanoi, Turin, Perth and Dakar"
    answer = client.chat.completions.create(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": f"Weather in {cities}?"}],
        tools=[WEATHER_TOOL],
    )
    calls = answer.choices[0].message.tool_calls or []
    assert [json.loads(c.function.arguments)["city"] for c in calls] == cities.replace(
        " and", ","
    ).split(", ")[:8]


def test_anthropic_clients_may_turn_parallel_calls_off(claude: anthropic.Anthropic) -> None:
    def cities(**choice: Any) -> list[str]:
        said = claude.messages.create(
            model="anthropic/claude-sonnet-4",
            max_tokens=400,
            messages=[{"role": "user", "content": TWO_CITIES}],
            tools=[{"name": "weather", "input_schema": WEATHER}],
            tool_choice={"type": "auto", **choice},
        )
        return [b.input["city"] for b in said.content if b.type == "tool_use"]  # type: ignore[index]

    assert cities() == ["Paris", "Tokyo"]
    assert cities(disable_parallel_tool_use=True) == ["Paris"]


def test_a_message_naming_no_one_takes_the_names_said_before() -> None:
    earlier = ("Weather in Paris and Tokyo?", "hello")  # newest first: the latest that names
    retry = Facts("Try again?", lambda rng: "", earlier=("it failed", *earlier))
    assert retry.names == ("Paris", "Tokyo")
    assert Facts("And in Rome?", lambda rng: "", earlier=earlier).names == ("Rome",)
    assert Facts("Try again?", lambda rng: "").names == ()


def test_a_retried_call_asks_for_the_same_place(claude: anthropic.Anthropic) -> None:
    """After a tool error the user says "Try again?": the call is for Paris again, not a
    place drawn at random (the exploratory run's case)."""
    tools: Any = [{"name": "weather", "input_schema": WEATHER}]
    ask: Any = {"role": "user", "content": ASK}
    first = claude.messages.create(
        model="anthropic/claude-sonnet-4", max_tokens=400, messages=[ask], tools=tools
    )
    call = next(b for b in first.content if b.type == "tool_use")
    failed = {
        "type": "tool_result",
        "tool_use_id": call.id,
        "content": "API down",
        "is_error": True,
    }
    again = claude.messages.create(
        model="anthropic/claude-sonnet-4",
        max_tokens=400,
        tools=tools,
        messages=[
            ask,
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in first.content],
            },
            {"role": "user", "content": [failed, {"type": "text", "text": "Try again?"}]},
        ],
    )
    retried = next(b for b in again.content if b.type == "tool_use")
    assert retried.input["city"] == "Paris" == call.input["city"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "told"),
    [
        ("A vegetarian dinner with images", {"vegetarian": True, "include_images": True}),
        ("A non-vegetarian dinner, no images", {"vegetarian": False, "include_images": False}),
        ("Dinner without images, not vegetarian", {"vegetarian": False, "include_images": False}),
    ],
)
def test_a_flag_is_what_the_message_says_of_it(text: str, told: dict[str, bool]) -> None:
    schema = obj(vegetarian={"type": "boolean"}, include_images={"type": "boolean"})
    assert value_for(schema, random.Random(1), facts(text)) == told


def test_a_flag_said_first_in_the_message_is_said() -> None:
    schema = obj(vegetarian={"type": "boolean"})
    said = facts("Vegetarian dinner, please")  # the word at the message's very start
    assert {value_for(schema, random.Random(seed), said)["vegetarian"] for seed in range(8)} == {
        True
    }


def test_a_flag_the_message_does_not_name_is_drawn() -> None:
    schema = obj(is_urgent={"type": "boolean"}, notify={"type": "boolean"})
    for seed in range(20):
        drawn = value_for(schema, random.Random(seed))
        assert value_for(schema, random.Random(seed), facts("Book a table")) == drawn


def test_names_run_together_and_codes_are_named_things() -> None:
    schema = obj(check_in=STRING, from_currency=STRING, to_currency=STRING)
    said = facts("Convert 200 USD to EUR for a stay from 2026-12-01")
    assert value_for(schema, random.Random(2), said) == {
        "check_in": "2026-12-01",  # check_in read as "checkin" too
        "from_currency": "USD",
        "to_currency": "EUR",
    }


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Create a ticket: login button broken on Safari", "login button broken on Safari"),
        (
            "Write a blog post about remote work for small teams",
            "Blog post about remote work for small teams",
        ),
        ('Name the project "Falcon" please', "Falcon"),
    ],
)
def test_a_title_is_what_the_message_asks_for(text: str, title: str) -> None:
    schema = obj(title=STRING, body=STRING)
    value = value_for(schema, random.Random(4), facts(text))
    assert value["title"] == title and value["body"].startswith("prose ")


def test_a_message_that_says_nothing_gives_no_empty_string() -> None:
    schema = obj(title=STRING, query=STRING)
    for text in ("Hi", "", "?"):  # no title left after "Hi", no message at all
        value = value_for(schema, random.Random(4), facts(text))
        assert value["title"] == value_for(schema, random.Random(4))["title"]  # drawn
        assert value["query"]
