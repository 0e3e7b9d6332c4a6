"""A route serves a request only if its model can (tools, images) and its context holds
the prompt; otherwise a capable fallback serves it, or the error names what is missing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from emulator.testing import Tenant
from tests.helpers import assert_error

TOOL = {
    "type": "function",
    "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}},
}
IMAGE = [
    {"type": "text", "text": "What is in this picture?"},
    {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
]


def chat(tenant: Tenant, **body: Any) -> Any:
    body.setdefault("messages", [{"role": "user", "content": "hello"}])
    with tenant.client() as http:
        return http.post("/chat/completions", json=body)


def test_tools_need_a_model_that_uses_tools(tenant: Tenant) -> None:
    refused = chat(tenant, model="deepseek/deepseek-r1", tools=[TOOL])
    error = assert_error(refused, 503, "no_route_available", "upstream_error")
    assert error["param"] == "tools" and "tool use" in error["message"]
    assert refused.headers["x-should-retry"] == "false"
    # tools the model is told not to use need no tool use
    assert chat(tenant, model="deepseek/deepseek-r1", tools=[TOOL], tool_choice="none").is_success


def test_a_capable_fallback_serves_what_the_model_cannot(tenant: Tenant) -> None:
    served = chat(
        tenant, model="deepseek/deepseek-r1", models=["openai/gpt-4o"], tools=[TOOL],
        tool_choice="required",
    )  # fmt: skip
    assert served.status_code == 200, served.text
    assert served.json()["model"] == "openai/gpt-4o"
    assert served.json()["choices"][0]["finish_reason"] == "tool_calls"


def test_images_need_a_model_with_vision(tenant: Tenant) -> None:
    messages = [{"role": "user", "content": IMAGE}]
    refused = chat(tenant, model="meta-llama/llama-3.1-8b-instruct", messages=messages)
    error = assert_error(refused, 503, "no_route_available")
    assert error["param"] == "messages" and "image input" in error["message"]
    assert chat(tenant, model="openai/gpt-4o", messages=messages).is_success


@pytest.mark.parametrize("endpoint", ["chat", "responses"])
def test_a_prompt_longer_than_every_context_is_400(tenant: Tenant, endpoint: str) -> None:
    text = "a " * 40_000  # 40,000 tokens; emulator/echo's context is 32,768
    with tenant.client() as http:
        if endpoint == "chat":
            body = {"model": "emulator/echo", "messages": [{"role": "user", "content": text}]}
            refused = http.post("/chat/completions", json=body)
        else:
            refused = http.post("/responses", json={"model": "emulator/echo", "input": text})
        error = assert_error(refused, 400, "context_length_exceeded", "invalid_request_error")
        assert error["param"] == ("messages" if endpoint == "chat" else "input")
        assert "32,768" in error["message"]
        balance = http.get("/ai-gateway/balance").json()
    assert balance["pending_micros"] == 0  # refused before any hold


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/chat/completions", "max_tokens"),
        ("/chat/completions", "max_completion_tokens"),
        ("/responses", "max_output_tokens"),
        ("/messages", "max_tokens"),
    ],
)
def test_the_output_asked_for_must_fit_beside_the_prompt(
    tenant: Tenant, path: str, field: str
) -> None:
    text = "a " * 30_000  # 30,000 tokens; emulator/echo holds 32,768 and answers 4,096
    body: dict[str, Any] = (
        {"input": text}
        if path == "/responses"
        else {"messages": [{"role": "user", "content": text}]}
    )
    with tenant.client() as http:
        refused = http.post(path, json={"model": "emulator/echo", field: 4_000, **body})
        served = http.post(path, json={"model": "emulator/echo", field: 1_000, **body})
        balance = http.get("/ai-gateway/balance").json()
    error = assert_error(refused, 400, "context_length_exceeded", "invalid_request_error")
    wire_field = "max_tokens" if field == "max_completion_tokens" else field
    assert error["param"] == wire_field
    assert "4,000 of output" in error["message"] and "32,768" in error["message"]
    assert served.status_code == 200, served.text
    assert balance["pending_micros"] == 0


def test_middle_out_leaves_room_for_the_output_asked_for(tenant: Tenant) -> None:
    turns = [{"role": "user", "content": f"turn {i} " + "b " * 2_000} for i in range(16)]
    asked = {"model": "emulator/echo", "messages": turns, "max_tokens": 4_000}
    refused = chat(tenant, **asked)  # 32,000 tokens fit alone, not with 4,000 more
    assert assert_error(refused, 400, "context_length_exceeded")["param"] == "max_tokens"
    served = chat(tenant, transforms=["middle-out"], **asked)
    assert served.status_code == 200, served.text
    assert served.json()["usage"]["prompt_tokens"] <= 32_768 - 4_000


def test_a_long_text_of_few_tokens_is_counted_and_served(tenant: Tenant) -> None:
    text = "abcdefgh " * 5_000  # 45,000 characters, but 10,000 tokens: it fits
    served = chat(tenant, model="emulator/echo", messages=[{"role": "user", "content": text}])
    assert served.status_code == 200, served.text
    assert served.json()["usage"]["prompt_tokens"] > 10_000


def test_require_parameters_keeps_to_routes_that_give_logprobs(tenant: Tenant) -> None:
    asked = {"logprobs": True, "top_logprobs": 1}
    # Without it, a messages-format provider serves and answers without them.
    loose = chat(tenant, model="anthropic/claude-sonnet-4", **asked)
    assert loose.json()["provider"] == "anthropic"
    assert loose.json()["choices"][0]["logprobs"] is None
    strict = {"require_parameters": True}
    kept = chat(tenant, model="anthropic/claude-sonnet-4", provider=strict, **asked)
    assert kept.json()["provider"] == "vertex"  # the one route in the chat format
    assert kept.json()["choices"][0]["logprobs"]["content"]
    # Nothing asked that a route could not take: the preference changes nothing.
    assert (
        chat(tenant, model="anthropic/claude-sonnet-4", provider=strict).json()["provider"]
        == "anthropic"
    )
    refused = chat(tenant, model="anthropic/claude-3.5-haiku", provider=strict, **asked)
    error = assert_error(refused, 503, "no_route_available")
    assert error["param"] == "logprobs" and "require_parameters" in error["message"]
    with tenant.client() as http:
        response = http.post(
            "/responses",
            json={
                "model": "anthropic/claude-3.5-haiku",
                "input": "hello",
                "include": ["message.output_text.logprobs"],
                "provider": strict,
            },
        )
    assert assert_error(response, 503, "no_route_available")["param"] == "include"


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_require_parameters_keeps_to_models_with_structured_output(tenant: Tenant) -> None:
    strict = {"require_parameters": True}
    fmt = {"type": "json_schema", "json_schema": {"name": "place", "schema": SCHEMA}}
    claude = "anthropic/claude-sonnet-4"  # no structured_output in its capabilities
    # Without the preference, every model answers in the format (lenient).
    loose = chat(tenant, model=claude, response_format=fmt)
    assert set(json.loads(loose.json()["choices"][0]["message"]["content"])) == {"city"}
    refused = chat(tenant, model=claude, response_format=fmt, provider=strict)
    error = assert_error(refused, 503, "no_route_available")
    assert error["param"] == "response_format" and "structured output" in error["message"]
    json_object = chat(
        tenant, model=claude, response_format={"type": "json_object"}, provider=strict
    )
    assert assert_error(json_object, 503, "no_route_available")["param"] == "response_format"
    served = chat(
        tenant, model=claude, models=["openai/gpt-4o"], response_format=fmt, provider=strict
    )
    assert served.status_code == 200 and served.json()["model"] == "openai/gpt-4o"
    assert chat(tenant, model=claude, provider=strict).status_code == 200  # nothing asked
    with tenant.client() as http:
        text_format = {"format": {"type": "json_schema", "name": "place", "schema": SCHEMA}}
        response = http.post(
            "/responses",
            json={"model": claude, "input": "hello", "text": text_format, "provider": strict},
        )
        assert assert_error(response, 503, "no_route_available")["param"] == "text.format"
        message = http.post(
            "/messages",
            json={
                "model": claude,
                "max_tokens": 100,
                "messages": [{"role": "user", "content": "hello"}],
                "output_format": {"type": "json_schema", "schema": SCHEMA},
                "provider": strict,
            },
        )
        assert assert_error(message, 503, "no_route_available")["param"] == "output_format"
