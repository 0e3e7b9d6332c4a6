"""POST /chat/completions through the official openai SDK and plain HTTP."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import httpx
import jsonschema
import openai
import pytest
from pydantic import BaseModel

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

HELLO = [{"role": "user", "content": "Explain how database indexes speed up queries"}]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["city", "unit"],
            "additionalProperties": False,
        },
    },
}


def test_a_completion_has_the_wire_fields(client: openai.OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="openai/gpt-4o-mini", messages=HELLO
    )
    completion = raw.parse()
    assert raw.headers["x-generation-id"] == completion.id
    assert completion.object == "chat.completion" and completion.model == "openai/gpt-4o-mini"
    assert completion.system_fingerprint.startswith("emulator")
    assert completion.model_extra["provider"] == "openai"
    choice = completion.choices[0]
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    assert "index" in choice.message.content or "database" in choice.message.content
    usage = completion.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens > 0
    assert usage.prompt_tokens_details.cached_tokens == 0


def test_the_same_request_gives_the_same_bytes_and_another_prompt_other_text(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {"model": "anthropic/claude-sonnet-4", "messages": HELLO}
    with tenant.client() as http:
        first = http.post("/chat/completions", json=body).json()
        second = http.post("/chat/completions", json=body).json()
        other = http.post(
            "/chat/completions",
            json={
                **body,
                "messages": [{"role": "user", "content": "Tell me about sourdough bread baking"}],
            },
        ).json()
    assert {**first, "id": None} == {**second, "id": None}
    assert first["choices"][0]["message"]["content"] != other["choices"][0]["message"]["content"]


def test_echo_and_max_tokens(client: openai.OpenAI) -> None:
    echoed = client.chat.completions.create(
        model="emulator/echo", messages=[{"role": "user", "content": "ping 42"}]
    )
    assert echoed.choices[0].message.content == "ping 42"
    cut = client.chat.completions.create(model="openai/gpt-4o", messages=HELLO, max_tokens=5)
    assert cut.choices[0].finish_reason == "length" and cut.usage.completion_tokens == 5
    cut2 = client.chat.completions.create(
        model="openai/gpt-4o", messages=HELLO, max_completion_tokens=3
    )
    assert cut2.usage.completion_tokens == 3


@pytest.mark.parametrize("provider", ["emulator", "emulator-responses", "emulator-messages"])
def test_every_provider_format_serves_chat_clients(client: openai.OpenAI, provider: str) -> None:
    completion = client.chat.completions.create(
        model="emulator/echo",
        messages=[
            {"role": "system", "content": "x"},
            {"role": "user", "content": "through " + provider},
        ],
        extra_body={"provider": {"only": [provider]}},
    )
    assert completion.choices[0].message.content == "through " + provider
    assert completion.model_extra["provider"] == provider


def test_streaming_sends_role_deltas_finish_usage_and_done(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {"model": "openai/gpt-4o", "messages": HELLO, "stream": True}
    with tenant.client() as http, http.stream("POST", "/chat/completions", json=body) as response:
        assert response.headers["content-type"] == "text/event-stream"
        lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert all(
        c["object"] == "chat.completion.chunk" and "created" in c and "model" in c for c in chunks
    )
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    usage = chunks[-1]["usage"]
    assert chunks[-1]["choices"] == [] and usage["completion_tokens"] > 0
    with tenant.client() as http:
        event = http.get(f"/ai-gateway/usage/{response.headers['x-generation-id']}").json()
    # The usage chunk carries the charge, as a whole answer does, and it is what settled.
    assert usage["charge_micros"] == event["charge_micros"] > 0
    assert usage["cost"] == event["charge_micros"] / 1_000_000
    # OpenRouter's usage accounting: the provider's cost, and no key of the caller's own.
    details = usage["cost_details"]
    assert details["upstream_inference_cost"] == event["provider_cost_micros"] / 1e6
    # Its parts, exact: their sum rounded up to the micro is the cost billed.
    parts = (
        details["upstream_inference_prompt_cost"] + details["upstream_inference_completions_cost"]
    )
    assert math.ceil(round(parts * 1e6, 6)) == event["provider_cost_micros"]
    assert usage["is_byok"] is False and usage["prompt_tokens_details"]["cached_tokens"] == 0
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    whole = httpx.post(
        f"{tenant.base_url}/chat/completions",
        json={**body, "stream": False},
        headers={"Authorization": f"Bearer {tenant.api_key}"},
    ).json()
    assert text == whole["choices"][0]["message"]["content"]
    assert whole["usage"] == usage


@pytest.mark.parametrize("provider", ["emulator", "emulator-responses", "emulator-messages"])
def test_sdk_streams_text_and_tool_calls_from_every_format(
    client: openai.OpenAI, provider: str
) -> None:
    stream = client.chat.completions.create(
        model="emulator/echo",
        messages=[{"role": "user", "content": "stream me please"}],
        stream=True,
        extra_body={"provider": {"only": [provider]}},
    )
    assert (
        "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "stream me please"
    )
    stream = client.chat.completions.create(
        model="emulator/echo",
        messages=[{"role": "user", "content": "weather?"}],
        stream=True,
        tools=[WEATHER_TOOL],
        tool_choice="required",
        extra_body={"provider": {"only": [provider]}},
    )
    arguments, finish = "", None
    for chunk in stream:
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or ():
                arguments += call.function.arguments or ""
            finish = choice.finish_reason or finish
    assert finish == "tool_calls"
    jsonschema.validate(json.loads(arguments), WEATHER_TOOL["function"]["parameters"])


def test_a_tool_call_round_trip(client: openai.OpenAI) -> None:
    messages = [{"role": "user", "content": "What is the weather in Lisbon?"}]
    first = client.chat.completions.create(
        model="openai/gpt-4o", messages=messages, tools=[WEATHER_TOOL]
    )
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    arguments = json.loads(call.function.arguments)
    jsonschema.validate(arguments, WEATHER_TOOL["function"]["parameters"])
    messages += [
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": '{"temp": 21}'},
    ]
    second = client.chat.completions.create(
        model="openai/gpt-4o", messages=messages, tools=[WEATHER_TOOL]
    )
    assert second.choices[0].finish_reason == "stop"
    assert (
        "get_weather" in second.choices[0].message.content
        and '{"temp": 21}' in second.choices[0].message.content
    )


def test_tool_choice_none_and_named(client: openai.OpenAI) -> None:
    none = client.chat.completions.create(
        model="openai/gpt-4o", messages=HELLO, tools=[WEATHER_TOOL], tool_choice="none"
    )
    assert none.choices[0].message.tool_calls is None
    named = client.chat.completions.create(
        model="openai/gpt-4o",
        messages=HELLO,
        tools=[WEATHER_TOOL],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
    )
    assert named.choices[0].message.tool_calls[0].function.name == "get_weather"


@pytest.mark.parametrize("name", ["none", "auto", "required"])
def test_a_tool_named_as_a_mode_can_be_forced(client: openai.OpenAI, name: str) -> None:
    tools: Any = [WEATHER_TOOL, {**WEATHER_TOOL, "function": {"name": name}}]
    forced = {"type": "function", "function": {"name": name}}
    # anthropic: the request goes on in the messages format, its own tool_choice
    for model in ("openai/gpt-4o", "anthropic/claude-3.5-haiku"):
        answer = client.chat.completions.create(
            model=model,
            messages=HELLO,
            tools=tools,
            tool_choice=forced,  # type: ignore[arg-type]
        )
        assert [c.function.name for c in answer.choices[0].message.tool_calls or ()] == [name]


def allowed(mode: str, name: str, nested: bool = True) -> Any:
    """OpenAI's `allowed_tools` choice, as chat (`nested`) or responses write it."""
    if nested:
        named = [{"type": "function", "function": {"name": name}}]
        return {"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": named}}
    return {"type": "allowed_tools", "mode": mode, "tools": [{"type": "function", "name": name}]}


