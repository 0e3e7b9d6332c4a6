"""Tool calls and their results pair up, as every provider format requires.

OpenAI's APIs and the messages format refuse a conversation whose tool results
do not answer the calls before them, and the real gateway relays that refusal as
a 400. Checked here, before routing or holding anything, so that a client's
forgotten or misnumbered tool result fails in its tests as it would in
production.

Chat is strict about order: an assistant message's `tool_calls` are answered by
the `tool` messages right after it, one per call, before any other message. The
responses API only pairs them: each `function_call_output` answers a
`function_call` of the same input or of the turns before it
(`previous_response_id`), and each call has its output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from emulator.errors import InvalidRequest, ValidationFailed

UNANSWERED = "tool_result_missing"
UNKNOWN = "tool_call_not_found"
REPEATED = "duplicate_tool_call_id"


def check_tool_turns(
    body: dict[str, Any], endpoint: str, history: Sequence[dict[str, Any]] = ()
) -> None:
    """Raise the 400 the provider would answer when calls and results do not pair up.
    `history`: the items of a responses request's earlier turns, before its input."""
    if endpoint == "chat.completions":
        _check_chat(body["messages"])
    else:
        given = body["input"]
        _check_items(given if isinstance(given, list) else [], history)


def _check_chat(messages: Sequence[dict[str, Any]]) -> None:
    waiting: dict[str, int] = {}  # the last assistant message's unanswered calls
    answered: set[str] = set()
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            _answer_chat(index, message.get("tool_call_id"), waiting, answered)
            continue
        _unanswered(waiting, "messages[{}].tool_calls", _CHAT_ANSWER)
        answered.clear()
        if role == "assistant" and message.get("tool_calls"):
            for place, call in enumerate(message["tool_calls"]):
                if call["id"] in waiting:
                    raise _repeated(call["id"], f"messages[{index}].tool_calls[{place}].id")
                waiting[call["id"]] = index
    _unanswered(waiting, "messages[{}].tool_calls", _CHAT_ANSWER)


def _answer_chat(
    index: int, call_id: str | None, waiting: dict[str, int], answered: set[str]
) -> None:
    param = f"messages[{index}].tool_call_id"
    if not call_id:
        raise ValidationFailed(
            "A message with role `tool` needs the `tool_call_id` it answers.", param=param
        )
    if call_id in answered:
        raise InvalidRequest(
            f"messages[{index}] answers tool call {call_id!r} a second time: send one `tool` "
            "message per call.",
            param=param,
            code=REPEATED,
        )
    if call_id not in waiting:
        raise InvalidRequest(
            f"messages[{index}] (role `tool`) answers tool call {call_id!r}, which the "
            "assistant message before it did not make. A `tool` message must follow the "
            "assistant message whose `tool_calls` it answers, with that call's `id`.",
            param=param,
            code=UNKNOWN,
        )
    del waiting[call_id]
    answered.add(call_id)


def _check_items(items: Sequence[dict[str, Any]], history: Sequence[dict[str, Any]]) -> None:
    # The earlier turns' calls and outputs, at index -1: they were checked in their turn.
    calls = {i["call_id"]: -1 for i in history if i.get("type") == "function_call"}
    outputs = {i["call_id"]: -1 for i in history if i.get("type") == "function_call_output"}
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind == "function_call":
            if item["call_id"] in calls:
                raise _repeated(item["call_id"], f"input[{index}].call_id")
            calls[item["call_id"]] = index
        elif kind == "function_call_output":
            if item["call_id"] in outputs:
                raise InvalidRequest(
                    f"input[{index}] is a second output for call {item['call_id']!r}: send one "
                    "function_call_output per call.",
                    param=f"input[{index}].call_id",
                    code=REPEATED,
                )
            outputs[item["call_id"]] = index
    for call_id, index in outputs.items():
        if call_id not in calls:
            raise InvalidRequest(
                f"No tool call found for function call output with call_id {call_id!r}: "
                "send the function_call item (or an item_reference to it) in `input` too, "
                "or continue the response that made it (`previous_response_id`).",
                param=f"input[{index}].call_id",
                code=UNKNOWN,
            )
    missing = {call_id: index for call_id, index in calls.items() if call_id not in outputs}
    _unanswered(missing, "input[{}]", _ITEM_ANSWER)


_CHAT_ANSWER = (
    "follow the assistant message with one `tool` message per call (its `tool_call_id` "
    "the call's `id`) before any other message"
)
_ITEM_ANSWER = "add a `function_call_output` item with the same `call_id` for each call"


def _unanswered(waiting: dict[str, int], where: str, how: str) -> None:
    if not waiting:
        return
    ids = ", ".join(repr(call_id) for call_id in waiting)
    first = next(iter(waiting.values()))
    raise InvalidRequest(
        f"No tool output found for tool call {ids}: {how}.",
        # A call of an earlier turn (previous_response_id) is answered in the input.
        param=where.format(first) if first >= 0 else "input",
        code=UNANSWERED,
    )


def _repeated(call_id: str, param: str) -> InvalidRequest:
    return InvalidRequest(
        f"Tool call id {call_id!r} is used twice: each call needs an id of its own.",
        param=param,
        code=REPEATED,
    )
