"""Tool use and tool results in Anthropic's format (`POST /messages`) pair up as Anthropic's
API requires, or the request is its 400: the `tool_result` blocks that open the next user
turn answer the `tool_use` blocks of the assistant turn before it, one each."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.errors import InvalidRequest
from emulator.gateway.tool_turns import check_tool_turns
from emulator.testing import Tenant
from tests.helpers import assert_error

SONNET = "anthropic/claude-sonnet-4"
ASK = {"role": "user", "content": "What is the weather in Paris and London?"}
TOOLS = [{"name": "weather", "input_schema": {"type": "object"}}]
SAID = {"type": "text", "text": "Here is what I found."}


def uses(*ids: str) -> dict[str, Any]:
    blocks = [{"type": "tool_use", "id": i, "name": "weather", "input": {}} for i in ids]
    return {"role": "assistant", "content": blocks}


def result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "12 C, cloudy"}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": SONNET, "max_tokens": 50, "messages": messages, "tools": TOOLS, **extra}


def test_results_open_the_next_turn_in_any_order(claude: anthropic.Anthropic) -> None:
    # Two user messages in a row are one turn, as Anthropic's API joins them.
    for messages in (
        [ASK, uses("toolu_a", "toolu_b"), user(result("toolu_b"), result("toolu_a"), SAID)],
        [ASK, uses("toolu_a", "toolu_b"), user(result("toolu_a")), user(result("toolu_b"))],
    ):
        answer = claude.messages.create(**body(messages))  # not a 400
        assert answer.content and answer.usage.input_tokens > 0


def test_a_result_without_its_call_is_refused_by_the_sdk(claude: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError) as raised:
        claude.messages.create(**body([user(result("toolu_x"))]))
    error = raised.value.body["error"]  # type: ignore[index]
    assert error["code"] == "tool_call_not_found"
    assert error["param"] == "messages[0].content[0].tool_use_id"
    assert "unexpected `tool_use_id`" in error["message"] and "'toolu_x'" in error["message"]


@pytest.mark.parametrize(
    ("messages", "code", "param", "named"),
    [
        # The next turn says something else first: a result after it comes too late.
        (
            [ASK, uses("toolu_a"), user(SAID, result("toolu_a"))],
            "tool_result_missing",
            "messages[1].content[0]",
            "toolu_a",
        ),
        # One of two calls answered, then the next turn.
        (
            [ASK, uses("toolu_a", "toolu_b"), user(result("toolu_a")), uses("toolu_c")],
            "tool_result_missing",
            "messages[1].content[1]",
            "toolu_b",
        ),
        # The conversation ends on the calls.
        ([ASK, uses("toolu_a")], "tool_result_missing", "messages[1].content[0]", "toolu_a"),
        # Answered twice.
        (
            [ASK, uses("toolu_a"), user(result("toolu_a"), result("toolu_a"))],
            "duplicate_tool_call_id",
            "messages[2].content[1].tool_use_id",
            "toolu_a",
        ),
        # One id for two calls, in two turns.
        (
            [ASK, uses("toolu_a"), user(result("toolu_a")), uses("toolu_a")],
            "duplicate_tool_call_id",
            "messages[3].content[0].id",
            "toolu_a",
        ),
        # A result for a call of an earlier turn.
        (
            [
                ASK,
                uses("toolu_a"),
                user(result("toolu_a")),
                uses("toolu_b"),
                user(result("toolu_a")),
            ],
            "tool_call_not_found",
            "messages[4].content[0].tool_use_id",
            "toolu_a",
        ),
    ],
)
def test_turns_that_do_not_pair_up(
    tenant: Tenant, messages: list[dict[str, Any]], code: str, param: str, named: str
) -> None:
    with tenant.client() as http:
        for stream in (False, True):  # refused before a stream starts
            refused = http.post("/messages", json=body(messages, stream=stream))
            error = assert_error(refused, 400, code, "invalid_request_error")
            assert error["param"] == param
            assert repr(named) in error["message"]
        quoted = http.post("/ai-gateway/quote", json={**body(messages), "endpoint": "messages"})
        assert assert_error(quoted, 400, code)["param"] == param
        counted = http.post("/messages/count_tokens", json=body(messages))
        assert assert_error(counted, 400, code)["param"] == param
        # Nothing held, charged or logged.
        assert http.get("/ai-gateway/usage").json()["data"] == []
        assert http.get("/ai-gateway/reservations").json()["data"] == []


@pytest.mark.parametrize(
    ("messages", "param"),
    [
        ([ASK, uses("toolu_a"), user(uses("toolu_b")["content"][0])], "messages[2].content[0]"),
        ([ASK, {"role": "assistant", "content": [result("toolu_a")]}], "messages[1].content[0]"),
    ],
)
def test_blocks_in_the_wrong_role_are_refused(
    tenant: Tenant, messages: list[dict[str, Any]], param: str
) -> None:
    with tenant.client() as http:
        refused = http.post("/messages", json=body(messages))
    assert assert_error(refused, 400, "invalid_request")["param"] == param


# A well-formed tool loop: assistant turns of calls, answered by results (in any order,
# maybe over several user messages, maybe followed by words).
turn_ids = st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=4, unique=True)


@st.composite
def tool_loops(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [ASK]
    for turn, ids in enumerate(draw(st.lists(turn_ids, min_size=1, max_size=4))):
        named = [f"toolu_{turn}_{i}" for i in ids]
        messages.append(uses(*named))
        results = [result(i) for i in draw(st.permutations(named))]
        cut = draw(st.integers(0, len(results)))
        messages += [user(*part) for part in (results[:cut], results[cut:]) if part]
        if draw(st.booleans()):
            messages.append(user(SAID))
    return messages


@given(tool_loops())
def test_every_well_formed_tool_loop_is_accepted(messages: list[dict[str, Any]]) -> None:
    check_tool_turns({"messages": messages}, "messages")


@given(tool_loops(), st.data())
def test_dropping_any_result_names_its_call(
    messages: list[dict[str, Any]], data: st.DataObject
) -> None:
    places = [
        (i, j)
        for i, m in enumerate(messages)
        for j, b in enumerate(m["content"])
        if isinstance(b, dict) and b["type"] == "tool_result"
    ]
    index, place = data.draw(st.sampled_from(places))
    call_id = messages[index]["content"][place]["tool_use_id"]
    kept = [b for j, b in enumerate(messages[index]["content"]) if j != place]
    changed = [*messages[:index], *([user(*kept)] if kept else []), *messages[index + 1 :]]
    with pytest.raises(InvalidRequest) as raised:
        check_tool_turns({"messages": changed}, "messages")
    assert raised.value.instance_code == "tool_result_missing"
    assert repr(call_id) in raised.value.message


@pytest.mark.parametrize(
    ("model", "provider"),
    [(SONNET, "anthropic"), ("openai/gpt-4o", "openai"), ("openai/gpt-4o", "azure")],
)
def test_images_a_tool_returns_are_read_and_billed(
    tenant: Tenant, model: str, provider: str
) -> None:
    """A screenshot in a `tool_result` is an image of the prompt, whatever format the
    serving provider speaks: counted, billed, and the count is what is billed."""
    png = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }

    def returned(images: int) -> dict[str, Any]:
        shots = {
            **result("toolu_a"),
            "content": [{"type": "text", "text": "Screen:"}] + [png] * images,
        }
        pinned = {"only": [provider]}  # a messages, a responses and a chat format provider
        return body([ASK, uses("toolu_a"), user(shots)], model=model, provider=pinned)

    with tenant.client() as http:
        counts = [
            http.post("/messages/count_tokens", json=returned(n)).json()["input_tokens"]
            for n in (0, 1, 3)
        ]
        answer = http.post("/messages", json=returned(3)).json()
    assert answer["provider"] == provider
    billed = answer["usage"]["input_tokens"]
    assert counts[1] - counts[0] == counts[2] - counts[1] - 85 == 85  # an image, as elsewhere
    assert billed == counts[2]