def test_allowed_tools_limit_what_is_called(client: openai.OpenAI) -> None:
    """Every tool sent, only the named ones callable."""
    clock = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
    tools: Any = [WEATHER_TOOL, clock]
    flat: Any = [{"type": "function", **t["function"]} for t in tools]
    asked: Any = [{"role": "user", "content": "What is the weather in Lisbon?"}]
    for mode in ("required", "auto"):
        answer = client.chat.completions.create(
            model="openai/gpt-4o",
            messages=asked,
            tools=tools,
            tool_choice=allowed(mode, "get_time"),
        )
        calls = answer.choices[0].message.tool_calls or ()
        assert [c.function.name for c in calls] == ["get_time"]  # type: ignore[union-attr]
        made = client.responses.create(
            model="openai/gpt-4o",
            input=asked,
            tools=flat,
            tool_choice=allowed(mode, "get_time", nested=False),
        )
        assert [i.name for i in made.output if i.type == "function_call"] == ["get_time"]
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(
            model="openai/gpt-4o", messages=HELLO, tools=tools, tool_choice=allowed("auto", "nope")
        )
    assert raised.value.param == "tool_choice.allowed_tools.tools[0]"


class Recipe(BaseModel):
    title: str
    servings: int
    ingredients: list[str]


def test_structured_output_validates_against_the_schema(client: openai.OpenAI) -> None:
    parsed = client.beta.chat.completions.parse(
        model="openai/gpt-4o", messages=HELLO, response_format=Recipe
    )
    recipe = parsed.choices[0].message.parsed
    assert isinstance(recipe, Recipe) and recipe.ingredients
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 3, "maximum": 4},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 2},
        },
        "required": ["n", "tags"],
    }
    raw = client.chat.completions.create(
        model="openai/gpt-4o",
        messages=HELLO,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "thing", "schema": schema, "strict": True},
        },
    )
    jsonschema.validate(json.loads(raw.choices[0].message.content), schema)
    obj = client.chat.completions.create(
        model="openai/gpt-4o", messages=HELLO, response_format={"type": "json_object"}
    )
    assert isinstance(json.loads(obj.choices[0].message.content), dict)


