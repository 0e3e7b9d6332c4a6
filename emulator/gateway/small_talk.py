"""Small talk: a message that only greets, asks how the model is, thanks, says goodbye
or acknowledges ("hi", "Hello there!", "hi, how are you?", "thanks a lot", "bye", "ok,
got it") gets a short reply in kind, not sentences about its words, and no tool call
under `tool_choice` `auto`: a real model answers "hi" in words, whatever its tools.

A message with anything else in it ("hi, what's the weather in Paris?") is not small
talk. The reply is drawn from a few per kind by the request's seeded randomness.
"""

from __future__ import annotations

import random
import re

# One phrase of each kind; a message is small talk when it is one or more of them,
# with punctuation, a name or a word of address between.
_PHRASES = {
    "greeting": r"(?:hi|hello|hey|hiya|howdy|greetings|yo|good (?:morning|afternoon|evening|day))",
    "wellbeing": r"(?:how are you(?: doing)?|how(?:'s| is) it going|how are things|what's up|sup)",
    "thanks": r"(?:thanks|thank you|thx|ty|cheers|much appreciated|appreciate it)",
    "farewell": r"(?:bye|goodbye|bye bye|good ?night|see you(?: later| soon)?|see ya|cya)",
    "acknowledgment": (
        r"(?:ok|okay|cool|great|nice|perfect|awesome|got it|sounds good|makes sense|all good)"
    ),
}
_ADDRESS = (
    r"(?:there|everyone|all|again|friend|buddy|bot|assistant|so much|a lot|very much|today"
    r"|claude|gpt|chatgpt|gemini)"
)
_PHRASE = re.compile("|".join(rf"\b(?P<{kind}>{p})\b" for kind, p in _PHRASES.items()))
_WHOLE = re.compile(
    rf"(?:(?:{'|'.join(_PHRASES.values())})\b(?:\s+{_ADDRESS}\b)*[\s,.!?;:~)(-]*)+",
)
_LONGEST = 80  # characters: more is a message with something to say

REPLIES = {
    "greeting": (
        "Hello! How can I help you today?",
        "Hi there! What can I do for you?",
        "Hey! What would you like to talk about?",
    ),
    "wellbeing": (
        "I'm doing well, thanks for asking! How can I help you today?",
        "All good here, thank you! What can I do for you?",
        "I'm great, thanks! What's on your mind?",
    ),
    "thanks": (
        "You're welcome! Let me know if there's anything else I can help with.",
        "Happy to help! Anything else?",
        "Glad I could help. Just ask if you need anything else.",
    ),
    "farewell": (
        "Goodbye! Have a great day.",
        "Bye! Come back any time.",
        "See you later! Take care.",
    ),
    "acknowledgment": (
        "Great! Let me know if there's anything else I can help with.",
        "Glad that works. Anything else?",
        "Sounds good. Just ask if you need anything else.",
    ),
}
# A message of several kinds is answered for the one that asks most of a reply.
_ORDER = ("wellbeing", "farewell", "thanks", "greeting", "acknowledgment")


def kind_of(text: str) -> str | None:
    """The kind of small talk `text` is, or None when it says anything else."""
    said = text.strip().lower().replace("\u2019", "'")
    if not said or len(said) > _LONGEST or _WHOLE.fullmatch(said) is None:
        return None
    kinds = {m.lastgroup for m in _PHRASE.finditer(said)}
    return next(kind for kind in _ORDER if kind in kinds)


def reply(kind: str, rng: random.Random) -> str:
    return rng.choice(REPLIES[kind])
