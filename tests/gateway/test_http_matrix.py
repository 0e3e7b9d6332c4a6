"""The translation matrix over HTTP: client format x provider format x stream x text/tool."""

from __future__ import annotations

import asyncio
import json

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


@pytest.fixture
def client(emulator: EmulatorHandle, tenant: Tenant) -> openai.OpenAI:
    return openai.OpenAI(base_url=emulator.base_url, api_key=tenant.api_key, max_retries=0)


def chat(client: openai.OpenAI, provider: str, stream: bool, tool: bool) -> tuple[str, str]:
    kwargs: dict = {
        "model": "emulator/echo",
        "messages": [{"role": "user", "content": f"matrix {provider}"}],
        "extra_body": {"provider": {"only": [provider]}},
    }
    if tool:
        kwargs |= {"tools": [CHAT_TOOL], "tool_choice": "required"}
    if not stream:
        message = client.chat.completions.create(**kwargs).choices[0].message
        arguments = message.tool_calls[0].function.arguments if tool else ""
        return message.content or "", arguments
    text, arguments = "", ""
    for chunk in client.chat.completions.create(stream=True, **kwargs):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for call in choice.delta.tool_calls or ():
                arguments += call.function.arguments or ""
    return text, arguments


def responses(client: openai.OpenAI, provider: str, stream: bool, tool: bool) -> tuple[str, str]:
    kwargs: dict = {
        "model": "emulator/echo",
        "input": f"matrix {provider}",
        "extra_body": {"provider": {"only": [provider]}},
    }
    if tool:
        kwargs |= {"tools": [RESPONSES_TOOL], "tool_choice": "required"}
    if not stream:
        response = client.responses.create(**kwargs)
    else:
        events = list(client.responses.create(stream=True, **kwargs))
        response = events[-1].response
    calls = [item for item in response.output if item.type == "function_call"]
    return response.output_text, calls[0].arguments if calls else ""


@pytest.mark.parametrize("tool", [False, True], ids=["text", "tool"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("client_format", ["chat", "responses"])
def test_matrix(
    client: openai.OpenAI, client_format: str, provider: str, stream: bool, tool: bool
) -> None:
    call = chat if client_format == "chat" else responses
    text, arguments = call(client, provider, stream, tool)
    if tool:
        jsonschema.validate(json.loads(arguments), PARAMS)
    else:
        assert text == f"matrix {provider}"


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