def test_n_choices(client: openai.OpenAI) -> None:
    for model in ("openai/gpt-4o-mini", "anthropic/claude-sonnet-4"):  # chat and messages providers
        completion = client.chat.completions.create(model=model, messages=HELLO, n=3)
        assert [c.index for c in completion.choices] == [0, 1, 2]
        assert len({c.message.content for c in completion.choices}) == 3  # three different answers


def test_flaky_falls_back_and_fail_503_raises(client: openai.OpenAI) -> None:
    served = client.chat.completions.create(model="emulator/flaky", messages=HELLO)
    assert served.model_extra["provider"] == "emulator"
    with pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(model="emulator/fail-503", messages=HELLO)
    assert info.value.status_code == 503 and info.value.code == "upstream_failed"
    attempts = info.value.body["metadata"]["route_attempts"]
    assert [a["provider"] for a in attempts] == ["emulator-broken"]
    failed = client.get(  # the answer names its failed usage event
        f"/ai-gateway/usage/{info.value.response.headers['x-generation-id']}", cast_to=object
    )
    assert failed["status"] == "failed" and failed["route_attempts"] == attempts
    fallback = client.chat.completions.create(
        model="emulator/fail-503", messages=HELLO, extra_body={"models": ["emulator/echo"]}
    )
    assert fallback.model == "emulator/echo"


def test_allow_fallbacks_false_keeps_to_the_model_asked_for(client: openai.OpenAI) -> None:
    fallbacks = {"models": ["emulator/echo"]}
    served = client.chat.completions.create(
        model="emulator/fail-503", messages=HELLO, extra_body=fallbacks
    )
    assert served.model == "emulator/echo"
    # The same question without fallbacks is another route plan, not the one just kept.
    with pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(
            model="emulator/fail-503",
            messages=HELLO,
            extra_body={**fallbacks, "provider": {"allow_fallbacks": False}},
        )
    assert info.value.code == "upstream_failed"
    attempts = info.value.body["metadata"]["route_attempts"]
    assert [a["model"] for a in attempts] == ["emulator/fail-503"]


