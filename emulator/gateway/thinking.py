"""Reasoning, for models with the `reasoning` capability when a request asks for it
(or, unasked, for the models that always think: `service.reasoning_of`).

What a model "thinks" before it answers: sentences about the words of the last
user message, drawn from a generator of its own (keyed by the request like the
answer's, under another label), so asking for reasoning leaves the answer as it
was. Its length is the request's budget (`canonical.EFFORT_TOKENS`, or
`reasoning.max_tokens`): whole sentences while one fits, at least one
(cut to the budget if it alone is longer).
"""

from __future__ import annotations

import random

from emulator.gateway.tokens import count_text, truncate

_OPENERS = (
    "The user is asking about {a}.",
    "Let me think about what {a} means here.",
    "First, I need to understand the question about {a}.",
    "Okay, so this is a question about {a} and {b}.",
)
_STEPS = (
    "How does {a} relate to {b}?",
    "I should check whether {a} really depends on {b}.",
    "Maybe the simplest way is to start from {a}.",
    "Wait, {b} could change the picture, so keep it in mind.",
    "An example with {a} would make this clearer.",
    "I should not confuse {a} with {b}.",
    "What would someone expect from {a} in practice?",
    "Let me list the main points about {a} before answering.",
    "Hmm, {b} matters too, but {a} comes first.",
    "That seems consistent so far.",
)
_SHORT = ("Hmm, let me see.", "Right.", "Okay.")  # when nothing longer fits
_ROUND_ROOM = 40  # tokens left that are worth another round of thoughts
_CLOSERS = (
    "So the answer should explain {a} briefly and mention {b}.",
    "I think I have enough to answer clearly.",
    "Let me write a short, clear answer about {a}.",
)


def think(
    topics: tuple[str, str], rng: random.Random, budget: int, family: str, enough: int | None = None
) -> str:
    """Reasoning of about `budget` tokens (never more) about the two topics. With `enough`
    (the answer's `max_tokens`, which cuts it), it stops once it has that many: what it
    says up to there is the same, and a budget far above the limit costs no more."""
    a, b = topics
    opener = rng.choice(_OPENERS).format(a=a, b=b)
    spent = count_text(opener, family)
    if spent > budget:
        return truncate(opener, family, budget)[0]
    # Joined once at the end (adding to one string is quadratic in a long budget);
    # none is said twice in a round, so a round's text is what is searched.
    said_all, this_round = [opener], opener
    while enough is None or spent < enough:
        closing = spent * 4 >= budget * 3
        pool = _CLOSERS if closing else _STEPS
        # The drawn sentence, else the first that still fits, else a short one.
        sentence = ""
        for sentence in [*rng.sample(pool, len(pool)), *_SHORT]:
            said = sentence.format(a=a, b=b)
            more = count_text(said, family)
            if spent + more <= budget and said not in this_round:
                said_all.append(said)
                this_round, spent = this_round + " " + said, spent + more
                break
        else:
            if budget - spent < _ROUND_ROOM:
                break
            # Every thought said and room for many more (a high effort): go over the
            # topics again the other way round.
            a, b, this_round = b, a, ""
            continue
        if closing and sentence in _CLOSERS:
            break
    return " ".join(said_all)
