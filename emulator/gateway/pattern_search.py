"""Regular-expression searches that cannot hold the server.

Patterns come from clients (a JSON schema's `pattern`, `patternProperties`,
`propertyNames`) and from the operator (scripted replies). Python's `re` has no
timeout, and a pattern that backtracks without end (`^(a+)+!`, `(?=(a+)+!)`) holds
the event loop, and with it every other client, for seconds to days. Searches here
run under the `regex` module's timeout, all of one request's under one budget of
matching time (`match_budget`; drawing and checking values around the searches do
not count): past it, `PatternTooSlow` names the pattern, and the caller refuses
the schema (a 400) or takes the rule as not matching.

Patterns are ECMA-262's, as JSON Schema says (`pattern_dialect`). jsonschema calls
`re.search` itself for `pattern`, `patternProperties` and `additionalProperties`, and
`re.compile` for the `regex` format; `timed_jsonschema` gives those modules this search,
and `pattern_dialect.checked`, instead.
"""

from __future__ import annotations

import re
import time
from contextvars import ContextVar, Token
from functools import lru_cache

import regex

from emulator.gateway.pattern_dialect import checked, for_matching

# What one request may spend matching a schema's patterns: a search takes microseconds
# (one of 4,096 characters, 50), so a schema of the largest size the emulator draws
# stays far below it.
BUDGET_S = 1.0
# The matching time left to the searches of the running budget, in seconds.
_left: ContextVar[list[float] | None] = ContextVar("pattern_time_left", default=None)


class PatternTooSlow(Exception):
    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self.pattern = pattern

    def sentence(self) -> str:
        return (
            f"its pattern {self.pattern!r} takes too long to match (nested quantifiers such "
            "as `(a|aa)+` backtrack without end); simplify it"
        )


class match_budget:  # lower case: used as a function would be
    """The searches inside share `seconds` of matching; a budget already running stays
    the one. A class: it runs on every chat request (scripted replies), where a
    generator's context manager costs several calls more."""

    __slots__ = ("_seconds", "_token")

    def __init__(self, seconds: float = BUDGET_S) -> None:
        self._seconds = seconds
        self._token: Token[list[float] | None] | None = None

    def __enter__(self) -> None:
        if _left.get() is None:
            self._token = _left.set([self._seconds])

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _left.reset(self._token)


def search_compiled(pattern: regex.Pattern[str], text: str) -> bool:
    """Whether `pattern` matches somewhere in `text`; PatternTooSlow past the budget
    (a search outside one has a budget of its own)."""
    left = _left.get() or [BUDGET_S]
    if left[0] <= 0:
        raise PatternTooSlow(pattern.pattern)
    start = time.perf_counter()
    try:
        return pattern.search(text, timeout=left[0]) is not None
    except TimeoutError as exc:
        raise PatternTooSlow(pattern.pattern) from exc
    finally:
        left[0] -= time.perf_counter() - start


def search(pattern: str, text: str) -> bool:
    """Whether the ECMA-262 `pattern` matches somewhere in `text` (`re.search` as a
    truth), under the budget; `re.error` when the pattern does not compile, as `re`
    raises it."""
    try:
        return search_compiled(_compiled(pattern), text)
    except PatternTooSlow:
        raise PatternTooSlow(pattern) from None  # named as the client wrote it


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> regex.Pattern[str]:
    """The ECMA-262 `pattern`, compiled with its meaning (`pattern_dialect`)."""
    try:
        return regex.compile(for_matching(pattern))
    except regex.error as exc:
        raise re.error(str(exc)) from exc


@lru_cache(maxsize=1)
def timed_jsonschema() -> None:
    """Point jsonschema's keyword and format checks at `search` and `checked` (once a
    process): they look up `re.search` and `re.compile` on their module's `re`, so that
    name gets a stand-in."""
    from jsonschema import _format, _keywords, _legacy_keywords, _utils

    for module in (_format, _keywords, _legacy_keywords, _utils):
        module.re = _TimedRe()  # type: ignore[attr-defined]


class _TimedRe:
    """`re` as jsonschema's modules see it: `search` under the budget and `compile` of
    ECMA-262 patterns, the rest `re`'s own."""

    search = staticmethod(search)
    compile = staticmethod(checked)

    def __getattr__(self, name: str) -> object:
        return getattr(re, name)
