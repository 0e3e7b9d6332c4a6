"""Scripted replies (fixtures/replies.yaml, `PUT /_emulator/replies`): a rule's
pattern, the models it is for, and its text or tool calls."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import regex

from emulator.gateway.pattern_search import PatternTooSlow, search_compiled

# Patterns are the operator's (fixtures, PUT /_emulator/replies) and run on every
# matching request: one that backtracks without end (`(a|aa)+$`) must not hang the
# server, so a request's searches share one timeout (`pattern_search`; `re` has none).
RULES_BUDGET_S = 0.25
# `regex` spells out every required repeat when it compiles (`a{99999999}` takes
# gigabytes and minutes), and repeats multiply along the nesting: refused past this.
MOST_REQUIRED_REPEATS = 10_000
_QUANTIFIER = regex.compile(r"\{(\d*)(?:,(\d*))?\}")
_log = logging.getLogger("emulator")


def compiled(pattern: str) -> regex.Pattern[str]:
    """The pattern as rules run it; ValueError, in words for the operator, when it does
    not compile or would take too long to."""
    required = required_repeats(pattern)
    if required > MOST_REQUIRED_REPEATS:
        raise ValueError(
            f"its required repeats come to {required:,} or more (the most is "
            f"{MOST_REQUIRED_REPEATS:,}): compiling it would hold the server; use a "
            "smaller count or an open one (`+`, `{1,}`)"
        )
    try:
        return regex.compile(pattern, regex.IGNORECASE)
    except regex.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from exc


def required_repeats(pattern: str) -> int:
    """An upper bound of the items a pattern's required repeats spell out: each item
    counts 1, a group the sum of its items, `{n}`, `{n,}` and `{n,m}` multiply what they
    follow by n (past the most, counting stops)."""
    frames = [[0, 0]]  # per open group: [items summed, the last item's count]
    i, cap = 0, MOST_REQUIRED_REPEATS + 1
    while i < len(pattern):
        char, frame, item = pattern[i], frames[-1], 1
        if char == "\\":
            i += 2
            if pattern[i - 1 : i] in ("p", "P", "N", "x") and pattern.startswith("{", i):
                # \p{L}, \x{41}, \N{name}: one item
                i = pattern.find("}", i) + 1 or len(pattern)
        elif char == "[":
            i = _class_end(pattern, i)
        elif char == "(":
            frames.append([0, 0])
            i += 1
            continue
        elif char == ")" and len(frames) > 1:
            done = frames.pop()
            item, frame = min(done[0] + done[1], cap), frames[-1]
            i += 1
        elif char == "{" and (counted := _QUANTIFIER.match(pattern, i)):
            frame[1] = min(frame[1] * max(int(counted[1] or 0), 1), cap)
            i = counted.end()
            continue
        elif char in "*+?|":
            i += 1
            continue
        else:
            i += 1
        frame[0], frame[1] = min(frame[0] + frame[1], cap), item
    return sum(sum(frame) for frame in frames)


def _class_end(pattern: str, start: int) -> int:
    """Where a character class ends (nested sets, as `regex` has them, included)."""
    depth, i = 0, start
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            depth += 1
            i += 1
            if pattern.startswith("^", i):
                i += 1
            if pattern.startswith("]", i):  # a first `]` is a literal
                i += 1
            continue
        if char == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


@dataclass(frozen=True)
class ScriptedReply:
    """A reply the fixtures script for messages matching a pattern (fixtures/replies.yaml):
    a text (`reply`) or tool calls (`tool_calls`: names and compact JSON arguments)."""

    pattern: regex.Pattern[str]
    reply: str | None
    models: tuple[str, ...]
    tool_calls: tuple[tuple[str, str], ...] = ()

    def answers(self, model: str, text: str) -> bool:
        if self.models and model not in self.models:
            return False
        try:
            return search_compiled(self.pattern, text)
        except PatternTooSlow:
            _log.warning(
                "The scripted reply pattern %r ran out of the %s s a request's rules have "
                "for matching and is taken as not matching it; simplify it (nested "
                "quantifiers backtrack).",
                self.pattern.pattern,
                RULES_BUDGET_S,
            )
            return False

    @classmethod
    def stored(cls, rule: dict[str, Any]) -> ScriptedReply:
        """A rule as the store keeps it (`ReplyFixture.stored`)."""
        calls = tuple(
            (call["name"], json.dumps(call.get("arguments") or {}, separators=(",", ":")))
            for call in rule.get("tool_calls") or ()
        )
        pattern = compiled(rule["pattern"])
        return cls(pattern, rule.get("reply"), tuple(rule.get("models") or ()), calls)
