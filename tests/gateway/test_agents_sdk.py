"""OpenAI's Agents SDK (`openai-agents`), unmodified but for its client's base URL and
key: tool round trips (parallel calls too), output types, streaming and handoffs, on both
of its models (the responses one and the chat completions one)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import openai
import pytest
from agents import (
    Agent,
    ModelSettings,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents.items import MessageOutputItem, ToolCallItem, ToolCallOutputItem
from openai.types.responses import ResponseTextDeltaEvent
from pydantic import BaseModel

from emulator.testing import EmulatorHandle, Tenant

T = TypeVar("T")
MODELS = [OpenAIResponsesModel, OpenAIChatCompletionsModel]


set_tracing_disabled(True)  # traces would be sent to OpenAI's servers


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"It is sunny in {city}."


class Forecast(BaseModel):
    city: str
    summary: str


def run(
    emulator: EmulatorHandle, tenant: Tenant, kind: Any, story: Callable[[Any], Awaitable[T]]
) -> T:
    """`story(make_agent)` in one event loop, with one client closed at its end;
    `make_agent(**settings)` is an agent on `kind` of model, gpt-4o-mini."""

    async def main() -> T:
        async with openai.AsyncOpenAI(
            base_url=emulator.base_url, api_key=tenant.api_key, max_retries=0
        ) as client:
            model = kind(model="openai/gpt-4o-mini", openai_client=client)

            def make_agent(**settings: Any) -> Agent[Any]:
                return Agent(**{"name": "weather", "model": model, **settings})

            return await story(make_agent)

    return asyncio.run(main())


@pytest.mark.parametrize("kind", MODELS)
def test_a_tool_round_trip(emulator: EmulatorHandle, tenant: Tenant, kind: Any) -> None:
    async def story(make_agent: Any) -> Any:
        weather = make_agent(
            tools=[get_weather], model_settings=ModelSettings(tool_choice="required")
        )
        return await Runner.run(weather, "What's the weather in Paris?", max_turns=3)

    result = run(emulator, tenant, kind, story)
    assert [type(item) for item in result.new_items] == [
        ToolCallItem,
        ToolCallOutputItem,
        MessageOutputItem,
    ]
    assert result.new_items[1].output == "It is sunny in Paris."
    assert "It is sunny in Paris." in result.final_output
    # The SDK's usage is the gateway's: two requests, each logged with its tokens.
    usage = result.context_wrapper.usage
    with tenant.client() as http:
        events = http.get("/ai-gateway/usage").json()["data"]
    assert usage.requests == len(events) == 2
    assert usage.input_tokens == sum(e["prompt_tokens"] for e in events)
    assert usage.output_tokens == sum(e["completion_tokens"] for e in events)


@pytest.mark.parametrize("kind", MODELS)
def test_an_output_type(emulator: EmulatorHandle, tenant: Tenant, kind: Any) -> None:
    async def story(make_agent: Any) -> Any:
        return await Runner.run(make_agent(output_type=Forecast), "Weather in Rome tomorrow?")

    result = run(emulator, tenant, kind, story)
    assert isinstance(result.final_output, Forecast)
    assert result.final_output.city == "Rome"


@pytest.mark.parametrize("kind", MODELS)
def test_an_output_type_sums_up_the_tools(
    emulator: EmulatorHandle, tenant: Tenant, kind: Any
) -> None:
    async def story(make_agent: Any) -> Any:
        forecaster = make_agent(output_type=Forecast, tools=[get_weather])
        return await Runner.run(forecaster, "Weather in Rome tomorrow?", max_turns=3)

    result = run(emulator, tenant, kind, story)
    assert result.final_output == Forecast(
        city="Rome", summary="According to get_weather, the result is: It is sunny in Rome."
    )


@pytest.mark.parametrize("kind", MODELS)
def test_streaming_says_what_the_whole_run_says(
    emulator: EmulatorHandle, tenant: Tenant, kind: Any
) -> None:
    ask = "What's the weather in Oslo?"

    async def story(make_agent: Any) -> tuple[str, str, str]:
        weather = make_agent(tools=[get_weather])
        streamed = Runner.run_streamed(weather, ask, max_turns=3)
        deltas = [
            event.data.delta
            async for event in streamed.stream_events()
            if event.type == "raw_response_event" and isinstance(event.data, ResponseTextDeltaEvent)
        ]
        whole = await Runner.run(weather, ask, max_turns=3)
        return "".join(deltas), streamed.final_output, whole.final_output

    said, final, whole = run(emulator, tenant, kind, story)
    assert said == final == whole
    assert "It is sunny in Oslo." in final


@pytest.mark.parametrize("kind", MODELS)
def test_a_handoff(emulator: EmulatorHandle, tenant: Tenant, kind: Any) -> None:
    async def story(make_agent: Any) -> Any:
        spanish = make_agent(name="spanish", instructions="Answer in Spanish.")
        triage = make_agent(
            name="triage", handoffs=[spanish], model_settings=ModelSettings(tool_choice="required")
        )
        return await Runner.run(triage, "¿Qué hay que ver en Madrid?", max_turns=3)

    result = run(emulator, tenant, kind, story)
    assert result.last_agent.name == "spanish"
    # The agent handed to answers the user, not the handoff's tool result.
    assert "transfer_to" not in result.final_output
    assert "Madrid" in result.final_output


@pytest.mark.parametrize("kind", MODELS)
def test_parallel_calls(emulator: EmulatorHandle, tenant: Tenant, kind: Any) -> None:
    async def story(make_agent: Any) -> Any:
        weather = make_agent(tools=[get_weather])
        return await Runner.run(weather, "Weather in Paris and Tokyo?", max_turns=3)

    result = run(emulator, tenant, kind, story)
    outputs = [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]
    assert outputs == ["It is sunny in Paris.", "It is sunny in Tokyo."]
    assert "sunny in Paris." in result.final_output and "sunny in Tokyo." in result.final_output