def test_routing_preferences(client: openai.OpenAI, tenant: Tenant) -> None:
    def provider(**prefs) -> str:
        completion = client.chat.completions.create(
            model="meta-llama/llama-3.3-70b-instruct",
            messages=HELLO,
            extra_body={"provider": prefs},
        )
        return completion.model_extra["provider"]

    assert provider() == "together"
    assert provider(order=["groq"]) == "groq"
    assert provider(ignore=["together"]) == "fireworks"
    assert provider(sort="price") == "groq"
    assert provider(sort="latency") == "groq"
    assert provider(sort="throughput") == "groq"
    with pytest.raises(openai.InternalServerError) as info:
        provider(only=["nobody"])
    assert info.value.code == "no_route_available"
    r = httpx.post(
        f"{tenant.base_url}/chat/completions",
        json={"model": "openai/gpt-4o", "messages": HELLO, "provider": {"only": []}},
        headers={"Authorization": f"Bearer {tenant.api_key}"},
    )
    assert_error(r, 503, "no_route_available")
    assert r.headers["x-should-retry"] == "false"


@pytest.mark.parametrize(
    ("body", "status", "code", "param"),
    [
        ({"model": "openai/gpt-4o", "messages": []}, 400, "invalid_request", "messages"),
        ({"model": "openai/gpt-4o"}, 400, "invalid_request", "messages"),
        ({"messages": HELLO}, 400, "invalid_request", "model"),
        ({"model": "openai/gpt4o", "messages": HELLO}, 404, "model_not_found", "model"),
        ({"model": "openai/gpt-4o", "messages": HELLO, "n": 0}, 400, "invalid_request", "n"),
        ({"model": "openai/gpt-4o", "messages": HELLO, "n": 99}, 400, "invalid_request", "n"),
        (
            {"model": "openai/gpt-4o", "messages": [{"role": "robot", "content": "x"}]},
            400,
            "invalid_request",
            "messages[0].role",
        ),
        (
            {"model": "openai/gpt-4o", "messages": HELLO, "temperature": "hot"},
            400,
            "invalid_request",
            "temperature",
        ),
        (
            {"model": "openai/gpt-4o", "messages": [{"role": "tool", "content": "x"}]},
            400,
            "invalid_request",
            "messages[0].tool_call_id",
        ),
        (
            {
                "model": "openai/gpt-4o",
                "messages": HELLO,
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "f", "parameters": {"type": "nonsense"}},
                    }
                ],
            },
            400,
            "invalid_tool_schema",
            "tools[0].function.parameters",
        ),
        (  # arguments are an object: OpenAI refuses a schema of another type
            {
                "model": "openai/gpt-4o",
                "messages": HELLO,
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "f", "parameters": {"type": "string"}},
                    }
                ],
            },
            400,
            "invalid_tool_schema",
            "tools[0].function.parameters",
        ),
        (
            {
                "model": "openai/gpt-4o",
                "messages": HELLO,
                "tools": [WEATHER_TOOL],
                "tool_choice": {"type": "function", "function": {"name": "other"}},
            },
            400,
            "invalid_request",
            "tool_choice",
        ),
        (
            {"model": "openai/gpt-4o", "messages": HELLO, "tool_choice": "required"},
            400,
            "invalid_request",
            "tool_choice",
        ),
        (
            {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": None}]},
            400,
            "invalid_request",
            "messages[0]",
        ),
        (
            {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": []}]},
            400,
            "invalid_request",
            "messages[0].content",
        ),
        (
            {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": [{"type": "x"}]}]},
            400,
            "invalid_request",
            "messages[0].content[0].type",
        ),
        (
            {
                "model": "openai/gpt-4o",
                "messages": [{"role": "user", "content": [{"type": "text"}]}],
            },
            400,
            "invalid_request",
            "messages[0].content[0]",
        ),
        (
            {
                "model": "openai/gpt-4o",
                "messages": [
                    {"role": "user", "content": [{"type": "image_url", "image_url": "u"}]}
                ],
            },
            400,
            "invalid_request",
            "messages[0].content[0].image_url",
        ),
        (
            {"model": "openai/gpt-4o", "messages": HELLO, "models": ["openai/gpt4o"]},
            404,
            "model_not_found",
            "models[0]",
        ),
    ],
)
def test_bad_requests_name_the_field(
    tenant: Tenant, body: dict, status: int, code: str, param: str
) -> None:
    with tenant.client() as http:
        error = assert_error(http.post("/chat/completions", json=body), status, code)
    assert error["param"] == param


def test_fixtures_script_replies_by_pattern(client: openai.OpenAI) -> None:
    def ask(model: str, text: str) -> str:
        messages = [{"role": "user", "content": text}]
        return (
            client.chat.completions.create(model=model, messages=messages)
            .choices[0]
            .message.content
        )

    assert (
        ask("anthropic/claude-sonnet-4", "What is the capital of France?")
        == "The capital of France is Paris."
    )
    assert ask("openai/gpt-4o", "hello there") == "Hello! How can I help you today?"
    assert ask("mistralai/mistral-large", "hello there") != "Hello! How can I help you today?"
    streamed = client.chat.completions.create(
        model="openai/gpt-4o",
        messages=[{"role": "user", "content": "what is the capital of france"}],
        stream=True,
    )
    assert (
        "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
        == "The capital of France is Paris."
    )


@pytest.mark.parametrize("provider", ["azure", "openai"])  # chat format; responses (no `stop`)
def test_stop_ends_the_answer_whatever_the_providers_format(
    client: openai.OpenAI, provider: str
) -> None:
    asked = {
        "model": "openai/gpt-4o-mini",
        "messages": [{"role": "user", "content": "[emulator:tokens=50] tell me more"}],
        "extra_body": {"provider": {"only": [provider]}},
    }
    free = client.chat.completions.create(**asked)  # type: ignore[call-overload]
    text = free.choices[0].message.content
    assert "." in text and free.model_extra["provider"] == provider
    assert free.usage.completion_tokens == 50
    cut = client.chat.completions.create(**asked, stop=["."])  # type: ignore[call-overload]
    assert cut.model_extra["provider"] == provider and cut.choices[0].finish_reason == "stop"
    assert cut.choices[0].message.content and "." not in cut.choices[0].message.content
    assert 0 < cut.usage.completion_tokens < 50  # cut where the first "." was
    stream = client.chat.completions.create(**asked, stop=["."], stream=True)  # type: ignore[call-overload]
    chunks = list(stream)
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == cut.choices[0].message.content
    assert chunks[-1].usage.completion_tokens == cut.usage.completion_tokens


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("emulator/echo", "emulator"),
        ("emulator/echo", "emulator-responses"),
        ("emulator/echo", "emulator-messages"),
        ("openai/gpt-4o-mini", "azure"),  # chat: `n` travels in the provider's request
        ("openai/gpt-4o-mini", "openai"),  # responses: one provider stream per choice
    ],
)
def test_a_stream_with_n_carries_every_choice(
    client: openai.OpenAI, model: str, provider: str
) -> None:
    asked = {
        "model": model,
        "messages": [{"role": "user", "content": "Compare tea and coffee"}],
        "n": 3,
        "extra_body": {"provider": {"only": [provider]}},
    }
    whole = client.chat.completions.create(**asked)  # type: ignore[call-overload]
    texts, finishes, usage = ["", "", ""], [None, None, None], None
    for chunk in client.chat.completions.create(**asked, stream=True):  # type: ignore[call-overload]
        usage = chunk.usage or usage
        for choice in chunk.choices:
            texts[choice.index] += choice.delta.content or ""
            finishes[choice.index] = choice.finish_reason or finishes[choice.index]
    assert texts == [c.message.content for c in whole.choices]
    assert finishes == [c.finish_reason for c in whole.choices] == ["stop"] * 3
    assert usage is not None and usage.completion_tokens == whole.usage.completion_tokens
    assert usage.prompt_tokens == whole.usage.prompt_tokens


