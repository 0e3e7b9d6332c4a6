"""Strings that match a JSON schema `pattern`, drawn from a seeded generator.

The pattern (ECMA-262's, said in `re`'s words: `pattern_dialect.for_parsing`)
is parsed by Python's own regular-expression parser and a string is built from
the tree: literals, character classes (ranges, `\\d`, `\\w`, `\\s`, negated
sets), `.`, alternation, groups and back-references, and the
quantifiers `?`, `*`, `+`, `{n}`, `{n,m}` (open-ended ones draw at most a few
more than their minimum). Anchors and word boundaries add nothing. Whatever
the tree cannot express (lookarounds, conditionals), or a built string that
does not match after all, falls back to a list of plain candidates checked
as JSON schema validators test `pattern` (`re.search`, here under a timeout:
`pattern_search`).

Repeats multiply (`((a{1000}){1000}){1000}` is a billion characters), and so
does the matcher's work: `re` steps through every required repeat even of an
empty group, so `(?:){4000000000}` holds it for minutes on any string.
`pattern_cost` measures what a pattern requires, for the gateway to refuse
before anything builds or matches it; a build stops drawing optional repeats
once it is long, and gives up (to the candidates) past a hard bound.
"""

from __future__ import annotations

import itertools
import random
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from emulator.gateway.pattern_dialect import for_parsing
from emulator.gateway.pattern_search import search

# Characters a class or `.` is drawn from when it does not name its own.
ALPHABET = string.ascii_letters + string.digits + "_-. @"
_CATEGORY = {
    sre.CATEGORY_DIGIT: string.digits,
    sre.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    sre.CATEGORY_SPACE: " ",
}
_EXTRA_REPEATS = 3  # `*`, `+` and `{n,}` draw at most this many beyond their minimum
# Steps (ops built, repeats, characters copied by back-references) of one build. Past
# _LONG, optional repeats end: strings of earlier versions up to some 8,000 characters
# (twice the longest minLength drawn) are drawn byte for byte as before, and longer ones
# no longer run to millions. Past _MOST the build gives up: a pattern the gateway
# checked (`pattern_cost`) never gets there.
_LONG = 16_384
_MOST = 65_536
_CANDIDATES = (
    "a", "abc", "ABC", "Abc", "a1", "A1", "0", "1", "42", "123", "1234", "12345",
    "2026-01-15", "09:30:00", "2026-01-15T09:30:00Z", "ada@example.com",
    "https://example.com/a", "example.com", "a-b", "a_b", "a.b", "x y", "",
)  # fmt: skip


class _Unsupported(Exception):
    """The tree holds a construct this generator does not build."""


@dataclass
class _Build:
    """One build: the generator, the groups captured so far, the steps taken."""

    rng: random.Random
    extra: int
    groups: dict[int, str] = field(default_factory=dict)
    steps: int = 0
    # A second try writes what each lookbehind looks for (`(?<=\d+)x` is "4x"); the
    # first writes nothing for it, so the strings drawn before stay the same.
    behind: bool = False


def string_for_pattern(
    pattern: str, rng: random.Random, words: tuple[str, ...], extra: int = _EXTRA_REPEATS
) -> str | None:
    """A string `re.search(pattern, ...)` accepts, or None when none was found.

    Open-ended quantifiers draw up to `extra` repeats beyond their minimum. Matching
    runs under the request's budget (`pattern_search`): PatternTooSlow past it.
    """
    if pattern_cost(pattern)[1] > _MOST:  # matching it at all would hold the server
        return None
    try:
        tree = _parser.parse(for_parsing(pattern))
        for behind in (False, True) if "(?<" in pattern else (False,):
            built = _emit(tree, _Build(rng, extra, behind=behind))
            if search(pattern, built):
                return built
    except (re.error, _Unsupported, RecursionError, OverflowError, ValueError):
        pass
    candidates = (*words, *(f"{a} {b}" for a, b in itertools.pairwise(words)), *_CANDIDATES)
    try:
        return next((c for c in candidates if search(pattern, c)), None)
    except re.error:
        return None


@lru_cache(maxsize=512)
def pattern_cost(pattern: str) -> tuple[int, int]:
    """(the characters of the shortest match, the steps `re` takes at least in the
    pattern's costliest alternative): the second counts the required repeats of parts
    that match nothing too. (0, 0) when the pattern does not parse (the JSON schema
    check refuses it)."""
    try:
        return _least(_parser.parse(for_parsing(pattern)), {})
    except (re.error, RecursionError, OverflowError, ValueError):
        return 0, 0


def _least(tree: Any, groups: dict[int, tuple[int, int]]) -> tuple[int, int]:
    chars = steps = 0
    for op, arg in tree:
        more_chars, more_steps = _least_one(op, arg, groups)
        chars, steps = chars + more_chars, steps + more_steps
    return chars, steps


