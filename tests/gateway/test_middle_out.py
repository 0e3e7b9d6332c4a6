"""OpenRouter's middle-out compression: `transforms: ["middle-out"]` (or the
`context-compression` plugin) cuts a prompt too long for the context from the middle,
instead of a 400 `context_length_exceeded`; on by default for contexts of 8k or less."""

from __future__ import annotations

import json
from typing import Any, cast

import openai
import pytest

from emulator.errors import InvalidRequest
from emulator.gateway import middle_out
from emulator.gateway.canonical import Message, Request, ToolCall
from emulator.gateway.content import prompt_tokens
from emulator.gateway.requirements import able_routes
from emulator.gateway.routing import Route
from emulator.testing import Tenant
from tests.helpers import a_route, assert_error

ECHO_CONTEXT = 32_768
PARAGRAPH = "Replication lag grows when the primary writes faster than replicas apply. " * 100


def long_talk(turns: int = 40) -> list[dict[str, Any]]:
    """About 1,300 tokens a turn: 40 turns are well over emulator/echo's context."""
    talk: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for i in range(turns):
        talk.append({"role": "user" if i % 2 == 0 else "assistant", "content": PARAGRAPH})
    return [*talk, {"role": "user", "content": "And the last question?"}]


@pytest.mark.parametrize(
    "asks",
    [{"transforms": ["middle-out"]}, {"plugins": [{"id": "context-compression"}]}],
    ids=["transforms", "plugin"],
)
def test_a_conversation_too_long_is_cut_from_the_middle(tenant: Tenant, asks: dict) -> None:
    body = {"model": "emulator/echo", "messages": long_talk()}
    with tenant.client() as http:
        refused = http.post("/chat/completions", json=body)
        served = http.post("/chat/completions", json={**body, **asks})
        quote = http.post("/ai-gateway/quote", json={**body, **asks})
        event = http.get(f"/ai-gateway/usage/{served.headers.get('x-generation-id')}").json()
    assert_error(refused, 400, "context_length_exceeded")
    assert served.status_code == 200, served.text
    answer = served.json()
    assert answer["choices"][0]["message"]["content"] == "And the last question?"
    # Billed for what was sent: as much as fits, no more.
    prompt = answer["usage"]["prompt_tokens"]
    assert ECHO_CONTEXT - 1_400 < prompt <= ECHO_CONTEXT
    assert event["prompt_tokens"] == prompt
    assert quote.json()["estimated_input_tokens"] == prompt


