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
from emulator.gateway.topic_words import topic_words

_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def likeliest(tools: Sequence[Tool], message: str) -> Tool:
    """The tool `message` is most about (the first of equals)."""
    if len(tools) == 1:
        return tools[0]
    said = {_singular(w) for w in topic_words(message)}
    if not said:
        return tools[0]
    scores = [len(said & _words(tool)) for tool in tools]
    return tools[scores.index(max(scores))]


def _words(tool: Tool) -> set[str]:
    """A tool's name (`get_time`, `getTime`) and description as singular lower-case words."""
    parts = _PART.findall(tool.name.replace("_", " ").replace("-", " "))
    parts += re.findall(r"[A-Za-z]+", tool.description)
    return {_singular(p.lower()) for p in parts}


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word
