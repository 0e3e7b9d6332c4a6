"""What a generated answer is about: two of the prompt's topic words at a time.

A long answer (`[emulator:tokens=N]`) draws a pair for each paragraph, so the
prompt is read once (its topic words, and its proper names when a word may be
one), not once a paragraph: that was the prompt's length times the answer's.
"""

from __future__ import annotations

import random

from emulator.gateway.prompt_facts import proper_names
from emulator.gateway.schema_values import WORDS
from emulator.gateway.topic_words import topic_words


class Topics:
    """The topic words of one prompt, each written as the prompt writes it when it is
    part of a proper name ("Rome"), else lower-cased."""

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt
        self.words = topic_words(prompt) or list(WORDS)
        self._others: dict[str, list[str]] = {}
        self._cased: dict[str, str] = {}
        self._names: tuple[str, ...] | None = None

    def pair(self, rng: random.Random) -> tuple[str, str]:
        """A topic word and a different one (of WORDS when the prompt has one only)."""
        a = rng.choice(self.words)
        others = self._others.get(a)
        if others is None:
            others = self._others[a] = [w for w in self.words if w != a] or list(WORDS)
        return self.cased(a), self.cased(rng.choice(others))

    def cased(self, word: str) -> str:
        if word not in self._cased:
            self._cased[word] = self._as_written(word)
        return self._cased[word]

    def _as_written(self, word: str) -> str:
        if word.capitalize() not in self.prompt:  # the cheap test first: most are no names
            return word
        if self._names is None:
            self._names = proper_names(self.prompt)
        named = (w for name in self._names for w in name.split() if w.lower() == word)
        return next(named, word)
