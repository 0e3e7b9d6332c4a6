"""Log probabilities of an answer's tokens: made up, deterministic, and consistent.

A fake provider has no model to ask, so the numbers are drawn from the
request's seeded generator; what a client can check holds all the same:

- the tokens are the serving provider's tokens (`tokens.py`) and join to the
  text exactly (a token carries the spaces before it, as real tokenizers' do;
  spaces at the end go with the last token), so there is one entry per output
  token of the text;
- each `logprob` is at most 0, and `top` lists the requested number of most
  likely tokens, the chosen one first, in decreasing order, distinct, their
  probabilities adding up to less than 1;
- the same request gives the same numbers.

Wire formats carry the entries as OpenAI's do: `entry_json` / `entry_of`.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Sequence
from typing import Any

from emulator.gateway.canonical import TokenLogprob
from emulator.gateway.tokens import piece_length, token_spans

# The wire formats that carry log probabilities (the messages format has none: a
# provider speaking it answers without them, as the real gateway passes that on).
FORMATS = frozenset({"chat", "responses"})
# Tokens a model might have written instead: short common words (cut to the
# family's longest token) for a word, punctuation for punctuation.
_WORDS = (
    "the", "a", "and", "to", "of", "in", "is", "it", "that", "for", "on", "with", "as",
    "you", "this", "be", "are", "can", "how", "what", "when", "more", "some", "each",
    "your", "all", "one", "but", "not", "or", "by", "at", "from", "so", "we", "an", "if",
    "do", "has", "its", "they", "then", "here", "just", "also", "well", "most", "new",
)  # fmt: skip
_MARKS = (".", ",", "!", "?", ";", ":", "-", "\n", ")", "'", '"', "…", "/", "(", "*",
          "#", "&", "+", "=", "%", "@", "~")  # fmt: skip


def token_texts(text: str, family: str) -> list[str]:
    """The text cut into its tokens, each with the spaces before it; they join to `text`."""
    spans = token_spans(text, family)
    if not spans:
        return [text] if text else []
    cuts = [end for _, end in spans[:-1]]
    bounds = zip([0, *cuts], [*cuts, len(text)], strict=True)
    return [text[start:end] for start, end in bounds]


def draw(text: str, family: str, rng: random.Random, top: int) -> tuple[TokenLogprob, ...]:
    """An entry for each token of `text`, with `top` tokens most likely at its place."""
    longest = piece_length(family)
    return tuple(_entry(token, rng, top, longest) for token in token_texts(text, family))


def _entry(token: str, rng: random.Random, top: int, longest: int) -> TokenLogprob:
    # Mostly sure of itself, as a model is on most tokens of fluent text; never below
    # 0.35, so that the token written is also the most likely one.
    chosen = 1.0 - (0.6 * rng.random() ** 4 if rng.random() < 0.8 else 0.65 * rng.random())
    logprob = round(math.log(chosen), 6)
    if top == 0:
        return TokenLogprob(token, logprob)
    others = _alternatives(token, rng, top - 1, longest)
    weights = sorted((rng.random() for _ in others), reverse=True)
    room = (1.0 - chosen) * rng.uniform(0.5, 0.95)  # what the alternatives share
    scale = room / (sum(weights) or 1.0)
    if weights and weights[0] * scale > 0.9 * chosen:  # the first stays below the token
        scale = 0.9 * chosen / weights[0]
    ranked = [(token, logprob)]
    ranked += [
        (other, round(math.log(max(weight * scale, 1e-12)), 6))
        for other, weight in zip(others, weights, strict=True)
    ]
    return TokenLogprob(token, logprob, tuple(ranked))


def _alternatives(token: str, rng: random.Random, count: int, longest: int) -> list[str]:
    """`count` distinct tokens other than `token`, in its style (its leading spaces, its
    capital, a word for a word)."""
    core = token.lstrip()
    kind = ("Word" if core[:1].isupper() else "word") if core[:1].isalnum() else "mark"
    pool = list(_pool(token[: len(token) - len(core)], kind, longest))
    if token in pool:
        pool.remove(token)
    return rng.sample(pool, min(count, len(pool)))


@functools.lru_cache(maxsize=512)
def _pool(lead: str, kind: str, longest: int) -> tuple[str, ...]:
    if kind == "mark":
        return tuple(dict.fromkeys(lead + mark for mark in _MARKS))
    words = (w[:longest].capitalize() if kind == "Word" else w[:longest] for w in _WORDS)
    return tuple(dict.fromkeys(lead + word for word in words))


def cut(entries: Sequence[TokenLogprob], length: int) -> tuple[TokenLogprob, ...]:
    """The entries of the text's first `length` characters: a token the cut goes through
    is kept up to it, so that the tokens still join to the kept text."""
    kept: list[TokenLogprob] = []
    used = 0
    for entry in entries:
        if used >= length:
            break
        room = length - used
        kept.append(entry if len(entry.token) <= room else _shortened(entry, room))
        used += len(entry.token)
    return tuple(kept)


def _shortened(entry: TokenLogprob, room: int) -> TokenLogprob:
    return TokenLogprob(entry.token[:room], entry.logprob, entry.top)


def split(entries: Sequence[TokenLogprob], pieces: Sequence[str]) -> list[tuple[TokenLogprob, ...]]:
    """The entries of each piece of a text cut into `pieces` (cut between tokens, as a
    provider streams it): a token belongs to the piece it starts in."""
    out: list[tuple[TokenLogprob, ...]] = []
    at, start, end = 0, 0, 0
    for piece in pieces:
        end += len(piece)
        taken = at
        while taken < len(entries) and start < end:
            start += len(entries[taken].token)
            taken += 1
        out.append(tuple(entries[at:taken]))
        at = taken
    return out


def entry_json(entry: TokenLogprob, *, with_bytes: bool = True) -> dict[str, Any]:
    """An entry as OpenAI's APIs write it: `token`, `logprob`, `bytes` (UTF-8) and
    `top_logprobs`. The responses stream's events leave out `bytes`."""
    if with_bytes:
        top = [
            {"token": token, "logprob": logprob, "bytes": _utf8(token)}
            for token, logprob in entry.top
        ]
        return {
            "token": entry.token,
            "logprob": entry.logprob,
            "bytes": _utf8(entry.token),
            "top_logprobs": top,
        }
    top = [{"token": token, "logprob": logprob} for token, logprob in entry.top]
    return {"token": entry.token, "logprob": entry.logprob, "top_logprobs": top}


@functools.lru_cache(maxsize=4096)
def _utf8(token: str) -> list[int]:
    """The token's UTF-8 bytes as the wire lists them; one list for every entry of the
    same token (only ever encoded), as most of them are a few common words'."""
    return list(token.encode())


def entry_of(raw: dict[str, Any]) -> TokenLogprob:
    """An entry read back from its wire form."""
    top = tuple((t["token"], t["logprob"]) for t in raw.get("top_logprobs") or ())
    return TokenLogprob(raw["token"], raw["logprob"], top)


def entries_of(raw: Sequence[dict[str, Any]] | None) -> tuple[TokenLogprob, ...] | None:
    return None if raw is None else tuple(entry_of(item) for item in raw)