def test_a_tool_call_answer_streams_null_content_and_stops_at_max_tokens(
    tenant: Tenant,
) -> None:
    body = {
        "model": "openai/gpt-4o",
        "messages": [{"role": "user", "content": "weather in Oslo?"}],
        "tools": [WEATHER_TOOL],
        "tool_choice": "required",
    }
    with tenant.client() as http:
        text = http.post("/chat/completions", json={**body, "stream": True}).text
        cut = http.post("/chat/completions", json={**body, "max_tokens": 3}).json()
        held = http.get("/ai-gateway/reservations", params={"limit": 1}).json()["data"][0]
    first = json.loads(text.split("\n\n")[0].removeprefix("data: "))
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": None}  # as OpenAI
    # A tool call that runs out of tokens ends with `length`, and costs max_tokens, no more.
    assert cut["choices"][0]["finish_reason"] == "length"
    assert cut["usage"]["completion_tokens"] == 3
    assert cut["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert held["charge_micros"] <= held["amount_micros"]


def test_a_messages_format_provider_takes_tool_arguments_that_are_not_json(
    tenant: Tenant,
) -> None:
    """Its `input` must be an object: a call cut at max_tokens, or one a client sends back
    cut, is `{}` there (both were 500s)."""
    body = {
        "model": "anthropic/claude-sonnet-4",
        "messages": [{"role": "user", "content": "weather in Oslo?"}],
        "tools": [WEATHER_TOOL],
        "tool_choice": "required",
        "max_tokens": 3,
    }
    echoed = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{"}}
        ],
    }
    result = {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
    with tenant.client() as http:
        cut = http.post("/chat/completions", json=body)
        after = http.post(
            "/chat/completions",
            json={**body, "messages": [*body["messages"], echoed, result], "max_tokens": 50},
        )
    assert cut.status_code == 200, cut.text
    choice = cut.json()["choices"][0]
    assert choice["finish_reason"] == "length" and cut.json()["usage"]["completion_tokens"] == 3
    assert choice["message"]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert after.status_code == 200, after.text


SAMPLING = {
    "frequency_penalty": 0.5,
    "presence_penalty": -2,
    "repetition_penalty": 1.1,
    "top_k": 40,
    "min_p": 0.05,
    "top_a": 0,
    "logit_bias": {"50256": -100, "13": 2.5},
    "user": "user-42",
}


def test_sampling_settings_are_taken_and_change_nothing(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="openai/gpt-4o", messages=HELLO)  # type: ignore[arg-type]
    tuned = client.chat.completions.create(
        model="openai/gpt-4o",
        messages=HELLO,  # type: ignore[arg-type]
        frequency_penalty=0.5,
        presence_penalty=-2,
        logit_bias={"50256": -100},
        user="user-42",
        metadata={"run": "nightly"},
        prediction={"type": "content", "content": "Hello"},
        modalities=["text"],
        service_tier="auto",
        verbosity="low",
        extra_body={k: SAMPLING[k] for k in ("repetition_penalty", "top_k", "min_p", "top_a")},
    )
    assert tuned.choices[0].message.content == plain.choices[0].message.content


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("frequency_penalty", 2.5),
        ("frequency_penalty", "high"),
        ("presence_penalty", -3),
        ("repetition_penalty", 0),
        ("top_k", -1),
        ("top_k", 1.5),
        ("min_p", 1.5),
        ("top_a", -0.1),
        ("logit_bias", {"50256": 101}),
        ("logit_bias", {"the": 1}),
        ("logit_bias", [1, 2]),
        ("user", 42),
        ("metadata", "x"),
        ("metadata", {"a": 1}),
        ("metadata", {f"k{i}": "v" for i in range(17)}),
        ("metadata", {"a": "v" * 513}),
        ("prediction", "x"),
        ("prediction", {"type": "xx", "content": "a"}),
        ("modalities", ["smell"]),
        ("modalities", "text"),
        ("audio", "x"),
        ("service_tier", "ultra"),
        ("verbosity", "extreme"),
    ],
)
def test_sampling_settings_out_of_range_are_refused(
    tenant: Tenant, field: str, value: object
) -> None:
    body = {"model": "openai/gpt-4o", "messages": HELLO, **SAMPLING, field: value}
    with tenant.client() as http:
        for path in ("/chat/completions", "/ai-gateway/quote"):
            error = assert_error(http.post(path, json=body), 400, "invalid_request")
            assert re.split(r"[.[]", error["param"])[0] == field, error
        assert http.get("/ai-gateway/usage").json()["data"] == []


