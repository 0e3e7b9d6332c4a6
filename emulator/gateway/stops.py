"""Stop sequences the gateway applies itself, for providers whose format has no `stop`.

The responses format carries no stop sequences, so a `stop` sent to a model
served by a responses-format provider would be lost on the way. As a real
gateway does, this one then cuts the provider's answer where the first stop
sequence starts (finish `stop`, the output tokens of what is kept), whole or
streamed, log probabilities cut with the text. Providers that take `stop`
themselves (chat, messages) are left alone; their generator stops by the same rule
(`first_stop`: the stop sequence written whole first).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from emulator.gateway import logprobs
from emulator.gateway.canonical import Completion, Delta, Finish, ReasoningDelta, TextDelta
from emulator.gateway.tokens import count_text


def first_stop(text: str, stops: Iterable[str]) -> tuple[int, str] | None:
    """The stop sequence a model writing the text stops at, and where it starts: the one
    whose end it writes first (of two that end together, the longer)."""
    found: tuple[int, int, str] | None = None  # (end, start, stop)
    for stop in stops:
        start = text.find(stop) if stop else -1
        if start >= 0 and (found is None or (start + len(stop), start) < found[:2]):
            found = (start + len(stop), start, stop)
    return None if found is None else (found[1], found[2])


def cut_completion(completion: Completion, stops: tuple[str, ...], family: str) -> Completion:
    found = first_stop(completion.text or "", stops)
    if found is None:
        return completion
    end, stop = found
    text = (completion.text or "")[:end]
    output = completion.reasoning_tokens + count_text(text, family)  # reasoning stays
    entries = completion.logprobs
    return Completion(
        text,
        (),
        "stop",
        completion.input_tokens,
        output,
        completion.reasoning,
        completion.reasoning_tokens,
        None if entries is None else logprobs.cut(entries, end),
        completion.cache,
        stop,
    )


def cut_deltas(deltas: list[Delta], stops: tuple[str, ...], family: str) -> list[Delta]:
    """Each choice's stream up to its first stop sequence, then its end."""
    choices = sorted({d.choice for d in deltas})
    if len(choices) == 1:
        return _cut_choice(deltas, stops, family)
    cut = [_cut_choice([d for d in deltas if d.choice == c], stops, family) for c in choices]
    return [delta for one in cut for delta in one]


def _cut_choice(deltas: list[Delta], stops: tuple[str, ...], family: str) -> list[Delta]:
    text = "".join(d.text for d in deltas if isinstance(d, TextDelta))
    found = first_stop(text, stops)
    if found is None:
        return deltas
    end, stop = found
    finish = next(d for d in reversed(deltas) if isinstance(d, Finish))
    kept: list[Delta] = []
    start = 0
    for delta in deltas:
        if isinstance(delta, ReasoningDelta):  # before the answer: never cut
            kept.append(delta)
            continue
        if start >= end:
            break  # after the stop nothing more is sent, a tool call included
        if isinstance(delta, TextDelta):
            piece = delta.text[: end - start]
            start += len(delta.text)
            entries = delta.logprobs
            if entries is not None:
                entries = logprobs.cut(entries, len(piece))
            kept.append(TextDelta(piece, delta.choice, entries))
        elif not isinstance(delta, Finish):
            kept.append(delta)
    output = finish.reasoning_tokens + count_text(text[:end], family)
    kept.append(replace(finish, reason="stop", output_tokens=output, stop_sequence=stop))
    return kept
