"""Strings that match a JSON schema `pattern`, drawn from a seeded generator.

The pattern is parsed by Python's own regular-expression parser and a string
is built from the tree: literals, character classes (ranges, `\\d`, `\\w`,
`\\s`, negated sets), `.`, alternation, groups and back-references, and the
quantifiers `?`, `*`, `+`, `{n}`, `{n,m}` (open-ended ones draw at most a few
more than their minimum). Anchors and word boundaries add nothing. Whatever
the tree cannot express (lookarounds, conditionals), or a built string that
does not match after all, falls back to a list of plain candidates checked
with `re.search`, the way JSON schema validators test `pattern`.
"""

from __future__ import annotations

import itertools
import random
import re
import string
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

# Characters a class or `.` is drawn from when it does not name its own.
ALPHABET = string.ascii_letters + string.digits + "_-. @"
_CATEGORY = {
    sre.CATEGORY_DIGIT: string.digits,
    sre.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    sre.CATEGORY_SPACE: " ",
}
_EXTRA_REPEATS = 3  # `*`, `+` and `{n,}` draw at most this many beyond their minimum
_CANDIDATES = (
    "a", "abc", "ABC", "Abc", "a1", "A1", "0", "1", "42", "123", "1234", "12345",
    "2026-01-15", "09:30:00", "2026-01-15T09:30:00Z", "ada@example.com",
    "https://example.com/a", "example.com", "a-b", "a_b", "a.b", "x y", "",
)  # fmt: skip


class _Unsupported(Exception):
    """The tree holds a construct this generator does not build."""


def string_for_pattern(
    pattern: str, rng: random.Random, words: tuple[str, ...], extra: int = _EXTRA_REPEATS
) -> str | None:
    """A string `re.search(pattern, ...)` accepts, or None when none was found.

    Open-ended quantifiers draw up to `extra` repeats beyond their minimum.
    """
    try:
        built = _emit(_parser.parse(pattern), rng, {}, extra)
        if re.search(pattern, built):
            return built
    except (re.error, _Unsupported, RecursionError, OverflowError, ValueError):
        pass
    candidates = (*words, *(f"{a} {b}" for a, b in itertools.pairwise(words)), *_CANDIDATES)
    try:
        return next((c for c in candidates if re.search(pattern, c)), None)
    except re.error:
        return None


def _emit(tree: Any, rng: random.Random, groups: dict[int, str], extra: int) -> str:
    return "".join(_emit_one(op, arg, rng, groups, extra) for op, arg in tree)


def _emit_one(op: Any, arg: Any, rng: random.Random, groups: dict[int, str], extra: int) -> str:
    if op is sre.LITERAL:
        return chr(arg)
    if op is sre.NOT_LITERAL:
        return rng.choice([c for c in ALPHABET if ord(c) != arg])
    if op is sre.ANY:
        return rng.choice(string.ascii_lowercase)
    if op is sre.IN:
        return _from_class(arg, rng)
    if op is sre.BRANCH:
        return _emit(rng.choice(arg[1]), rng, groups, extra)
    if op is sre.SUBPATTERN:
        text = _emit(arg[-1], rng, groups, extra)
        if arg[0] is not None:
            groups[arg[0]] = text
        return text
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, high, sub = arg
        count = rng.randint(low, min(high, low + extra))
        return "".join(_emit(sub, rng, groups, extra) for _ in range(count))
    if op is sre.ATOMIC_GROUP:
        return _emit(arg, rng, groups, extra)
    if op is sre.GROUPREF:
        return groups.get(arg, "")
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):  # the final check decides lookarounds
        return ""
    if op is sre.CATEGORY:
        return _from_class([(op, arg)], rng)
    raise _Unsupported(str(op))


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
