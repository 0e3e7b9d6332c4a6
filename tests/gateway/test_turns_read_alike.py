"""An assistant turn sent back reads as one message in the chat and responses formats
alike (`wire/responses_input`): its text, its images (chat's `message.images`, the
responses API's `image_generation_call` items, before or after the text) and its calls."""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from emulator.gateway.image_output import gradient_png
from emulator.gateway.wire import chat, responses

PICTURES = [base64.b64encode(gradient_png(16, 16, (n, 0, 0), (0, 0, n))).decode() for n in range(3)]
QUESTION = {"role": "user", "content": "Draw it"}
FOLLOW = {"role": "user", "content": "Again"}


def chat_turn(text: str, images: list[str], calls: list[str]) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": "assistant", "content": text or None}
    if images:
        turn["images"] = [
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b}"}}
            for b in images
        ]
    if calls:
        turn["tool_calls"] = [
            {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}}
            for c in calls
        ]
    return turn


def responses_turn(
    text: str, images: list[str], calls: list[str], images_first: bool
) -> list[dict[str, Any]]:
    pictures = [
        {"type": "image_generation_call", "id": f"ig_{n}", "status": "completed", "result": b}
        for n, b in enumerate(images)
    ]
    said = [{"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": text}]}] if text else []  # fmt: skip
    called = [
        {"type": "function_call", "call_id": c, "name": "f", "arguments": "{}"} for c in calls
    ]
    # OpenAI's image tool shows its picture before the text; chat's image output after.
    return (pictures + said if images_first else said + pictures) + called


@given(
    text=st.sampled_from(["", "Here it is.", "Two\nlines"]),
    images=st.lists(st.sampled_from(PICTURES), max_size=2),
    calls=st.lists(st.sampled_from(["call_a", "call_b"]), max_size=2, unique=True),
    images_first=st.booleans(),
)
def test_a_turn_sent_back_reads_the_same_in_both_formats(
    text: str, images: list[str], calls: list[str], images_first: bool
) -> None:
    if not (text or images or calls):
        return  # not a turn either format sends
    from_chat = chat.parse_request(
        {"model": "m", "messages": [QUESTION, chat_turn(text, images, calls), FOLLOW]}
    ).messages
    items = [QUESTION, *responses_turn(text, images, calls, images_first), FOLLOW]
    from_responses = responses.parse_request({"model": "m", "input": items}).messages
    assert from_responses == from_chat
    assert len(from_responses) == 3  # one assistant message between the two questions
