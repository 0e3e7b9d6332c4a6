"""The chat, responses and messages answers are what the OpenAPI document declares, in
each shape they come in (text, tool calls, reasoning, logprobs, background), so that
clients generated from the document read them."""

from __future__ import annotations

from typing import Any

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import documented

QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]
TOOL = {"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}
CHATS = [
    {"model": "openai/gpt-4o", "messages": QUESTION, "logprobs": True, "top_logprobs": 2},
    {"model": "openai/gpt-4o", "messages": QUESTION, "tools": [TOOL], "tool_choice": "required"},
    {"model": "deepseek/deepseek-r1", "messages": QUESTION, "reasoning": {"effort": "low"}},
    {"model": "openai/gpt-4o", "messages": QUESTION, "max_tokens": 2},  # cut short
]
FUNCTION = {"type": "function", **TOOL["function"]}
CITY = {"format": {"type": "json_schema", "name": "city", "schema": {"type": "object"}}}
RESPONSES = [
    {"model": "openai/gpt-4o", "input": "hi"},
    {"model": "openai/gpt-4o", "input": "weather?", "tools": [FUNCTION], "tool_choice": "required"},
    {"model": "deepseek/deepseek-r1", "input": "hi", "reasoning": {"summary": "auto"}},
    {"model": "openai/gpt-4o", "input": "hi", "max_output_tokens": 16, "text": CITY},
]
MESSAGES = [
    {"model": "anthropic/claude-sonnet-4", "max_tokens": 50, "messages": QUESTION},
    {"model": "anthropic/claude-sonnet-4", "max_tokens": 50, "messages": QUESTION,
     "tools": [{"name": "weather", "input_schema": {"type": "object"}}],
     "tool_choice": {"type": "any"}},
    {"model": "anthropic/claude-sonnet-4", "max_tokens": 2000, "messages": QUESTION,
     "thinking": {"type": "enabled", "budget_tokens": 1024}},
]  # fmt: skip


def test_chat_completions(openapi_document: dict[str, Any], tenant: Tenant) -> None:
    with tenant.client() as http:
        for body in CHATS:
            documented(openapi_document, http.post("/chat/completions", json=body), CHAT)


def test_messages(openapi_document: dict[str, Any], tenant: Tenant) -> None:
    with tenant.client() as http:
        for body in MESSAGES:
            documented(openapi_document, http.post("/messages", json=body), MESSAGE)


def test_responses_stored_and_background(
    openapi_document: dict[str, Any], emulator: EmulatorHandle, tenant: Tenant
) -> None:
    one = "/api/v1/responses/{response_id}"
    with tenant.client() as http:
        for body in RESPONSES:
            made = http.post("/responses", json=body)
            documented(openapi_document, made, RESPONSE)
            documented(openapi_document, http.get(f"/responses/{made.json()['id']}"), one)
        queued = http.post("/responses", json={**RESPONSES[0], "background": True})
        documented(openapi_document, queued, RESPONSE)
        ident = queued.json()["id"]
        documented(openapi_document, http.post(f"/responses/{ident}/cancel"), one + "/cancel")
        items = http.get(f"/responses/{ident}/input_items")
        documented(openapi_document, items, one + "/input_items")
        documented(openapi_document, http.delete(f"/responses/{ident}"), one)


CHAT, RESPONSE, MESSAGE = "/api/v1/chat/completions", "/api/v1/responses", "/api/v1/messages"
