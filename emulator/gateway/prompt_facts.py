"""What the user said, for the values of a tool call or a structured answer.

Asked "What's the weather in Paris?", a model calls `get_weather` with `city`
"Paris", not with a city of its own. `facts_of` reads the last user message
once: its proper names (capitalized words, "New York" joined; a word that
opens a sentence is not a name by itself), quoted phrases, numbers, e-mail
addresses, URLs and topic words. `Hints` hands them out by property name while
one value is drawn (`schema_draws`):

- places and people (`city`, `destination`, `name`, `author`, ...) take the
  proper names in order: `origin` the first, `destination` the next;
- queries (`query`, `q`, `question`, `text`, ...) the first quoted phrase, else
  the message itself;
- topics (`topic`, `keywords`, ...) the topic words in order;
- prose (`summary`, `description`, `reason`, ...) a sentence about the prompt;
- e-mail and URL fields (by name or `format`) the message's;
- integers and numbers the message's numbers in order;
- an `enum` the value the message names.

A hint is taken only where its part of the schema accepts it; otherwise the
value drawn stays. The value is always drawn first, so the generator's sequence
(and every value not hinted) is the same as without hints.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from emulator.gateway.topic_words import topic_words

MAX_QUERY = 200  # longer messages give their topic words as a query


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_PLACES = _set("city town place location destination origin address venue region where airport")
_PEOPLE = _set("name person author recipient customer attendee contact assignee owner sender")
# `file_name`, `tool_name`: a name, but not a person's or a place's.
_NOT_PEOPLE = _set(
    "file model tool function table column field key variable branch repo repository "
    "package project bucket class method module event metric index"
)
_QUERIES = _set("query q search question prompt input text request instruction")
_TOPICS = _set("topic subject keyword tag term")
_PROSE = _set(
    "summary description explanation reason reasoning answer content body detail comment "
    "note response reply analysis rationale message overview feedback"
)
_LINKS = _set("url link website href uri")
_LINK_FORMATS = _set("uri url iri")

# Capitalized words that open a sentence without naming anything.
_OPENERS = _set(
    "what what's whats how who where when why which is are was were can could would will "
    "should do does did tell please show find get give book send make write create list "
    "search look check i i'm the a an my our your this that these those in on at for to "
    "from and but if hi hello hey thanks thank set add call use let let's schedule draw "
    "plan compare explain summarize translate help remind convert describe"
)
_NOT_NAMES = _set(
    "i monday tuesday wednesday thursday friday saturday sunday january february march "
    "april may june july august september october november december"
)
_WORD = r"[A-Z][\w'\u2019-]*"  # \u2019: the typographic apostrophe
_NAME = re.compile(rf"{_WORD}(?:[ \t]+(?:(?:of|de|da|del|du|di|la|le|van|von)[ \t]+)?{_WORD})*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n\s*)$")
_QUOTED = re.compile(r"\"([^\"\n]{1,200})\"|“([^”\n]{1,200})”|(?<!\w)'([^'\n]{1,200})'(?!\w)")
_NUMBER = re.compile(r"(?<![\w.:/-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w:/-]|\.\d)")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


@dataclass(frozen=True)
class Facts:
    """What one message says that values can be taken from."""

    message: str  # one line, without its closing punctuation
    names: tuple[str, ...]
    quoted: tuple[str, ...]
    numbers: tuple[int | float, ...]
    emails: tuple[str, ...]
    urls: tuple[str, ...]
    topics: tuple[str, ...]
    prose: Callable[[random.Random], str]  # a sentence about the message


def facts_of(text: str, prose: Callable[[random.Random], str]) -> Facts:
    """The facts of `text`; `prose` writes a sentence about it from a generator."""
    urls = tuple(u.rstrip(".,;:!?") for u in _URL.findall(text))
    emails = tuple(_EMAIL.findall(text))
    plain = _URL.sub(" ", _EMAIL.sub(" ", text))
    return Facts(
        message=" ".join(text.split()).rstrip(".?!"),
        names=proper_names(plain),
        quoted=tuple(next(g for g in m.groups() if g) for m in _QUOTED.finditer(plain)),
        numbers=tuple(_number(m) for m in _NUMBER.finditer(plain)),
        emails=emails,
        urls=urls,
        topics=tuple(topic_words(text)),
        prose=prose,
    )


@lru_cache(maxsize=256)
def proper_names(text: str) -> tuple[str, ...]:
    """The proper names of `text`, in order, each once."""
    found: list[str] = []
    for match in _NAME.finditer(text):
        words = match.group().split()
        opens = bool(_SENTENCE_START.search(text[: match.start()]))
        while words and words[0].lower() in _OPENERS:
            words, opens = words[1:], False
        if len(words) == 1 and (opens or words[0].lower() in _NOT_NAMES):
            continue  # a sentence's first word alone is not taken for a name
        if words and (name := " ".join(words)) not in found:
            found.append(name)
    return tuple(found)


def _number(match: re.Match[str]) -> int | float:
    whole = match.group(1).replace(",", "")
    return float(whole + match.group(2)) if match.group(2) else int(whole)


class Hints:
    """The facts handed out during one draw: each name, number and topic once, in order."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self._next = {"names": 0, "numbers": 0, "topics": 0}

    def string(
        self, name: str, schema: dict[str, Any], drawn: Any, fits: Callable[[Any], bool]
    ) -> Any:
        """`drawn`, or what the message says for a property called `name`."""
        if not isinstance(drawn, str):
            return drawn
        kind, hints = self._strings(_parts(name), schema.get("format"), drawn)
        start = self._next.get(kind, 0)
        for at in range(start, len(hints)):
            if fits(hints[at]):
                if kind:
                    self._next[kind] = at + 1
                return hints[at]
        return drawn

    def number(self, drawn: Any, fits: Callable[[Any], bool]) -> Any:
        """`drawn`, or the message's next number that fits."""
        numbers = self.facts.numbers
        for at in range(self._next["numbers"], len(numbers)):
            if fits(numbers[at]):
                self._next["numbers"] = at + 1
                return numbers[at]
        return drawn

    def choice(self, options: list[Any], drawn: Any) -> Any:
        """`drawn`, or the option the message names first (whole words, any case)."""
        said = self.facts.message.lower()
        named = [
            (found.start(), option)
            for option in options
            if isinstance(option, str) and len(option) >= 3
            if (found := re.search(rf"(?<!\w){re.escape(option.lower())}(?!\w)", said))
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
        if fmt is not None:
            return "", ()
        if parts & _PROSE:
            return "", (facts.prose(random.Random(drawn)),)
        if parts & _QUERIES:
            return "", (*facts.quoted[:1], _query(facts))
        if parts & _TOPICS:
            return "topics", facts.topics
        if parts & _PLACES or (parts & _PEOPLE and not parts & _NOT_PEOPLE):
            return "names", facts.names
        return "", ()


def _query(facts: Facts) -> str:
    if len(facts.message) <= MAX_QUERY:
        return facts.message
    return " ".join(facts.topics[:8]) or facts.message[:MAX_QUERY]


def _parts(name: str) -> set[str]:
    """A property's name as singular lower-case words: `destinationCities` is
    {destination, city}."""
    return {_singular(part.lower()) for part in _PART.findall(name)}


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word
