"""What the user said, for the values of a tool call or a structured answer.

Asked "What's the weather in Paris?", a model calls `get_weather` with `city`
"Paris", not with a city of its own. `Facts` reads the last user message (each
kind once, when first asked for): its proper names (capitalized words, "New
York" joined; a word that opens a sentence is not a name by itself), quoted
phrases, numbers, dates, e-mail addresses, URLs and topic words. `prompt_hints`
hands them out by property name while a value is drawn.
"""

from __future__ import annotations

import datetime
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

from emulator.gateway.topic_words import topic_words


def word_set(words: str) -> frozenset[str]:
    """A set of words written as one string, space-separated."""
    return frozenset(words.split())


# Capitalized words that open a sentence without naming anything.
SENTENCE_OPENERS = word_set(
    "what what's whats how who where when why which is are was were can could would will "
    "should do does did tell please show find get give book send make write create list "
    "search look check i i'm the a an my our your this that these those in on at for to "
    "from and but if hi hello hey thanks thank set add call use let let's schedule draw "
    "plan compare explain summarize translate help remind convert describe visit buy order "
    "pay fly go take bring meet ask email text message open close start stop run play read "
    "watch cancel update delete remove move change turn save print share invite reserve "
    "rent hire contact notify post reply forward upload download install deploy build fix "
    "test review approve reject assign ship track transfer pick choose select compute "
    "calculate count sum multiply divide subtract fetch analyze analyse generate predict "
    "estimate recommend suggest rate rank sort filter okay ok yes no sure also then now "
    "today tomorrow yesterday next first"
)
_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
_NOT_NAMES = word_set("i monday tuesday wednesday thursday friday saturday sunday") | set(
    _MONTH_NAMES
)
# A capital (ASCII, Latin-1, a few of Latin Extended-A, Greek, Cyrillic), then word
# characters; \u2019 is the typographic apostrophe.
_CAPITAL = (
    "A-Z\u00c0-\u00d6\u00d8-\u00de\u0106\u010c\u0141\u015a\u0160\u017d\u0391-\u03a9\u0410-\u042f"
)
_WORD = rf"[{_CAPITAL}][\w'\u2019-]*"
_NAME = re.compile(rf"{_WORD}(?:[ \t]+(?:(?:of|de|da|del|du|di|la|le|van|von)[ \t]+)?{_WORD})*")
_QUOTED = re.compile(r"\"([^\"\n]{1,200})\"|“([^”\n]{1,200})”|(?<!\w)'([^'\n]{1,200})'(?!\w)")
# Numbers in words too, from two ("one" is as often a pronoun: "the one in Paris").
_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "dozen": 12, "twenty": 20, "hundred": 100,
}  # fmt: skip
_NUMBER = re.compile(
    r"(?<![\w.:/-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w:/-]|\.\d)"
    rf"|(?i:\b({'|'.join(_NUMBER_WORDS)})\b)"
)
_MONTHS = {
    name: number
    for number, month in enumerate(_MONTH_NAMES, start=1)
    for name in (month, month[:3])
} | {"sept": 9}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATE = re.compile(
    r"(?<![\w-])(\d{4})-(\d{2})-(\d{2})(?![\w-])"
    rf"|(?i:\b{_DAY}\s+({_MONTH})\.?,?\s+(\d{{4}})\b)"
    rf"|(?i:\b({_MONTH})\.?\s+{_DAY},?\s+(\d{{4}})\b)"
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A file's path as people write one: from the root or here (`/etc/hosts`, `./docs/`),
# folders then a file (`src/app.py`, `docs/`), or a file name with a known extension
# (`main.py`; `example.com` and `e.g.` are none); not a URL's or an address's.
_EXTENSIONS = (
    "py|js|ts|tsx|jsx|mjs|json|yaml|yml|toml|md|txt|csv|html|css|go|rs|java|c|h|cpp|rb|sh"
    "|sql|xml|ini|cfg|conf|env|lock|log|pdf|png|jpg|jpeg|svg|ipynb|kt|swift|php|vue|lua"
)
_FILE = rf"[\w-]+\.(?:{_EXTENSIONS})"
_PATH = re.compile(
    rf"(?<![\w/.@-])(?:\.{{0,2}}/(?:[\w.-]+/)*[\w.-]*|(?:[\w.-]+/)+(?:{_FILE})?|{_FILE})(?![\w/])"
)
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
_WORD_RUN = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Facts:
    """What one message says that values can be taken from, each kind read from it on
    first use (a schema asks for a few kinds; a prompt may be megabytes)."""

    text: str
    prose: Callable[[random.Random], str]  # a sentence about the message
    skip: int = 0  # names taken by earlier calls of the same turn
    # The user's earlier messages, newest first: a message that names no one and nowhere
    # ("Try again?" after a failed call) is about the names the latest of them gave.
    earlier: tuple[str, ...] = ()

    def skipping(self, names: int) -> Facts:
        """These facts for the next parallel call: its names after the first `names`."""
        return replace(self, skip=self.skip + names)

    @cached_property
    def message(self) -> str:
        """The message on one line, without its closing punctuation."""
        return " ".join(self.text.split()).rstrip(".?!")

    @cached_property
    def lowered(self) -> str:
        return self.message.lower()

    @cached_property
    def urls(self) -> tuple[str, ...]:
        if "://" not in self.text:  # the cheap test first, here and for addresses
            return ()
        return tuple(u.rstrip(".,;:!?") for u in _URL.findall(self.text))

    @cached_property
    def emails(self) -> tuple[str, ...]:
        return tuple(_EMAIL.findall(self.text)) if "@" in self.text else ()

    @cached_property
    def paths(self) -> tuple[str, ...]:
        if "/" not in self.text and "." not in self.text:
            return ()
        return tuple(p for p in _PATH.findall(self._plain) if p.strip("./"))

    @cached_property
    def _plain(self) -> str:
        """The text without its URLs and addresses, whose parts are no names or numbers
        (each replaced by a semicolon: the words on either side make no one name)."""
        text = _EMAIL.sub(" ; ", self.text) if self.emails else self.text
        return _URL.sub(" ; ", text) if self.urls else text

    @cached_property
    def names(self) -> tuple[str, ...]:
        found = proper_names(self._plain)
        for text in self.earlier:
            if found:
                break
            found = Facts(text, self.prose).names
        return found[self.skip :]

    @cached_property
    def quoted(self) -> tuple[str, ...]:
        return tuple(next(g for g in m.groups() if g) for m in _QUOTED.finditer(self._plain))

    @cached_property
    def numbers(self) -> tuple[int | float, ...]:
        undated = _DATE.sub(" ", self._plain) if self.dates else self._plain
        return tuple(_number(m) for m in _NUMBER.finditer(undated))

    @cached_property
    def dates(self) -> tuple[str, ...]:
        """The calendar dates written in the message (`2026-12-01`, `1 December 2026`,
        `Dec 1, 2026`), as ISO dates, in order."""
        if not _DIGIT.search(self.text):  # the cheap test first
            return ()
        found = (_iso_date(m) for m in _DATE.finditer(self._plain))
        return tuple(date for date in found if date)

    @cached_property
    def topics(self) -> tuple[str, ...]:
        return tuple(topic_words(self.text))

    @cached_property
    def _first_words(self) -> dict[str, int]:
        """Where each word of the message is first, lower-cased (one pass)."""
        first: dict[str, int] = {}
        for match in _WORD_RUN.finditer(self.lowered):
            first.setdefault(match.group(), match.start())
        return first

    def where(self, words: str) -> int | None:
        """Where the lower-cased `words` are first said as whole words, or None."""
        if _WORD_RUN.fullmatch(words):  # most `enum` values: a look-up, not a scan
            return self._first_words.get(words)
        found = re.search(rf"(?<!\w){re.escape(words)}(?!\w)", self.lowered)
        return found.start() if found else None


def proper_names(text: str) -> tuple[str, ...]:
    """The proper names of `text`, in order, each once."""
    found: dict[str, None] = {}  # ordered, each once
    for match in _NAME.finditer(text):
        words = match.group().split()
        opens = _opens_sentence(text, match.start())
        while words and words[0].lower() in SENTENCE_OPENERS:
            words, opens = words[1:], False
        if len(words) == 1 and (opens or words[0].lower() in _NOT_NAMES):
            continue  # a sentence's first word alone is not taken for a name
        if words:
            found.setdefault(" ".join(words))
    return tuple(found)


def _opens_sentence(text: str, at: int) -> bool:
    """Whether the word at `at` is the first of its sentence or line (looking back over
    the spaces before it only: a scan of all the text before each word is quadratic)."""
    while at > 0 and text[at - 1] in " \t\r\n":
        if text[at - 1] == "\n":
            return True
        at -= 1
    return at == 0 or text[at - 1] in ".!?:"


def _iso_date(match: re.Match[str]) -> str | None:
    """The ISO date a `_DATE` match writes, or None for no such day (2026-02-30)."""
    g = match.groups()
    if g[0]:  # 2026-12-01
        year, month, day = int(g[0]), int(g[1]), int(g[2])
    elif g[3]:  # 1 December 2026
        year, month, day = int(g[5]), _MONTHS[g[4].lower()], int(g[3])
    else:  # December 1, 2026
        year, month, day = int(g[8]), _MONTHS[g[6].lower()], int(g[7])
    try:
        return datetime.date(year, month, day).isoformat()
    except ValueError:
        return None


def _number(match: re.Match[str]) -> int | float:
    if match.group(3):
        return _NUMBER_WORDS[match.group(3).lower()]
    whole = match.group(1).replace(",", "")
    return float(whole + match.group(2)) if match.group(2) else int(whole)
