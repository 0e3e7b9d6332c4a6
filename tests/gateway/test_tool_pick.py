"""A generated answer calls the tool the user's message is about (`tool_pick`)."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from emulator.gateway.canonical import Tool
from emulator.gateway.tool_pick import likeliest
from emulator.testing import EmulatorHandle, Tenant

PLACE = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = (
    Tool("get_weather", "Current weather conditions for a city.", PLACE),
    Tool("getLocalTime", "The local time in a city.", PLACE),
    Tool("search_flights", "Find flights between two airports.", {"type": "object"}),
)


@pytest.mark.parametrize(
    ("message", "picked"),
    [
        ("What's the weather in Oslo?", "get_weather"),
        ("What time is it in Tokyo?", "getLocalTime"),  # camelCase split, "time" matches
        ("Any flights to Lisbon on Friday?", "search_flights"),  # plural to singular
        ("Hello there", "get_weather"),  # about none: the first, as before
        ("Weather and time please", "get_weather"),  # a tie: the first of equals
    ],
)
def test_the_tool_the_message_is_about(message: str, picked: str) -> None:
    assert likeliest(TOOLS, message).name == picked


def as_openai(t: Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
    }


def test_clients_get_the_call_they_would_expect(client: openai.OpenAI) -> None:
    asked = client.chat.completions.create(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": "What time is it in Tokyo?"}],
        tools=[as_openai(t) for t in TOOLS],
    )
    call = asked.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "getLocalTime",
        {"city": "Tokyo"},
    )
    made = client.responses.create(
        model="anthropic/claude-3.5-haiku",  # the messages provider, translated
        input="Find me flights to Lisbon",
        tools=[{"type": "function", **as_openai(t)["function"]} for t in TOOLS],
        tool_choice="required",
    )
    assert made.output[0].name == "search_flights"


def test_langchain_tool_binding(emulator: EmulatorHandle, tenant: Tenant) -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two numbers."""
        return a * b

    llm = ChatOpenAI(
        model="openai/gpt-4o-mini", base_url=emulator.base_url, api_key=tenant.api_key
    ).bind_tools([add, multiply])
    message = llm.invoke("Multiply 6 by 7")
    assert message.tool_calls[0]["name"] == "multiply"
    assert message.tool_calls[0]["args"] == {"a": 6, "b": 7}
