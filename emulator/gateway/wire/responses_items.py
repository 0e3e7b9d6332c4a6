"""The responses wire format's output items, and the ids of a response and its items."""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from emulator.gateway.canonical import Completion, TokenLogprob
from emulator.gateway.logprobs import entry_json


@dataclass(frozen=True)
class Shown:
    """What a client sees of the reasoning: its text as the `summary` (when it asked for
    one), and the text sealed as `encrypted_content` (`include` has
    `reasoning.encrypted_content`, what a client that keeps no state sends back)."""

    summary: bool = True
    sealed: bool = False


SHOWN = Shown()  # a provider's answer to the gateway, which always asks for the summary


_SEAL_PREFIX = "emu-reasoning-v1:"


def response_id(generation_id: str) -> str:
    """A response's id, as OpenAI's start (`resp_`; langchain's `use_previous_response_id`
    looks for it): the usage event's (`gen_...`, `X-Generation-Id`) under that prefix."""
    return "resp_" + item_key(generation_id)


def generation_of(some_id: str) -> str:
    """The usage event's id for a response's id or a message's (`POST /messages`; any
    other id unchanged)."""
    for prefix in ("resp_", "msg_"):
        if some_id.startswith(prefix):
            return "gen_" + some_id[len(prefix) :]
    return some_id


def item_key(response_id: str) -> str:
    """What a response's item ids share with it: `resp_x` has `msg_x`, `rs_x`."""
    return response_id.partition("_")[2] or response_id


def output_items(completion: Completion, id: str, shown: Shown = SHOWN) -> list[dict[str, Any]]:
    """The output items (`id`: their `item_key`); at `max_tokens` the last is `incomplete`
    (the last but its images: `max_tokens` bounds the text, not them), those before it done."""
    items: list[dict[str, Any]] = []
    if completion.reasoning is not None:
        items.append(reasoning_item(id, completion.reasoning, shown))
    if completion.text is not None and not _cut_while_thinking(completion):
        items.append(
            {
                "type": "message",
                "id": f"msg_{id}",
                "status": "completed",
                "role": "assistant",
                "content": [text_part(completion.text, completion.logprobs)],
            }
        )
    items += [image_item(id, i, url, "completed") for i, url in enumerate(completion.images)]
    items += [
        call_item(call_item_id(id, i), c.id, c.name, c.arguments, "completed")
        for i, c in enumerate(completion.tool_calls)
    ]
    if completion.finish_reason == "length":
        cut = [item for item in items if item["type"] != IMAGE_ITEM]
        if cut:
            cut[-1]["status"] = "incomplete"
    return items


def _cut_while_thinking(completion: Completion) -> bool:
    """The token limit was reached before any visible output: OpenAI's API then answers
    the reasoning alone, no empty message (whose "" `text.parse` would fail on)."""
    return (
        completion.text == ""
        and completion.reasoning is not None
        and completion.finish_reason == "length"
        and not completion.tool_calls
    )


def reasoning_item(id: str, text: str, shown: Shown = SHOWN) -> dict[str, Any]:
    """The reasoning's item: its summary is the text, or empty (none asked for)."""
    parts = [summary_part(text)] if shown.summary and text else []
    item: dict[str, Any] = {"type": "reasoning", "id": f"rs_{id}", "summary": parts}
    if shown.sealed:
        item["encrypted_content"] = seal(text)
    return item


def seal(reasoning: str) -> str:
    """The reasoning as opaque `encrypted_content`: the emulator's own, not encryption
    (base64 of a tagged text), so that it can tell its own blobs from mangled ones."""
    return base64.b64encode((_SEAL_PREFIX + reasoning).encode()).decode()


def is_sealed(blob: str) -> bool:
    """Whether `blob` is `encrypted_content` this emulator gave out."""
    try:
        return base64.b64decode(blob, validate=True).decode().startswith(_SEAL_PREFIX)
    except (ValueError, UnicodeDecodeError):
        return False


def summary_part(text: str) -> dict[str, Any]:
    return {"type": "summary_text", "text": text}


def call_item_id(key: str, index: int) -> str:
    """The id of a response's `index`th function call item: its own, as OpenAI's are (a
    call id repeats whenever a request does: the same prompt, the same call)."""
    return f"fc_{key}_{index}"


def call_item(item_id: str, call_id: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


IMAGE_ITEM = "image_generation_call"


def image_item(key: str, index: int, url: str | None, status: str) -> dict[str, Any]:
    """A generated image (`gateway.image_output`) as OpenAI's image generation call item:
    `result` is the PNG's base64 (no data URL prefix), null while it is being made."""
    item: dict[str, Any] = {"type": IMAGE_ITEM, "id": f"ig_{key}_{index}", "status": status}
    if url is None:
        return item | {"result": None}
    data = url.partition(",")[2]
    width, height = struct.unpack(">II", base64.b64decode(data[:32])[16:24])  # IHDR
    return item | {"result": data, "output_format": "png", "size": f"{width}x{height}"}


def image_url(item: dict[str, Any]) -> str:
    """The data URL of an image generation call item's `result`."""
    return "data:image/png;base64," + str(item["result"])


def text_part(text: str, logprobs: Iterable[TokenLogprob] | None = None) -> dict[str, Any]:
    entries = [entry_json(e) for e in logprobs] if logprobs else []
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": entries}
