"""Tool calls and their results pair up, or the request is the 400 the provider would give:
a forgotten, unknown or repeated tool result fails here as it would in production."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.errors import InvalidRequest
from emulator.gateway.tool_turns import check_tool_turns
from emulator.testing import Tenant
from tests.helpers import assert_error

MODEL = "openai/gpt-4o-mini"
ASK = {"role": "user", "content": "What is the weather in Paris and London?"}
TOOL = {
    "type": "function",
    "function": {"name": "weather", "parameters": {"type": "object"}},
}


def calls(*ids: str) -> dict[str, Any]:
    made = [
        {"id": i, "type": "function", "function": {"name": "weather", "arguments": "{}"}}
        for i in ids
    ]
    return {"role": "assistant", "content": None, "tool_calls": made}


def result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "12 C, cloudy"}


def chat(http: httpx.Client, messages: list[dict[str, Any]], **extra: Any) -> httpx.Response:
    return http.post(
        "/chat/completions", json={"model": MODEL, "messages": messages, "tools": [TOOL], **extra}
    )


def test_results_answer_the_calls_before_them_in_any_order(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(
        model=MODEL,
        messages=[ASK, calls("call_a", "call_b"), result("call_b"), result("call_a")],  # type: ignore[list-item]
        tools=[TOOL],  # type: ignore[list-item]
    )
    assert answer.choices[0].finish_reason == "stop"


def test_a_result_without_its_call_is_refused_by_the_sdk(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=[ASK, result("call_x")])  # type: ignore[list-item]
    assert raised.value.status_code == 400
    assert raised.value.code == "tool_call_not_found"
    assert raised.value.param == "messages[1].tool_call_id"
    assert "'call_x'" in raised.value.message


@pytest.mark.parametrize(
    ("messages", "code", "param", "named"),
    [
        # The call is never answered: the next turn comes first.
        ([ASK, calls("call_a"), ASK], "tool_result_missing", "messages[1].tool_calls", "call_a"),
        # One of two calls answered; the conversation ends.
        (
            [ASK, calls("call_a", "call_b"), result("call_a")],
            "tool_result_missing",
            "messages[1].tool_calls",
            "call_b",
        ),
        # Answered twice.
        (
            [ASK, calls("call_a"), result("call_a"), result("call_a")],
            "duplicate_tool_call_id",
            "messages[3].tool_call_id",
            "call_a",
        ),
        # Two calls of one id in one message.
        (
            [ASK, calls("call_a", "call_a")],
            "duplicate_tool_call_id",
            "messages[1].tool_calls[1].id",
            "call_a",
        ),
        # A result that comes back after another turn: its call is no longer waiting.
        (
            [ASK, calls("call_a"), result("call_a"), ASK, result("call_a")],
            "tool_call_not_found",
            "messages[4].tool_call_id",
            "call_a",
        ),
        # A result answering an id the assistant message before it did not make.
        (
            [ASK, calls("call_a"), result("call_b")],
            "tool_call_not_found",
            "messages[2].tool_call_id",
            "call_b",
        ),
    ],
)
def test_chat_turns_that_do_not_pair_up(
    tenant: Tenant, messages: list[dict[str, Any]], code: str, param: str, named: str
) -> None:
    with tenant.client() as http:
        for stream in (False, True):  # refused before a stream starts
            error = assert_error(
                chat(http, messages, stream=stream), 400, code, "invalid_request_error"
            )
            assert error["param"] == param
            assert repr(named) in error["message"]
        assert_error(
            http.post("/ai-gateway/quote", json={"model": MODEL, "messages": messages}), 400, code
        )
        # Nothing held, charged or logged.
        assert http.get("/ai-gateway/usage").json()["data"] == []
        assert http.get("/ai-gateway/reservations").json()["data"] == []


def test_a_tool_message_needs_its_call_id(tenant: Tenant) -> None:
    with tenant.client() as http:
        bare = {"role": "tool", "content": "12 C"}
        error = assert_error(chat(http, [ASK, calls("call_a"), bare]), 400, "invalid_request")
        assert error["param"] == "messages[2].tool_call_id"


CALL = {"type": "function_call", "call_id": "call_a", "name": "weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_a", "output": "12 C"}
ITEM_TOOL = {"type": "function", "name": "weather", "parameters": {"type": "object"}}


@pytest.mark.parametrize(
    ("items", "code", "param"),
    [
        ([ASK, OUTPUT], "tool_call_not_found", "input[1].call_id"),
        ([ASK, CALL], "tool_result_missing", "input[1]"),
        ([ASK, CALL, CALL, OUTPUT], "duplicate_tool_call_id", "input[2].call_id"),
        ([ASK, CALL, OUTPUT, OUTPUT], "duplicate_tool_call_id", "input[3].call_id"),
    ],
)
def test_responses_items_that_do_not_pair_up(
    tenant: Tenant, items: list[dict[str, Any]], code: str, param: str
) -> None:
    body = {"model": MODEL, "input": items, "tools": [ITEM_TOOL]}
    with tenant.client() as http:
        for path in ("/responses", "/responses/input_tokens", "/ai-gateway/quote"):
            error = assert_error(http.post(path, json=body), 400, code, "invalid_request_error")
            assert error["param"] == param
        assert http.get("/ai-gateway/usage").json()["data"] == []


def test_responses_pair_calls_and_outputs_wherever_they_are(client: openai.OpenAI) -> None:
    other = {**CALL, "call_id": "call_b"}
    answer = client.responses.create(
        model=MODEL,
        input=[ASK, CALL, other, {**OUTPUT, "call_id": "call_b"}, OUTPUT],  # type: ignore[list-item]
        tools=[ITEM_TOOL],  # type: ignore[list-item]
    )
    assert answer.status == "completed"


def test_outputs_answer_the_calls_of_the_previous_response(client: openai.OpenAI) -> None:
    tools: Any = [ITEM_TOOL]
    asked = client.responses.create(model=MODEL, input=[ASK], tools=tools, tool_choice="required")
    call_id = asked.output[0].call_id  # type: ignore[union-attr]
    answer = {**OUTPUT, "call_id": call_id}
    done = client.responses.create(
        model=MODEL, input=[answer], previous_response_id=asked.id, tools=tools
    )
    assert done.status == "completed"
    for items, code, param in (
        ("thanks", "tool_result_missing", "input"),  # the earlier call left unanswered
        ([OUTPUT], "tool_call_not_found", "input[0].call_id"),
        ([answer, answer], "duplicate_tool_call_id", "input[1].call_id"),
    ):
        with pytest.raises(openai.BadRequestError) as raised:
            client.responses.create(
                model=MODEL, input=items, previous_response_id=asked.id, tools=tools
            )
        assert (raised.value.code, raised.value.param) == (code, param)
        assert call_id in raised.value.message or code != "tool_result_missing"
    with pytest.raises(openai.BadRequestError) as raised:  # a turn already answered
        client.responses.create(
            model=MODEL, input=[answer], previous_response_id=done.id, tools=tools
        )
    assert raised.value.code == "duplicate_tool_call_id"


# A well-formed tool loop: turns of (assistant calls, then a result for each, in any order).
turn_ids = st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=4, unique=True)


@st.composite
def tool_loops(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [ASK]
    for turn, ids in enumerate(draw(st.lists(turn_ids, min_size=1, max_size=4))):
        named = [f"call_{turn}_{i}" for i in ids]
        messages.append(calls(*named))
        messages += [result(i) for i in draw(st.permutations(named))]
        if draw(st.booleans()):
            messages.append(ASK)
    return messages


@given(tool_loops())
def test_every_well_formed_tool_loop_is_accepted(messages: list[dict[str, Any]]) -> None:
    check_tool_turns({"messages": messages}, "chat.completions")


@given(tool_loops(), st.data())
def test_dropping_any_result_names_its_call(
    messages: list[dict[str, Any]], data: st.DataObject
) -> None:
    results = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    dropped = data.draw(st.sampled_from(results))
    call_id = messages[dropped]["tool_call_id"]
    with pytest.raises(InvalidRequest) as raised:
        check_tool_turns(
            {"messages": messages[:dropped] + messages[dropped + 1 :]}, "chat.completions"
        )
    assert raised.value.instance_code == "tool_result_missing"
    assert repr(call_id) in raised.value.message


def test_a_function_call_output_of_parts_reads_its_images(tenant: Tenant) -> None:
    """An output given as content parts (OpenAI's `input_text`/`input_image`) is read as
    a message's parts are: its text, and each image's tokens."""
    shot = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}

    def counted(*images: dict[str, Any]) -> int:
        output = {**OUTPUT, "output": [{"type": "input_text", "text": "12 C"}, *images]}
        body = {"model": "openai/gpt-4o", "input": [ASK, CALL, output], "tools": [ITEM_TOOL]}
        with tenant.client() as http:
            answer = http.post("/responses/input_tokens", json=body)
        assert answer.status_code == 200, answer.text
        return answer.json()["input_tokens"]

    assert counted(shot, shot) - counted() == 2 * 85
