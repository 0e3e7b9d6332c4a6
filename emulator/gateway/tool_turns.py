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
(`previous_response_id`), and each call has its output. The messages format is as
strict as chat, in Anthropic's terms: a turn's `tool_use` blocks are answered by
`tool_result` blocks at the start of the next (user) turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
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
    elif endpoint == "messages":
        _check_blocks(body["messages"])
    else:
        given = body["input"]
        _check_items(given if isinstance(given, list) else [], history)


def _check_chat(messages: Sequence[dict[str, Any]]) -> None:
    waiting: dict[str, str] = {}  # the last assistant message's unanswered calls: id -> where
    answered: set[str] = set()
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            _answer_chat(index, message.get("tool_call_id"), waiting, answered)
            continue
        _unanswered(waiting, _CHAT_ANSWER)
        answered.clear()
        if role == "assistant" and message.get("tool_calls"):
            for place, call in enumerate(message["tool_calls"]):
                if call["id"] in waiting:
                    raise _repeated(call["id"], f"messages[{index}].tool_calls[{place}].id")
                waiting[call["id"]] = f"messages[{index}].tool_calls"
    _unanswered(waiting, _CHAT_ANSWER)


def _answer_chat(
    index: int, call_id: str | None, waiting: dict[str, str], answered: set[str]
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


def _check_blocks(messages: Sequence[dict[str, Any]]) -> None:
    """Anthropic's rules. Messages of one role in a row are one turn, as its API joins
    them; a turn's `tool_use` ids are answered by the `tool_result` blocks that open the
    next turn, one each, before any other block; ids are unique in the conversation."""
    turns = _BlockTurns()
    previous = None
    for index, message in enumerate(messages):
        role, content = message["role"], message["content"]
        if role != previous:
            turns.begin(role)
            previous = role
        for place, block in enumerate(content if isinstance(content, list) else [content]):
            kind = block.get("type") if isinstance(block, dict) else "text"
            where = f"messages[{index}].content[{place}]"
            if kind == "tool_use":
                turns.use(block["id"], role, where)
            elif kind == "tool_result":
                turns.result(block["tool_use_id"], role, where)
            else:
                turns.opening = False
    _unanswered(turns.waiting, _BLOCK_ANSWER)


@dataclass(slots=True)
class _BlockTurns:
    """Where a conversation in the messages format stands, block by block."""

    used: set[str] = field(default_factory=set)  # every tool_use id so far
    waiting: dict[str, str] = field(default_factory=dict)  # unanswered calls: id -> where
    answered: set[str] = field(default_factory=set)  # by the current user turn
    opening: bool = False  # still among the results that open a user turn

    def begin(self, role: str) -> None:
        if role == "assistant":  # the user turn before it had to answer them all
            _unanswered(self.waiting, _BLOCK_ANSWER)
        self.answered.clear()
        self.opening = role == "user"

    def use(self, call_id: str, role: str, where: str) -> None:
        if role != "assistant":
            raise _wrong_turn(
                where,
                "tool_use",
                "a user",
                "only the assistant calls tools. Send it in "
                "the assistant message that made the call.",
            )
        if call_id in self.used:
            raise _repeated(call_id, f"{where}.id")
        self.used.add(call_id)
        self.waiting[call_id] = where

    def result(self, call_id: str, role: str, where: str) -> None:
        if role != "user":
            raise _wrong_turn(
                where,
                "tool_result",
                "an assistant",
                "send tool results in the user turn "
                "right after the assistant turn that called the tools.",
            )
        if call_id in self.answered:
            raise InvalidRequest(
                f"{where} answers tool call {call_id!r} a second time: each `tool_use` gets "
                "one `tool_result`.",
                param=f"{where}.tool_use_id",
                code=REPEATED,
            )
        if call_id in self.waiting and not self.opening:  # after another block: too late
            _unanswered(self.waiting, _BLOCK_ANSWER)
        if call_id not in self.waiting:
            raise InvalidRequest(
                f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{call_id!r}. Each `tool_result` block must have a corresponding `tool_use` "
                "block in the previous message.",
                param=f"{where}.tool_use_id",
                code=UNKNOWN,
            )
        del self.waiting[call_id]
        self.answered.add(call_id)


def _wrong_turn(where: str, block: str, turn: str, advice: str) -> InvalidRequest:
    """A block sent in the other role's turn."""
    return InvalidRequest(f"{where} is a `{block}` block in {turn} turn: {advice}", param=where)


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
    # A call of an earlier turn (previous_response_id) is answered in the input.
    missing = {
        call_id: f"input[{index}]" if index >= 0 else "input"
        for call_id, index in calls.items()
        if call_id not in outputs
    }
    _unanswered(missing, _ITEM_ANSWER)


_CHAT_ANSWER = (
    "follow the assistant message with one `tool` message per call (its `tool_call_id` "
    "the call's `id`) before any other message"
)
_BLOCK_ANSWER = (
    "open the next (user) message with one `tool_result` block per `tool_use` block (its "
    "`tool_use_id` the block's `id`), before any other block"
)
_ITEM_ANSWER = "add a `function_call_output` item with the same `call_id` for each call"


def _unanswered(waiting: dict[str, str], how: str) -> None:
    """`waiting`: each call left without its result, and where it was made."""
    if not waiting:
        return
    ids = ", ".join(repr(call_id) for call_id in waiting)
    raise InvalidRequest(
        f"No tool output found for tool call {ids}: {how}.",
        param=next(iter(waiting.values())),
        code=UNANSWERED,
    )


def _repeated(call_id: str, param: str) -> InvalidRequest:
    return InvalidRequest(
        f"Tool call id {call_id!r} is used twice: each call needs an id of its own.",
        param=param,
        code=REPEATED,
    )
