"""Scripted replies (fixtures/replies.yaml, `PUT /_emulator/replies`): a rule's
pattern, the models it is for, and its text or tool calls."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import regex

# Patterns are the operator's (fixtures, PUT /_emulator/replies) and run on every
# matching request: one that backtracks without end (`(a|aa)+$`) must not hang the
# server, so they run under the `regex` module's timeout (`re` has none).
PATTERN_TIMEOUT_S = 0.1
_log = logging.getLogger("emulator")


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
            return self.pattern.search(text, timeout=PATTERN_TIMEOUT_S) is not None
        except TimeoutError:
            _log.warning(
                "The scripted reply pattern %r took over %s s on a message and is taken as "
                "not matching it; simplify it (nested quantifiers backtrack).",
                self.pattern.pattern,
                PATTERN_TIMEOUT_S,
            )
            return False

    @classmethod
    def stored(cls, rule: dict[str, Any]) -> ScriptedReply:
        """A rule as the store keeps it (`ReplyFixture.stored`)."""
        calls = tuple(
            (call["name"], json.dumps(call.get("arguments") or {}, separators=(",", ":")))
            for call in rule.get("tool_calls") or ()
        )
        pattern = regex.compile(rule["pattern"], regex.IGNORECASE)
        return cls(pattern, rule.get("reply"), tuple(rule.get("models") or ()), calls)