def _least_one(op: Any, arg: Any, groups: dict[int, tuple[int, int]]) -> tuple[int, int]:
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        chars, steps = _least(arg[2], groups)
        return arg[0] * chars, arg[0] * max(1, steps)
    if op is sre.SUBPATTERN:
        cost = _least(arg[-1], groups)
        if arg[0] is not None:
            groups[arg[0]] = cost
        return cost
    if op in (sre.BRANCH, sre.GROUPREF_EXISTS):  # the matcher may try every alternative
        branches = arg[1] if op is sre.BRANCH else (arg[1], arg[2] or [])
        costs = [_least(branch, groups) for branch in branches]
        return min(c for c, _ in costs), max(s for _, s in costs)
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return 0, _least(arg[1], groups)[1]
    if op is sre.ATOMIC_GROUP:
        return _least(arg, groups)
    if op is sre.GROUPREF:
        return groups.get(arg, (0, 0))
    return (0, 0) if op is sre.AT else (1, 1)


def _emit(tree: Any, b: _Build) -> str:
    return "".join(_emit_one(op, arg, b) for op, arg in tree)


def _emit_one(op: Any, arg: Any, b: _Build) -> str:
    b.steps += 1
    if b.steps > _MOST:
        raise _Unsupported("too long")
    rng = b.rng
    if op is sre.LITERAL:
        return chr(arg)
    if op is sre.NOT_LITERAL:
        return rng.choice([c for c in ALPHABET if ord(c) != arg])
    if op is sre.ANY:
        return rng.choice(string.ascii_lowercase)
    if op is sre.IN:
        return _from_class(arg, rng)
    if op is sre.BRANCH:
        return _emit(rng.choice(arg[1]), b)
    if op is sre.SUBPATTERN:
        text = _emit(arg[-1], b)
        if arg[0] is not None:
            b.groups[arg[0]] = text
        return text
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, high, sub = arg
        return _repeat(sub, low, rng.randint(low, min(high, low + b.extra)), b)
    if op is sre.ATOMIC_GROUP:
        return _emit(arg, b)
    if op is sre.GROUPREF:
        text = b.groups.get(arg, "")
        b.steps += len(text)
        return text
    if op is sre.ASSERT and arg[0] == -1 and b.behind:
        return _emit(arg[1], b)
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):  # the final check decides lookarounds
        return ""
    if op is sre.CATEGORY:
        return _from_class([(op, arg)], rng)
    raise _Unsupported(str(op))


def _repeat(sub: Any, low: int, count: int, b: _Build) -> str:
    """`count` repeats of `sub`, fewer (not below `low`) once the string is long: the
    draws stay those of earlier versions until then."""
    parts = []
    for n in range(count):
        b.steps += 1  # a repeat of nothing (`(?:){9999}`) is a step too
        if n >= low and b.steps > _LONG:
            break
        parts.append(_emit(sub, b))
    return "".join(parts)


def _from_class(items: list[tuple[Any, Any]], rng: random.Random) -> str:
    """One character of a `[...]` class (or `\\d`, `\\w`, `\\s` alone)."""
    if items and items[0][0] is sre.NEGATE:
        allowed = [c for c in ALPHABET if not _in_class(c, items[1:])]
        if not allowed:
            raise _Unsupported("empty negated class")
        return rng.choice(allowed)
    op, arg = rng.choice(items)
    if op is sre.LITERAL:
        return chr(arg)
    if op is sre.RANGE:
        return chr(rng.randint(*arg))
    if op is sre.CATEGORY and arg in _CATEGORY:
        return rng.choice(_CATEGORY[arg])
    allowed = [c for c in ALPHABET if _in_class(c, [(op, arg)])]
    if not allowed:
        raise _Unsupported(str(op))
    return rng.choice(allowed)


def _in_class(char: str, items: list[tuple[Any, Any]]) -> bool:
    code = ord(char)
    for op, arg in items:
        if op is sre.LITERAL and code == arg:
            return True
        if op is sre.RANGE and arg[0] <= code <= arg[1]:
            return True
        if op is sre.CATEGORY and _in_category(char, arg):
            return True
    return False


def _in_category(char: str, category: Any) -> bool:
    for positive, negative in (
        (sre.CATEGORY_DIGIT, sre.CATEGORY_NOT_DIGIT),
        (sre.CATEGORY_WORD, sre.CATEGORY_NOT_WORD),
        (sre.CATEGORY_SPACE, sre.CATEGORY_NOT_SPACE),
    ):
        if category in (positive, negative):
            return (char in _CATEGORY[positive]) == (category is positive)
    return False