def test_responses_and_streams_are_cut_the_same_way(tenant: Tenant) -> None:
    talk = long_talk()
    items = [{"role": m["role"], "content": m["content"]} for m in talk]
    with tenant.client() as http:
        whole = http.post(
            "/responses",
            json={"model": "emulator/echo", "input": items, "transforms": ["middle-out"]},
        )
        streamed = http.post(
            "/chat/completions",
            json={
                "model": "emulator/echo",
                "messages": talk,
                "transforms": ["middle-out"],
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
    assert whole.status_code == 200, whole.text
    assert whole.json()["output_text"] == "And the last question?"
    assert whole.json()["usage"]["input_tokens"] <= ECHO_CONTEXT
    chunks = [json.loads(line[6:]) for line in streamed.text.splitlines() if line[6:7] == "{"]
    assert chunks[-1]["usage"]["prompt_tokens"] <= ECHO_CONTEXT


def test_one_message_too_long_loses_its_middle(tenant: Tenant) -> None:
    text = "alpha " * 20_000 + "omega " * 20_000  # 40,000 tokens in one message
    body = {"model": "emulator/echo", "messages": [{"role": "user", "content": text}]}
    with tenant.client() as http:
        served = http.post("/chat/completions", json={**body, "transforms": ["middle-out"]})
        unasked = http.post("/chat/completions", json={**body, "transforms": []})
    assert served.status_code == 200, served.text
    # Cut to the context exactly (the echo itself stops at the model's 4,096 tokens).
    assert ECHO_CONTEXT - 2 <= served.json()["usage"]["prompt_tokens"] <= ECHO_CONTEXT
    assert_error(unasked, 400, "context_length_exceeded")


def test_malformed_transforms_and_plugins_are_400(tenant: Tenant) -> None:
    with tenant.client() as http:
        for field, value, param in (
            ("transforms", "middle-out", "transforms"),
            ("plugins", [{"name": "web"}], "plugins[0].id"),
            ("plugins", [{"id": "web", "max_results": 11}], "plugins[0].max_results"),
        ):
            answer = http.post(
                "/chat/completions",
                json={"model": "emulator/echo", "messages": long_talk(1), field: value},
            )
            assert assert_error(answer, 400, "invalid_request")["param"] == param


# The rules, on the canonical request.


def route(context_length: int, wire_format: str = "chat") -> Route:
    return a_route(context_length=context_length, wire_format=wire_format)


def text_of(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n // 2))  # two tokens a word in the chat family


def test_whole_messages_go_middlemost_first_and_tool_calls_with_their_results() -> None:
    call = ToolCall(id="c1", name="lookup", arguments="{}")
    messages = (
        Message("system", text_of(100)),
        Message("user", text_of(100)),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", text_of(100), tool_call_id="c1"),
        Message("user", text_of(100)),
        Message("user", "last"),
    )
    request = Request(messages=messages)
    budget = prompt_tokens(request, "chat") - 50
    cut = middle_out.compress(request, "chat", budget)
    # The middle group (the call and its result) went, and nothing else had to.
    assert [m.role for m in cut.messages] == ["system", "user", "user", "user"]
    assert prompt_tokens(cut, "chat") <= budget
    # Tighter: more middle messages go; the first and the last always stay.
    tight = middle_out.compress(request, "chat", 120)
    assert [m.text for m in tight.messages][-1] == "last"
    assert tight.messages[0].role == "system" and prompt_tokens(tight, "chat") <= 120


def test_a_message_too_long_keeps_its_head_and_tail() -> None:
    text = "alpha " * 5_000 + "omega " * 5_000
    request = Request(messages=(Message("system", "Be brief."), Message("user", text)))
    cut = middle_out.compress(request, "chat", 4_000)
    kept = cut.messages[1].text
    assert cut.messages[0].text == "Be brief." and prompt_tokens(cut, "chat") == 4_000
    head, gap, tail = kept.partition("\n…\n")
    # Cut at token boundaries (a word may lose its start): the middle went.
    assert gap and head.startswith("alpha alpha") and tail.endswith("omega omega ")
    assert "omega" not in head and "alpha" not in tail
    assert abs(len(head) - len(tail)) < 10


def test_the_default_is_on_for_small_contexts_only() -> None:
    request = Request(messages=(Message("user", text_of(10_000)),))
    view = cast(Any, None)  # no capability is needed: the view is not read
    for mode, context, served in (
        (None, 8_192, True),  # OpenRouter's default for contexts of 8k or less
        (None, 8_193, False),
        (False, 8_192, False),  # `transforms: []`
        (True, 8_193, True),
    ):
        if served:
            routes, cut = able_routes(view, [route(context)], request, compression=mode)
            assert routes and prompt_tokens(cut, "chat") <= context
        else:
            with pytest.raises(InvalidRequest, match="longest context"):
                able_routes(view, [route(context)], request, compression=mode)


def test_the_route_compressed_for_holds_half_the_prompt_or_is_the_longest() -> None:
    request = Request(messages=(Message("user", text_of(10_000)),))
    view = cast(Any, None)
    # The first route whose context holds half of the 10,000 tokens is chosen, in order.
    routes, cut = able_routes(
        view, [route(4_000), route(6_000), route(9_000)], request, compression=True
    )
    assert [r.context_length for r in routes] == [6_000, 9_000]
    assert 5_900 < prompt_tokens(cut, "chat") <= 6_000
    # None does: the longest.
    routes, cut = able_routes(view, [route(2_000), route(3_000)], request, compression=True)
    assert [r.context_length for r in routes] == [3_000]


def test_a_run_of_parallel_calls_and_results_goes_whole() -> None:
    """Calls of one turn may come as several assistant messages, their results after
    them all: none is dropped without the others."""

    def call(i: str) -> tuple[ToolCall, ...]:
        return (ToolCall(id=i, name="lookup", arguments="{}"),)

    messages = (
        Message("system", "Be brief."),
        Message("user", text_of(200)),
        Message("assistant", "", tool_calls=call("a")),
        Message("assistant", "", tool_calls=call("b")),
        Message("tool", text_of(200), tool_call_id="a"),
        Message("tool", text_of(200), tool_call_id="b"),
        Message("user", text_of(200)),
        Message("user", "last"),
    )
    request = Request(messages=messages)
    for budget in range(50, prompt_tokens(request, "chat"), 40):
        kept = middle_out.compress(request, "chat", budget).messages
        calls = {c.id for m in kept for c in m.tool_calls}
        results = {m.tool_call_id for m in kept if m.role == "tool"}
        assert calls == results, budget


def test_the_context_error_counts_the_prompt_sent(tenant: Tenant) -> None:
    """When even the cut prompt does not fit (here: tools' definitions alone too big),
    the error gives the size of the prompt as sent."""
    huge = {"type": "object", "description": "x " * 40_000}
    tool = {"type": "function", "function": {"name": "big", "parameters": huge}}
    body = {"model": "emulator/echo", "messages": long_talk(4), "tools": [tool]}
    with tenant.client() as http:
        plain = http.post("/chat/completions", json=body)
        cut = http.post("/chat/completions", json={**body, "transforms": ["middle-out"]})
    first = assert_error(plain, 400, "context_length_exceeded")["message"]
    assert assert_error(cut, 400, "context_length_exceeded")["message"] == first


def test_an_agent_loop_loses_one_turn_at_a_time() -> None:
    """Turns of calls and results one after the other are units of their own: a prompt
    a little too long loses the middle turn, not the whole loop."""
    messages: list[Message] = [Message("user", "Plan the trip.")]
    for turn in range(12):
        calls = tuple(ToolCall(id=f"c{turn}{i}", name="lookup", arguments="{}") for i in (1, 2))
        messages.append(Message("assistant", "", tool_calls=calls))
        messages += [Message("tool", text_of(100), tool_call_id=c.id) for c in calls]
    messages.append(Message("user", "last"))
    request = Request(messages=tuple(messages))
    cut = middle_out.compress(request, "chat", prompt_tokens(request, "chat") - 2)
    kept_calls = [c.id for m in cut.messages for c in m.tool_calls]
    assert len(cut.messages) == len(messages) - 3  # one turn: its call message, 2 results
    assert "c61" not in kept_calls and {"c51", "c71"} <= set(kept_calls)  # the middle one


def test_responses_truncation_auto_drops_the_middle_and_disabled_refuses(
    client: openai.OpenAI,
) -> None:
    items: Any = [{"role": m["role"], "content": m["content"]} for m in long_talk()]
    answer = client.responses.create(model="emulator/echo", input=items, truncation="auto")
    assert answer.output_text == "And the last question?" and answer.truncation == "auto"
    assert answer.usage is not None and answer.usage.input_tokens <= ECHO_CONTEXT
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="emulator/echo", input=items, truncation="disabled")
    assert refused.value.code == "context_length_exceeded"
