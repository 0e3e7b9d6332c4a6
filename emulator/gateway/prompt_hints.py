"""The facts of the user's message (`prompt_facts`) handed out by property name while
one value is drawn (`schema_draws`):

- places, people and other named things (`city`, `destination`, `name`,
  `currency`, ...; a name's words also run together: `check_in` is `checkin`)
  take the proper names in order: `origin` the first, `destination` the next;
- queries (`query`, `q`, `question`, `text`, ...) the first quoted phrase, else
  the message itself;
- titles (`title`, `headline`, ...) the quoted phrase, what follows the colon, or
  the message less its opening instruction;
- topics (`topic`, `keywords`, ...) the topic words in order;
- prose (`summary`, `description`, `reason`, ...) what `Facts.prose` writes
  (`content`: what the tools said, or sentences about the prompt);
- e-mail, URL and date fields (by name or `format`) the message's; paths (`path`,
  `file_name`, `directory`, ...) the file paths it writes (`src/app.py`, `/etc/hosts`);
- integers and numbers the message's numbers in order; booleans whether it says
  their name's words (false after "no", "not", "without");
- an `enum` the value the message names.

A hint is taken only where its part of the schema accepts it; otherwise the
value drawn stays. The value is always drawn first, so the generator's sequence
(and every value not hinted) is the same as without hints.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from typing import Any

from emulator.gateway.prompt_facts import SENTENCE_OPENERS, Facts, word_set

MAX_QUERY = 200  # longer messages give their topic words as a query
MAX_TITLE = 80

_PLACES = word_set(
    "city town place location destination origin address venue region where airport "
    # and other things called by proper names or codes ("USD", "French", "Acme")
    "currency symbol ticker language company organization organisation brand team airline"
)
_PEOPLE = word_set("name person author recipient customer attendee contact assignee owner sender")
# `file_name`, `tool_name`: a name, but not a person's or a place's.
_NOT_PEOPLE = word_set(
    "file model tool function table column field key variable branch repo repository "
    "package project bucket class method module event metric index"
)
_QUERIES = word_set("query q search question prompt input text request instruction")
_TOPICS = word_set("topic subject keyword tag term")
_TITLES = word_set("title heading headline caption label")
# What opens a request for something titled: "Write me a short blog post about ...".
_TITLE_OPENERS = SENTENCE_OPENERS | word_set("me us up draft compose new quick short about")
_PROSE = word_set(
    "summary description explanation reason reasoning answer content body detail comment "
    "note response reply analysis rationale message overview feedback result outcome "
    "conclusion recommendation advice suggestion justification insight opinion"
)
_DATES = word_set("date day deadline due when birthday arrival departure checkin checkout")
_LINKS = word_set("url link website href uri")
_PATHS = word_set("path filepath file filename dir directory folder")
_LINK_FORMATS = word_set("uri url iri")

# The words of a boolean's name that say nothing of what it is (`is_vegetarian`).
_FLAG_FILLERS = word_set("is has have include includes with use allow enable enabled should can")
_NEGATED = re.compile(r"(?:\bno|\bnot|\bnon|\bwithout)[\s-]*$")
_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def names_taken(value: Any, names: tuple[str, ...]) -> int:
    """How many of `names` a drawn value took: one past the last found in its strings
    (0 when none is)."""
    strings = list(_strings_in(value))
    found = [at for at, name in enumerate(names) if any(name in text for text in strings)]
    return found[-1] + 1 if found else 0


def _strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings_in(item)


class Hints:
    """The facts handed out during one draw: each name, number, date and topic once, in
    order."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self._next = {"names": 0, "numbers": 0, "topics": 0, "dates": 0, "paths": 0}

    def string(
        self, name: str, schema: dict[str, Any], drawn: Any, fits: Callable[[Any], bool]
    ) -> Any:
        """`drawn`, or what the message says for a property called `name`."""
        if not isinstance(drawn, str):
            return drawn
        kind, hints = self._strings(name_words(name), schema.get("format"), drawn)
        return self._first_fitting(kind, hints, fits, drawn)

    def number(self, drawn: Any, fits: Callable[[Any], bool]) -> Any:
        """`drawn`, or the message's next number that fits."""
        return self._first_fitting("numbers", self.facts.numbers, fits, drawn)

    def _first_fitting(
        self, kind: str, hints: tuple[Any, ...], fits: Callable[[Any], bool], drawn: Any
    ) -> Any:
        """The first of `hints` that fits, from where `kind`'s last one was taken (and
        taken: the next starts after it; "" takes none), else `drawn`. An empty string
        is never a hint."""
        for at in range(self._next.get(kind, 0), len(hints)):
            if hints[at] != "" and fits(hints[at]):
                if kind:
                    self._next[kind] = at + 1
                return hints[at]
        return drawn

    def flag(self, name: str, drawn: Any) -> Any:
        """`drawn`, or whether the message says what a boolean called `name` names
        (`vegetarian`, `include_images`): true where it says the word, false where a
        "no", "not", "non" or "without" goes before it."""
        words = name_words(name) - _FLAG_FILLERS
        found = (self.facts.where(w) for word in words for w in (word, word + "s"))
        said = [at for at in found if at is not None]  # 0, the message's start, included
        if not words or not said:
            return drawn
        before = self.facts.lowered[max(0, min(said) - 9) : min(said)]
        return not _NEGATED.search(before)

    def choice(self, options: list[Any], drawn: Any) -> Any:
        """`drawn`, or the option the message names first (whole words, any case)."""
        named = [
            (at, option)
            for option in options
            if isinstance(option, str) and len(option) >= 3
            if (at := self.facts.where(option.lower())) is not None
        ]
        return min(named, key=lambda pair: pair[0])[1] if named else drawn

    def _strings(self, parts: set[str], fmt: Any, drawn: str) -> tuple[str, tuple[str, ...]]:
        """The hints for a property, and the kind whose next one is taken ("" for hints
        that can be given again)."""
        facts = self.facts
        if fmt == "email" or "email" in parts:
            return "", facts.emails[:1]
        if fmt in _LINK_FORMATS or parts & _LINKS:
            return "", facts.urls[:1]
        if fmt == "date" or (fmt is None and parts & _DATES):
            return "dates", facts.dates
        if fmt == "date-time":
            return "dates", tuple(f"{date}T09:00:00Z" for date in facts.dates)
        if fmt is not None:
            return "", ()
        if parts & _PATHS:
            return "paths", facts.paths
        if parts & _PROSE:
            return "", (facts.prose(random.Random(drawn)),)
        if parts & _QUERIES:
            return "", (*facts.quoted[:1], _query(facts))
        if parts & _TITLES:
            return "", (*facts.quoted[:1], _title(facts))
        if parts & _TOPICS:
            return "topics", facts.topics
        if parts & _PLACES or (parts & _PEOPLE and not parts & _NOT_PEOPLE):
            return "names", facts.names
        return "", ()


def _title(facts: Facts) -> str:
    """A title for what the message asks: what follows its first colon ("Create a
    ticket: login fails on Safari"), else the message less its opening instruction
    ("Write a blog post about X" is "Blog post about X"), ten words at most."""
    _, colon, after = facts.message.partition(":")
    if colon and 0 < len(after.strip()) <= MAX_TITLE:
        return after.strip()
    words = facts.message.split()
    while words and words[0].lower() in _TITLE_OPENERS:
        words = words[1:]
    title = " ".join(words[:10])
    return title[:1].upper() + title[1:]


def _query(facts: Facts) -> str:
    if len(facts.message) <= MAX_QUERY:
        return facts.message
    return " ".join(facts.topics[:8]) or facts.message[:MAX_QUERY]


def name_words(name: str) -> set[str]:
    """A property's or a tool's name as singular lower-case words, and the words run
    together: `destinationCities` and `destination_cities` are {destination, city,
    destinationcity}, `check_in` {check, in, checkin}."""
    words = [singular(part.lower()) for part in _PART.findall(name)]
    return {*words, "".join(words)}


def singular(word: str) -> str:
    """A lower-case English plural's singular, by its ending (`cities`: `city`)."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word
