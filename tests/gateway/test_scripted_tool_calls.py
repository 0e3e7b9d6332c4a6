"""Scripted tool calls (fixtures/replies.yaml `tool_calls`), several in one answer,
through the openai SDK: chat whole and streamed, responses whole, streamed and with the
stream helper, from every provider format, and the round trip with both results.

The demo fixtures script "What is the weather in Paris and London?" as two calls of
`get_weather`: Paris, then London, both in celsius."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from emulator.gateway.tokens import count_text
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

ASK = "What is the weather in Paris and London?"
SCRIPTED = [
    ("get_weather", '{"city":"Paris","unit":"celsius"}'),
    ("get_weather", '{"city":"London","unit":"celsius"}'),
]
PARAMS = {  # `unit` is not in the schema: scripted arguments are sent as written
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
CHAT_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": PARAMS}},
    {"type": "function", "function": {"name": "get_time", "parameters": PARAMS}},
]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": PARAMS}]
# Each provider format, and its tokenizer family (the provider's name says it).
PROVIDERS = {"emulator": "chat", "emulator-responses": "responses", "emulator-messages": "messages"}


def chat_kwargs(provider: str, **more: Any) -> dict[str, Any]:
    return {
        "model": "emulator/echo",
        "messages": [{"role": "user", "content": ASK}],
        "tools": CHAT_TOOLS,
        "extra_body": {"provider": {"only": [provider]}},
        **more,
    }


def tokens_of(calls: list[tuple[str, str]], provider: str) -> int:
    """What tool calls cost, counted as generated ones are: name and arguments."""
    return sum(count_text(name + arguments, PROVIDERS[provider]) for name, arguments in calls)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_chat_gets_the_scripted_calls_whole_and_streamed(
    client: openai.OpenAI, provider: str
) -> None:
    whole = client.chat.completions.create(**chat_kwargs(provider))
    choice = whole.choices[0]
    calls = choice.message.tool_calls or []
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    assert [(c.function.name, c.function.arguments) for c in calls] == SCRIPTED
    # Each vendor's own ids, passed through as OpenRouter does: Anthropic's `toolu_01...`.
    prefix = "toolu_01" if PROVIDERS[provider] == "messages" else "call_"
    assert len({c.id for c in calls}) == 2 and all(c.id.startswith(prefix) for c in calls)
    assert whole.usage.completion_tokens == tokens_of(SCRIPTED, provider)
    again = client.chat.completions.create(**chat_kwargs(provider))
    assert [c.id for c in again.choices[0].message.tool_calls or []] == [c.id for c in calls]

    streamed: dict[int, list[str]] = {}  # index -> [id, name, arguments]
    finish, usage = None, None
    for chunk in client.chat.completions.create(stream=True, **chat_kwargs(provider)):
        usage = chunk.usage or usage
        for part in chunk.choices:
            finish = part.finish_reason or finish
            for delta in part.delta.tool_calls or ():
                if delta.id:
                    assert delta.index not in streamed  # one start per index
                    streamed[delta.index] = [delta.id, delta.function.name, ""]
                streamed[delta.index][2] += delta.function.arguments or ""
    assert sorted(streamed) == [0, 1]
    assert [tuple(streamed[i]) for i in (0, 1)] == [
        (c.id, *s) for c, s in zip(calls, SCRIPTED, strict=True)
    ]
    assert finish == "tool_calls"
    assert usage is not None and usage.completion_tokens == whole.usage.completion_tokens


def responses_kwargs(provider: str, **more: Any) -> dict[str, Any]:
    return {
        "model": "emulator/echo",
        "input": ASK,
        "tools": RESPONSES_TOOLS,
        "extra_body": {"provider": {"only": [provider]}},
        **more,
    }


@pytest.mark.parametrize("provider", PROVIDERS)
def test_responses_get_the_scripted_calls_whole_and_streamed(
    client: openai.OpenAI, provider: str
) -> None:
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    whole = client.responses.create(**responses_kwargs(provider))
    items = [item for item in whole.output if item.type == "function_call"]
    assert whole.status == "completed" and len(whole.output) == 2
    assert [(i.name, i.arguments) for i in items] == SCRIPTED
    assert {i.status for i in items} == {"completed"}
    assert whole.usage.output_tokens == tokens_of(SCRIPTED, provider)

    events = list(client.responses.create(stream=True, **responses_kwargs(provider)))
    adapter = TypeAdapter(ResponseStreamEvent)
    for event in events:
        adapter.validate_python(event.model_dump(mode="json", exclude_unset=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    steps = [(e.type, e.output_index) for e in events if hasattr(e, "output_index")]
    for index in (0, 1):  # each call added, streamed, done and closed before the next
        own = [kind for kind, at in steps if at == index]
        assert own[0] == "response.output_item.added"
        assert set(own[1:-2]) == {"response.function_call_arguments.delta"}
        assert own[-2:] == ["response.function_call_arguments.done", "response.output_item.done"]
    assert [at for _, at in steps] == sorted(at for _, at in steps)
    final = events[-1].response
    assert [(i.call_id, i.name, i.arguments) for i in final.output] == [  # type: ignore[union-attr]
        (i.call_id, i.name, i.arguments) for i in items
    ]
    assert final.usage is not None and final.usage.output_tokens == whole.usage.output_tokens


def test_the_responses_stream_helper_collects_both_calls(client: openai.OpenAI) -> None:
    with client.responses.stream(**responses_kwargs("emulator-messages")) as stream:
        done = [e for e in stream if e.type == "response.function_call_arguments.done"]
        final = stream.get_final_response()
    assert [(e.name, e.arguments) for e in done] == SCRIPTED
    calls = [item for item in final.output if item.type == "function_call"]
    assert [(c.name, c.arguments) for c in calls] == SCRIPTED


@pytest.mark.parametrize("provider", PROVIDERS)
def test_without_parallel_tool_calls_only_the_first_is_made(
    client: openai.OpenAI, provider: str
) -> None:
    chat = client.chat.completions.create(**chat_kwargs(provider, parallel_tool_calls=False))
    calls = chat.choices[0].message.tool_calls or []
    assert [(c.function.name, c.function.arguments) for c in calls] == SCRIPTED[:1]
    assert chat.usage.completion_tokens == tokens_of(SCRIPTED[:1], provider)
    response = client.responses.create(**responses_kwargs(provider, parallel_tool_calls=False))
    assert [(i.name, i.arguments) for i in response.output] == SCRIPTED[:1]  # type: ignore[union-attr]
    assert response.parallel_tool_calls is False


def test_the_rule_applies_only_when_the_request_allows_its_calls(client: openai.OpenAI) -> None:
    def calls(**more: Any) -> list[str] | None:
        answer = client.chat.completions.create(**chat_kwargs("emulator", **more))
        message = answer.choices[0].message
        return None if message.tool_calls is None else [c.function.name for c in message.tool_calls]

    assert calls() == ["get_weather", "get_weather"]
    assert calls(tool_choice="required") == ["get_weather", "get_weather"]
    named = {"type": "function", "function": {"name": "get_weather"}}
    assert calls(tool_choice=named) == ["get_weather", "get_weather"]
    # Otherwise the generator answers, as if there were no rule (a call per city named).
    assert calls(tool_choice="none") is None
    get_time = {"type": "function", "function": {"name": "get_time"}}
    assert calls(tool_choice=get_time) == ["get_time", "get_time"]
    assert calls(tools=CHAT_TOOLS[1:]) == ["get_time", "get_time"]  # no get_weather offered
    assert calls(tools=openai.NOT_GIVEN) is None


def test_a_scripted_text_answers_an_agent_that_always_sends_its_tools(
    emulator: EmulatorHandle, client: openai.OpenAI
) -> None:
    """`auto` lets a model answer in words: a `reply` rule does, where the generator would
    call the first tool; a request that demands a call still gets one."""
    rule = {"pattern": "^how long do refunds take", "reply": "Refunds take 5 days."}
    ask = {"messages": [{"role": "user", "content": "How long do refunds take?"}]}
    with emulator.replies.scripted(rule):
        for stream in (False, True):
            kwargs = chat_kwargs("emulator", **ask, stream=stream)
            answer = client.chat.completions.create(**kwargs)
            if stream:
                text = "".join(c.choices[0].delta.content or "" for c in answer if c.choices)
            else:
                assert answer.choices[0].message.tool_calls is None
                text = answer.choices[0].message.content
            assert text == "Refunds take 5 days."
        forced = client.chat.completions.create(
            **chat_kwargs("emulator", **ask, tool_choice="required")
        )
    assert forced.choices[0].message.tool_calls


@pytest.mark.parametrize("provider", PROVIDERS)
def test_max_tokens_keeps_the_calls_that_fit_and_cuts_the_next(
    client: openai.OpenAI, tenant: Tenant, provider: str
) -> None:
    first = tokens_of(SCRIPTED[:1], provider)
    limit = first + 4  # the first call whole, the name and a little of the second
    cut = client.chat.completions.create(**chat_kwargs(provider, max_tokens=limit))
    choice = cut.choices[0]
    calls = choice.message.tool_calls or []
    assert choice.finish_reason == "length" and cut.usage.completion_tokens == limit
    assert (calls[0].function.name, calls[0].function.arguments) == SCRIPTED[0]
    assert len(calls) == 2 and calls[1].function.name == "get_weather"
    if provider != "emulator-messages":  # whose `input` cannot hold half an object: {}
        assert SCRIPTED[1][1].startswith(calls[1].function.arguments)
        assert calls[1].function.arguments != SCRIPTED[1][1]
    arguments = ["", ""]
    finish, usage = None, None
    streamed = client.chat.completions.create(
        stream=True, **chat_kwargs(provider, max_tokens=limit)
    )
    for chunk in streamed:
        usage = chunk.usage or usage
        for part in chunk.choices:
            finish = part.finish_reason or finish
            for delta in part.delta.tool_calls or ():
                arguments[delta.index] += delta.function.arguments or ""
    assert finish == "length" and usage is not None and usage.completion_tokens == limit
    assert arguments[0] == SCRIPTED[0][1] and SCRIPTED[1][1].startswith(arguments[1])
    assert arguments[1] != SCRIPTED[1][1]
    with tenant.client() as http:
        held = http.get("/ai-gateway/reservations", params={"limit": 1}).json()["data"][0]
    assert held["charge_micros"] <= held["amount_micros"]  # settled within its hold


@pytest.mark.parametrize("provider", PROVIDERS)
def test_both_results_sent_back_get_a_final_answer(client: openai.OpenAI, provider: str) -> None:
    first = client.chat.completions.create(**chat_kwargs(provider))
    message = first.choices[0].message
    calls = message.tool_calls or []
    results = [
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"temp": temp})}
        for call, temp in zip(calls, (18, 12), strict=True)
    ]
    final = client.chat.completions.create(
        model="emulator/echo",
        messages=[
            {"role": "user", "content": ASK},
            message.model_dump(exclude_none=True),  # type: ignore[list-item]
            *results,  # type: ignore[list-item]
        ],
        tools=CHAT_TOOLS,
        extra_body={"provider": {"only": [provider]}},
    )
    choice = final.choices[0]
    assert choice.finish_reason == "stop" and not choice.message.tool_calls
    text = choice.message.content or ""
    assert text.count("According to get_weather") == 2
    assert text.index('{"temp": 18}') < text.index('{"temp": 12}')

    response = client.responses.create(**responses_kwargs(provider))
    made = [
        item.model_dump(include={"type", "call_id", "name", "arguments"})
        for item in response.output
    ]
    outputs = [
        {"type": "function_call_output", "call_id": call["call_id"], "output": f"{temp} C"}
        for call, temp in zip(made, (18, 12), strict=True)
    ]
    items = [{"role": "user", "content": ASK}, *made, *outputs]
    after = client.responses.create(**responses_kwargs(provider, input=items))
    assert after.output_text.count("According to get_weather") == 2
    assert "18 C" in after.output_text and "12 C" in after.output_text


@pytest.mark.parametrize(
    "path", ["/chat/completions", "/responses", "/responses/input_tokens", "/ai-gateway/quote"]
)
def test_parallel_tool_calls_must_be_a_boolean(tenant: Tenant, path: str) -> None:
    body = {"model": "openai/gpt-4o", "parallel_tool_calls": "maybe"}
    body |= {"messages": [{"role": "user", "content": ASK}]} if "chat" in path else {"input": ASK}
    with tenant.client() as http:
        error = assert_error(http.post(path, json=body), 400, "invalid_request")
    assert error["param"] == "parallel_tool_calls"
