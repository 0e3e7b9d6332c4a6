"""Which tool a generated answer calls: the one the user's message is about.

Given `get_weather` and `get_time`, "What time is it in Tokyo?" calls `get_time`.
Each tool is scored by the words of the message (four letters or more, less the
common ones: `topic_words`, in the singular) found among the words of its name
and description; the highest score wins, the first tool on a tie (so a message
that names none calls the first, as before).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from emulator.gateway.canonical import Tool
from emulator.gateway.prompt_hints import name_words, singular
from emulator.gateway.topic_words import topic_words

_LETTERS = re.compile(r"[A-Za-z]+")


def likeliest(tools: Sequence[Tool], message: str) -> Tool:
    """The tool `message` is most about (the first of equals)."""
    if len(tools) == 1:
        return tools[0]
    said = {singular(w) for w in topic_words(message)}
    if not said:
        return tools[0]
    scores = [len(said & _words(tool)) for tool in tools]
    return tools[scores.index(max(scores))]


def _words(tool: Tool) -> set[str]:
    """A tool's name (`get_time`, `getTime`) and description as singular lower-case words."""
    described = {singular(word.lower()) for word in _LETTERS.findall(tool.description)}
    return name_words(tool.name) | described