def test_asking_for_a_million_tokens_gets_the_output_limit(tenant: Tenant) -> None:
    """`[emulator:tokens=999999]` is cut at `max_tokens`, or at the route's output limit,
    without writing the million first (it counted the whole text again for every
    paragraph: minutes of a frozen server)."""
    ask = [{"role": "user", "content": "[emulator:tokens=999999] tell me more"}]
    with tenant.client(timeout=30) as http:
        cut = http.post(
            "/chat/completions",
            json={"model": "openai/gpt-4o-mini", "messages": ask, "max_tokens": 40},
        ).json()
        whole = http.post(
            "/chat/completions", json={"model": "openai/gpt-4o-mini", "messages": ask}
        ).json()
    assert (
        cut["choices"][0]["finish_reason"] == "length" and cut["usage"]["completion_tokens"] == 40
    )
    assert whole["choices"][0]["finish_reason"] == "length"
    assert whole["usage"]["completion_tokens"] == 16384  # gpt-4o-mini's output limit


def test_an_invalid_request_is_the_sdks_bad_request_error(client: openai.OpenAI) -> None:
    """400 as OpenAI's API answers it, not 422: client code catches BadRequestError."""
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="openai/gpt-4o", messages=HELLO, temperature=5)
    assert (raised.value.status_code, raised.value.param) == (400, "temperature")
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model="openai/gpt-4o", input="hi", top_logprobs=99)
    assert raised.value.param == "top_logprobs"


