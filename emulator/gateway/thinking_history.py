"""Thinking sent back on `/messages`, checked as Anthropic's API checks it for its
models: each `thinking` block exactly as it was given (its signature seals its text),
and, while thinking is on, the last assistant turn of a tool loop opening with its
thinking. Agent code that drops or rewrites thinking blocks (a proxy re-encoding the
history, a store that keeps the text only) fails here as it fails in production."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from emulator.errors import ValidationFailed
from emulator.gateway.wire.messages import signed

THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


def check(messages: Sequence[Any], thinking_on: bool) -> None:
    """`messages`: the request's (each with `role` and `content`, a string or blocks)."""
    for index, message in enumerate(messages):
        if isinstance(message.content, str):
            continue
        for at, block in enumerate(message.content):
            if block.type == "thinking" and not _as_given(block.thinking, block.signature):
                raise ValidationFailed(
                    f"messages.{index}.content.{at}: Invalid `signature` in `thinking` block",
                    param=f"messages[{index}].content[{at}].signature",
                )
    if thinking_on:
        _last_tool_turn_opens_with_thinking(messages)


def _as_given(shown: Any, sig: Any) -> bool:
    return isinstance(shown, str) and isinstance(sig, str) and signed(shown, sig)


def _last_tool_turn_opens_with_thinking(messages: Sequence[Any]) -> None:
    index = next((i for i in reversed(range(len(messages))) if messages[i].role == "assistant"), -1)
    if index < 0 or isinstance(messages[index].content, str):
        return
    blocks = messages[index].content
    if not any(block.type == "tool_use" for block in blocks):
        return  # a finished turn: the next question needs no thinking of it
    first = blocks[0].type
    if first not in ("thinking", "redacted_thinking"):
        raise ValidationFailed(
            f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, "
            f"but found `{first}`. When `thinking` is enabled, a final `assistant` message "
            "must start with a thinking block (preceeding the lastmost set of `tool_use` and "
            "`tool_result` blocks). We recommend you include thinking blocks from previous "
            "turns. To avoid this requirement, disable `thinking`. Please consult our "
            f"documentation at {THINKING_DOCS}",
            param=f"messages[{index}].content[0].type",
        )
