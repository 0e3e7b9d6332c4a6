"""What the user said, read from the message (`prompt_facts`): proper names, quoted
phrases, numbers, dates, addresses."""

from __future__ import annotations

import random
from typing import Any

import pytest

from emulator.gateway.prompt_facts import Facts
from emulator.gateway.schema_values import value_for


def facts(text: str) -> Facts:
    return Facts(text, lambda rng: f"prose {rng.randint(0, 9)}")


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


STRING = {"type": "string"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("What's the weather in Paris?", ("Paris",)),
        ("Weather in Rome", ("Rome",)),  # a sentence's first word is no name by itself
        ("Paris is lovely. Tell Ada about it.", ("Ada",)),
        ("New York is big", ("New York",)),  # joined words are, even first
        (
            "Fly from New York to San Francisco with Ada Lovelace",
            ("New York", "San Francisco", "Ada Lovelace"),
        ),
        ("Visit the Bank of America on Monday in May", ("Bank of America",)),
        ("I think so", ()),
        ("Fly from Zürich to Łódź with Émile Zola", ("Zürich", "Łódź", "Émile Zola")),
        ("Visit Škoda in Plzeň, then Αθήνα", ("Škoda", "Plzeň", "Αθήνα")),
    ],
)
def test_proper_names_are_the_capitalized_words_that_do_not_just_open_a_sentence(
    text: str, names: tuple[str, ...]
) -> None:
    assert facts(text).names == names


def test_quotes_numbers_emails_and_urls_are_read_as_written() -> None:
    said = facts(
        "Search for \"rust async\" and 'tokio'. Mail ada@example.com the page "
        "https://example.org/a?b=1. Add 2 and 3.5, then 1,000; not 2026-11-25 nor 10:30."
    )
    assert said.quoted == ("rust async", "tokio")
    assert said.numbers == (2, 3.5, 1000)
    # In words too, from two: "one" is as often a pronoun.
    assert facts("A table for two at 7, the one by the window; Twelve chairs").numbers == (
        2,
        7,
        12,
    )
    assert said.emails == ("ada@example.com",)
    assert said.urls == ("https://example.org/a?b=1",)
    assert said.message.endswith("nor 10:30")  # closing punctuation off


def test_dates_are_read_as_iso_dates_and_are_no_numbers() -> None:
    said = facts(
        "Stay from 2026-12-01 to Dec 5th, 2026 (not 2026-02-30), then 4 March 2027; 2 beds"
    )
    assert said.dates == ("2026-12-01", "2026-12-05", "2027-03-04")
    assert said.numbers == (2,)
    schema = obj(
        check_in_date=STRING,
        check_out_date={"type": "string", "format": "date"},
        reminder={"type": "string", "format": "date-time"},
    )
    value = value_for(schema, random.Random(5), said)
    assert value == {
        "check_in_date": "2026-12-01",
        "check_out_date": "2026-12-05",
        "reminder": "2027-03-04T09:00:00Z",  # the next date, as a date-time
    }
