"""The messages format's stream: message_start, content blocks (start, deltas, stop),
message_delta and message_stop, written from deltas and read back as deltas."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from emulator.gateway.canonical import (
    CacheUse,
    Delta,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStart,
)
from emulator.gateway.wire import messages


def render_events(
    stream: Iterable[Delta],
    *,
    id: str,
    model: str,
    start: tuple[int, CacheUse | None] = (0, None),
    provider: str | None = None,
    omit_thinking: bool = False,
) -> Iterator[dict[str, Any]]:
    """message_start, content blocks (start, deltas, stop), message_delta, message_stop.
    Reasoning is a first `thinking` block: its deltas (none when `omit_thinking`), then
    its signature. `start`: the
    prompt's tokens and cache use, which message_start's usage tells (the final usage
    is message_delta's). `provider`, the gateway's serving provider, is in message_start's
    message as in the whole answer (none in a provider's own stream)."""
    begun: dict[str, Any] = {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": messages.usage_of(start[0], 0, start[1]),
    }
    if provider is not None:
        begun["provider"] = provider
    yield {"type": "message_start", "message": begun}
    block = -1
    open_block = False
    thoughts: list[str] | None = None  # the open thinking block's text
    for delta in stream:
        if thoughts is not None and not isinstance(delta, ReasoningDelta):
            yield from _close_thinking(block, thoughts, omit_thinking)
            thoughts, open_block = None, False
        if isinstance(delta, ReasoningDelta):
            if thoughts is None:
                block, open_block, thoughts = block + 1, True, []
                thinking = {"type": "thinking", "thinking": "", "signature": ""}
                yield {"type": "content_block_start", "index": block, "content_block": thinking}
            thoughts.append(delta.text)
            if not omit_thinking:
                piece = {"type": "thinking_delta", "thinking": delta.text}
                yield {"type": "content_block_delta", "index": block, "delta": piece}
        elif isinstance(delta, TextDelta):
            if not open_block:
                block, open_block = block + 1, True
                yield {
                    "type": "content_block_start",
                    "index": block,
                    "content_block": {"type": "text", "text": ""},
                }
            yield {
                "type": "content_block_delta",
                "index": block,
                "delta": {"type": "text_delta", "text": delta.text},
            }
        elif isinstance(delta, ToolCallStart):
            if open_block:
                yield {"type": "content_block_stop", "index": block}
            block, open_block = block + 1, True
            tool = {"type": "tool_use", "id": delta.id, "name": delta.name, "input": {}}
            yield {"type": "content_block_start", "index": block, "content_block": tool}
        elif isinstance(delta, ToolArgumentsDelta):
            piece = {"type": "input_json_delta", "partial_json": delta.fragment}
            yield {"type": "content_block_delta", "index": block, "delta": piece}
        elif isinstance(delta, Finish):  # images: none in this format (image_output)
            if open_block:
                yield {"type": "content_block_stop", "index": block}
            usage = messages.usage_of(delta.input_tokens, delta.output_tokens, delta.cache)
            yield {
                "type": "message_delta",
                "delta": {
                    "stop_reason": messages.stop_reason_of(delta.reason, delta.stop_sequence),
                    "stop_sequence": delta.stop_sequence,
                },
                "usage": usage,
            }
            yield {"type": "message_stop"}


def _close_thinking(block: int, thoughts: list[str], omitted: bool) -> Iterator[dict[str, Any]]:
    thought = "".join(thoughts)
    sig = messages.signature(thought, "" if omitted else None)
    piece = {"type": "signature_delta", "signature": sig}
    yield {"type": "content_block_delta", "index": block, "delta": piece}
    yield {"type": "content_block_stop", "index": block}


def parse_events(events: Iterable[dict[str, Any]]) -> Iterator[Delta]:
    tools: dict[int, int] = {}  # block index -> tool call index
    thoughts: list[str] = []
    for event in events:
        kind = event["type"]
        if kind == "content_block_start" and event["content_block"]["type"] == "tool_use":
            block = event["content_block"]
            tools[event["index"]] = len(tools)
            yield ToolCallStart(tools[event["index"]], block["id"], block["name"])
        elif kind == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "text_delta":
                yield TextDelta(delta["text"])
            elif delta["type"] == "thinking_delta":
                thoughts.append(delta["thinking"])
                yield ReasoningDelta(delta["thinking"])
            elif delta["type"] == "input_json_delta":
                yield ToolArgumentsDelta(tools[event["index"]], delta["partial_json"])
        elif kind == "message_delta":
            usage = event["usage"]
            reason = messages.FINISH[event["delta"]["stop_reason"]]
            reasoning = messages.thinking_tokens("".join(thoughts))
            prompt, cache = messages.prompt_of(usage)
            stop = event["delta"].get("stop_sequence")
            yield Finish(reason, prompt, usage["output_tokens"], 0, reasoning, cache, stop)
