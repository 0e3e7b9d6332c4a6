"""The translation matrix over HTTP: client format (chat, responses, OpenRouter's
Anthropic-compatible messages) x provider format x stream x text, one tool call or
several."""

from __future__ import annotations

import asyncio
import json

import anthropic
import jsonschema
import openai
import pytest

from emulator.testing import EmulatorHandle, Tenant

PROVIDERS = ["emulator", "emulator-responses", "emulator-messages"]
PARAMS = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
    "required": ["query", "limit"],
}
CHAT_TOOL = {"type": "function", "function": {"name": "search", "parameters": PARAMS}}
RESPONSES_TOOL = {"type": "function", "name": "search", "parameters": PARAMS}
# Several calls in one answer: the demo fixtures script this question as two calls.
SEVERAL = "What is the weather in Paris and London?"
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}}
SCRIPTED = [
    ("get_weather", '{"city":"Paris","unit":"celsius"}'),
    ("get_weather", '{"city":"London","unit":"celsius"}'),
]


Calls = list[tuple[str, str]]  # (name, arguments) of each tool call, in order


def chat(client: openai.OpenAI, provider: str, stream: bool, tool: str) -> tuple[str, Calls]:
    kwargs: dict = {
        "model": "emulator/echo",
        "messages": [{"role": "user", "content": f"matrix {provider}"}],
        "extra_body": {"provider": {"only": [provider]}},
    }
    if tool == "tool":
        kwargs |= {"tools": [CHAT_TOOL], "tool_choice": "required"}
    elif tool == "tools":
        weather = {"name": "get_weather", "parameters": WEATHER}
        kwargs |= {"tools": [{"type": "function", "function": weather}]}
        kwargs["messages"] = [{"role": "user", "content": SEVERAL}]
    if not stream:
        message = client.chat.completions.create(**kwargs).choices[0].message
        calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or ()]
        return message.content or "", calls
    text, streamed = "", {}
    for chunk in client.chat.completions.create(stream=True, **kwargs):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or ():
                name, arguments = streamed.get(call.index, ("", ""))
                streamed[call.index] = (
                    name + (call.function.name or ""),
                    arguments + (call.function.arguments or ""),
                )
    return text, [streamed[index] for index in sorted(streamed)]


def responses(client: openai.OpenAI, provider: str, stream: bool, tool: str) -> tuple[str, Calls]:
    kwargs: dict = {
        "model": "emulator/echo",
        "input": f"matrix {provider}",
        "extra_body": {"provider": {"only": [provider]}},
    }
    if tool == "tool":
        kwargs |= {"tools": [RESPONSES_TOOL], "tool_choice": "required"}
    elif tool == "tools":
        weather = {"type": "function", "name": "get_weather", "parameters": WEATHER}
        kwargs |= {"tools": [weather], "input": SEVERAL}
    if not stream:
        response = client.responses.create(**kwargs)
    else:
        events = list(client.responses.create(stream=True, **kwargs))
        response = events[-1].response
    calls = [item for item in response.output if item.type == "function_call"]
    return response.output_text, [(c.name, c.arguments) for c in calls]


@pytest.mark.parametrize("tool", ["text", "tool", "tools"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("client_format", ["chat", "responses"])
def test_matrix(
    client: openai.OpenAI, client_format: str, provider: str, stream: bool, tool: str
) -> None:
    call = chat if client_format == "chat" else responses
    text, calls = call(client, provider, stream, tool)
    if tool == "tool":
        assert [name for name, _ in calls] == ["search"]
        jsonschema.validate(json.loads(calls[0][1]), PARAMS)
    elif tool == "tools":
        assert calls == SCRIPTED and text == ""
    else:
        assert text == f"matrix {provider}" and calls == []


def messages(
    client: anthropic.Anthropic, provider: str, stream: bool, tool: str
) -> tuple[str, Calls]:
    """OpenRouter's Anthropic-compatible API, through Anthropic's SDK."""
    kwargs: dict = {
        "model": "emulator/echo",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": f"matrix {provider}"}],
        "extra_body": {"provider": {"only": [provider]}},
    }
    if tool == "tool":
        search = {"name": "search", "input_schema": PARAMS}
        kwargs |= {"tools": [search], "tool_choice": {"type": "any"}}
    elif tool == "tools":
        kwargs |= {"tools": [{"name": "get_weather", "input_schema": WEATHER}]}
        kwargs["messages"] = [{"role": "user", "content": SEVERAL}]
    if stream:
        with client.messages.stream(**kwargs) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**kwargs)
    text = "".join(block.text for block in message.content if block.type == "text")
    calls = [
        (block.name, json.dumps(block.input, separators=(",", ":")))
        for block in message.content
        if block.type == "tool_use"
    ]
    return text, calls


@pytest.mark.parametrize("tool", ["text", "tool", "tools"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_matrix_anthropic_client(
    claude: anthropic.Anthropic, provider: str, stream: bool, tool: str
) -> None:
    text, calls = messages(claude, provider, stream, tool)
    if tool == "tool":
        assert [name for name, _ in calls] == ["search"]
        jsonschema.validate(json.loads(calls[0][1]), PARAMS)
    elif tool == "tools":
        assert calls == SCRIPTED and text == ""
    else:
        assert text == f"matrix {provider}" and calls == []


def test_async_client(emulator: EmulatorHandle, tenant: Tenant) -> None:
    async def main() -> list[str]:
        client = openai.AsyncOpenAI(
            base_url=emulator.base_url, api_key=tenant.api_key, max_retries=0
        )
        async with client:
            whole = await client.chat.completions.create(
                model="emulator/echo", messages=[{"role": "user", "content": "async"}]
            )
            stream = await client.chat.completions.create(
                model="emulator/echo", messages=[{"role": "user", "content": "async"}], stream=True
            )
            streamed = "".join(
                [c.choices[0].delta.content or "" async for c in stream if c.choices]
            )
            return [whole.choices[0].message.content or "", streamed]

    assert asyncio.run(main()) == ["async", "async"]
