"""OpenRouter's middle-out compression: a prompt too long for its routes' context is cut
from the middle until it fits, instead of being refused.

Asked for by `transforms: ["middle-out"]` or the plugin `{"id": "context-compression"}`,
or on `/responses` by OpenAI's `truncation: "auto"` (which drops input items from the
middle of the conversation too; `"disabled"` refuses a prompt too long, as OpenAI does);
on by default for a route of 8,192 tokens of context or less (`transforms: []` turns
that off), as OpenRouter does. Whole messages go first, the middlemost first; the first
and the last message stay, and tool calls go with their results, a turn's run of
calls and results together (a provider refuses a result without its call). If the two
left are still too long, the longest message loses the middle of its text to a `…`.
All of it is counted in the route's own tokenizer, so what is billed is what was sent.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from emulator.gateway.canonical import Message, Request
from emulator.gateway.content import tools_text
from emulator.gateway.tokens import count_messages, count_text, token_spans

DEFAULT_UP_TO = 8192  # context length at or under which it is on unless turned off
_GAP = "\n…\n"  # where a message's middle was taken out (one token in every family)


def asked(body: dict[str, Any]) -> bool | None:
    """True when the body asks for it, False when its `transforms` leave it out, None
    when it says nothing (the route's context decides)."""
    plugins = body.get("plugins") or ()
    if any(p.get("id") == "context-compression" and p.get("enabled", True) for p in plugins):
        return True
    transforms = body.get("transforms")
    if transforms is not None:
        return "middle-out" in transforms
    truncation = body.get("truncation") if "input" in body else None  # responses' own
    return None if truncation is None else truncation == "auto"


def applies(mode: bool | None, context_length: int) -> bool:
    return mode if mode is not None else context_length <= DEFAULT_UP_TO


def compress(request: Request, family: str, budget: int) -> Request:
    """The request with its prompt cut to `budget` tokens of `family`, as near as the
    first and last messages and the tools allow (the caller checks the result)."""
    fixed = count_text(tools_text(request), family)
    groups = _groups(request.messages)
    sizes = [count_messages(group, family) for group in groups]
    total = fixed + sum(sizes)
    while total > budget and len(groups) > 2:
        middle = len(groups) // 2
        total -= sizes.pop(middle)
        groups.pop(middle)
    messages = [m for group in groups for m in group]
    if total > budget:
        messages = _shorten_longest(messages, family, total - budget)
    return replace(request, messages=tuple(messages))


def _groups(messages: tuple[Message, ...]) -> list[list[Message]]:
    """The messages in the units they can be dropped in: an assistant's tool calls with
    their results (a turn's parallel calls may come as several assistant messages before
    the results: they join while results are awaited); any other message alone."""
    groups: list[list[Message]] = []
    awaited: set[str] = set()  # the open group's calls without a result yet
    for message in messages:
        calls = {c.id for c in message.tool_calls} if message.role == "assistant" else set()
        joins = bool(awaited) and (bool(calls) or message.role == "tool")
        if joins:
            groups[-1].append(message)
        else:
            groups.append([message])
            awaited = set()
        awaited |= calls
        if message.role == "tool":
            awaited.discard(message.tool_call_id or "")
    return groups


def _shorten_longest(messages: list[Message], family: str, excess: int) -> list[Message]:
    """The messages with the middle of the longest one's text taken out: `excess` tokens
    and the one the gap marker costs."""
    longest = max(range(len(messages)), key=lambda i: count_text(messages[i].text, family))
    message = messages[longest]
    spans = token_spans(message.text, family)
    keep = len(spans) - excess - 1
    if keep < 2:  # the text alone cannot make room: leave it, the route check refuses
        return messages
    head, tail = spans[keep // 2 - 1][1], spans[len(spans) - (keep - keep // 2)][0]
    text = message.text[:head] + _GAP + message.text[tail:]
    # A cache breakpoint in the part taken out goes; one after it moves with its text.
    moved = len(_GAP) - (tail - head)
    marks = tuple(
        mark if mark.offset <= head else replace(mark, offset=mark.offset + moved)
        for mark in message.cache_marks
        if mark.offset <= head or mark.offset >= tail
    )
    shorter = replace(message, text=text, cache_marks=marks)
    return [*messages[:longest], shorter, *messages[longest + 1 :]]
