"""The responses format's input items as messages (an earlier answer's items sent back
read as one assistant turn, as the other formats read it) and a message's images as
`input_image` parts."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from emulator.gateway.canonical import Message, ToolCall, role_of
from emulator.gateway.pictures import MEDIA_TYPES
from emulator.gateway.wire.chat import content_text
from emulator.gateway.wire.image_refs import pictures_of
from emulator.gateway.wire.responses_items import IMAGE_ITEM

# Items of an earlier answer sent back that the model does not read again: its
# reasoning and the gateway's server tool calls (their results were in its prompt). Its
# images (`image_generation_call`) it sees again, as chat's `message.images` sent back.
NOT_READ = frozenset(
    {
        "reasoning",
        "openrouter:web_search",
        "web_search_call",
        "openrouter:datetime",
        "openrouter:web_fetch",
        "openrouter:image_generation",
    }
)


def input_messages(items: list[dict[str, Any]]) -> list[Message]:
    """A request's input items as the messages the model reads."""
    messages: list[Message] = []
    for item in items:
        kind = item.get("type")
        if kind in NOT_READ or (kind == IMAGE_ITEM and not item.get("result")):
            continue  # an earlier answer's, sent back (a failed image: no picture)
        message = _item(item)
        last = messages[-1] if messages else None
        if last is not None and _one_turn(last, message, kind):
            # One turn's calls and images (and the text before them) are one assistant
            # message, as in the other formats: the turn reads and counts the same.
            messages[-1] = _joined(last, message)
        else:
            messages.append(message)
    return messages


def _one_turn(last: Message, message: Message, kind: Any) -> bool:
    """Whether `message` (an item of type `kind`) continues the assistant turn `last`: a
    call or an image after its text, or its text after an image alone (OpenAI's tool)."""
    if last.role != "assistant" or message.role != "assistant":
        return False
    if kind in ("function_call", IMAGE_ITEM):
        return True
    return not last.text and not last.tool_calls and bool(last.pictures)


def _joined(last: Message, message: Message) -> Message:
    """One message of two (`_one_turn`: at most one of them has text)."""
    return replace(
        last,
        text=last.text or message.text,
        images=last.images + message.images,
        pictures=last.pictures + message.pictures,
        tool_calls=last.tool_calls + message.tool_calls,
        cache_marks=last.cache_marks + message.cache_marks,
        audio=last.audio + message.audio,
    )


def _item(item: dict[str, Any]) -> Message:
    kind = item.get("type", "message")
    if kind == IMAGE_ITEM:  # an earlier answer's image, seen again
        media = MEDIA_TYPES.get(item.get("output_format") or "png", "image/png")
        picture = f"data:{media};base64,{item['result']}"
        return Message("assistant", images=1, pictures=(picture,))
    if kind == "function_call":
        call = ToolCall(item["call_id"], item["name"], item.get("arguments", ""))
        return Message("assistant", tool_calls=(call,))
    if kind == "function_call_output":
        output = item.get("output", "")
        if isinstance(output, list):  # content parts: text and images, as a message's
            text, images, clips = content_text(output)
            return Message(
                "tool",
                text,
                len(images),
                tool_call_id=item["call_id"],
                audio=clips,
                pictures=images,
            )
        text = output if isinstance(output, str) else json.dumps(output)
        return Message("tool", text, tool_call_id=item["call_id"])
    role = role_of(item["role"])
    text, images, clips = content_text(item.get("content"))
    return Message(role, text, len(images), audio=clips, pictures=images)


def input_images(m: Message) -> list[dict[str, Any]]:
    """A message's images as `input_image` parts: each as sent (`Message.pictures`)."""
    return [_input_image(picture) for picture in pictures_of(m)]


def _input_image(picture: str) -> dict[str, Any]:
    if picture.startswith("file:"):
        return {"type": "input_image", "file_id": picture[5:]}
    return {"type": "input_image", "image_url": picture}