def test_tools_that_are_not_functions_are_refused_with_the_reason(client: openai.OpenAI) -> None:
    custom: Any = [{"type": "custom", "custom": {"name": "grammar"}}]
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="openai/gpt-4o", messages=HELLO, tools=custom)
    assert raised.value.param == "tools[0]" and "'custom' are not supported" in raised.value.message
    with pytest.raises(openai.BadRequestError) as raised:
        files: Any = [{"type": "file_search", "vector_store_ids": ["vs_1"]}]
        client.responses.create(model="openai/gpt-4o", input="hi", tools=files)
    assert raised.value.param == "tools[0]" and "'file_search'" in raised.value.message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("functions", [{"name": "f", "parameters": {"type": "object", "properties": {}}}]),
        ("function_call", {"name": "f"}),
    ],
)
def test_deprecated_function_calling_is_refused_not_ignored(
    client: openai.OpenAI, field: str, value: object
) -> None:
    """Taken silently, a client waiting for `message.function_call` would get prose."""
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(
            model="openai/gpt-4o",
            messages=[{"role": "user", "content": "weather?"}],
            **{field: value},  # type: ignore[arg-type]
        )
    assert info.value.code == "invalid_request" and info.value.param == field
    assert "`tools`" in info.value.message


def test_a_conversation_is_refused_not_ignored(client: openai.OpenAI) -> None:
    for create in (client.responses.create, client.responses.input_tokens.count):
        with pytest.raises(openai.BadRequestError) as info:
            create(model="openai/gpt-4o", input="what did I say?", conversation="conv_1")
        assert info.value.param == "conversation"
        assert "previous_response_id" in info.value.message
