"""The openrouter Python SDK and langchain-openai, unmodified but for base URL and key."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openrouter import OpenRouter
from openrouter.components import (
    OpenResponsesResult,
    ReasoningDetailText,
    StreamEventsResponseCompleted,
)
from openrouter.components.streamevents import UnknownStreamEvents
from openrouter.errors import ResponseValidationError
from pydantic import BaseModel

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import bearer


def test_openrouter_sdk_chat(router: OpenRouter, tenant: Tenant) -> None:
    result = router.chat.send(
        model="emulator/echo", messages=[{"role": "user", "content": "via openrouter"}]
    )
    assert result.choices[0].message.content == "via openrouter"
    assert result.usage.total_tokens > 0
    with tenant.client() as http:
        event = http.get(f"/ai-gateway/usage/{result.id}").json()
    assert event["metadata"]["x_title"] == "SDK test"
    # The SDK's typed usage accounting.
    assert result.usage.is_byok is False
    upstream = result.usage.cost_details.upstream_inference_cost  # type: ignore[union-attr]
    assert upstream == event["provider_cost_micros"] / 1_000_000


def test_openrouter_sdk_stream_and_fallback(router: OpenRouter) -> None:
    stream = router.chat.send(
        model="emulator/fail-503",
        models=["emulator/echo"],
        messages=[{"role": "user", "content": "streamed via openrouter"}],
        stream=True,
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text == "streamed via openrouter"


def test_openrouter_sdk_generation_stats(router: OpenRouter, tenant: Tenant) -> None:
    """`generations.get_generation` (OpenRouter's `GET /generation?id=`) reads the request's
    usage event: its tokens, its provider, and what it cost in USD."""
    result = router.chat.send(
        model="openai/gpt-4o-mini",
        models=["emulator/echo"],
        messages=[{"role": "user", "content": "what does this cost"}],
        http_referer="https://app.test",
    )
    stats = router.generations.get_generation(id=result.id).data
    with tenant.client() as http:
        event = http.get(f"/ai-gateway/usage/{result.id}").json()
    assert stats.id == result.id and stats.model == "openai/gpt-4o-mini"
    assert (stats.tokens_prompt, stats.tokens_completion) == (
        result.usage.prompt_tokens,
        result.usage.completion_tokens,
    )
    assert stats.total_cost == stats.usage == event["charge_micros"] / 1_000_000 > 0
    assert stats.upstream_inference_cost == event["provider_cost_micros"] / 1_000_000
    assert stats.provider_name == "OpenAI (emulated)" and stats.streamed is False
    assert [r.status for r in stats.provider_responses] == [200]
    assert stats.origin == stats.http_referer == "https://app.test"


# The SDK warns of the deprecated fields OpenRouter still sends (`rate_limit`).
@pytest.mark.filterwarnings("ignore:.*DEPRECATED:DeprecationWarning")
def test_openrouter_sdk_current_key_and_credits(emulator: EmulatorHandle, tenant: Tenant) -> None:
    """`api_keys.get_current_key_metadata` (`GET /key`) shows the key's spend against its
    daily limit, which the next UTC day frees; `credits.get_credits` (`GET /credits`)
    what the account was given and used: the difference is its balance."""
    body = {"name": "app", "spend_limit_micros": 50_000, "spend_reset_interval": "daily"}
    with httpx.Client(base_url=tenant.base_url, headers=bearer(tenant.user_token)) as keys:
        secret = keys.post("/keys", json=body).json()["key"]
    emulator.top_up(tenant.account_id, 1_000_000)
    with OpenRouter(api_key=secret, server_url=emulator.base_url) as router:
        answer = router.chat.send(
            model="openai/gpt-4o-mini", messages=[{"role": "user", "content": "spend a little"}]
        )
        charge = answer.usage.cost  # OpenRouter's usage: what it cost, in USD
        key = router.api_keys.get_current_key_metadata().data
        assert key.label == "app" and key.limit == 0.05 and key.limit_reset == "daily"
        assert key.usage == key.usage_daily == key.usage_monthly == charge > 0
        assert key.limit_remaining == pytest.approx(0.05 - charge)
        (budget,) = key.budgets
        assert (budget.scope, budget.spend_usd, budget.reset_interval) == (
            "key_limit",
            charge,
            "daily",
        )
        emulator.advance(86_400)
        next_day = router.api_keys.get_current_key_metadata().data
        assert (
            next_day.usage_daily == 0
            and next_day.usage == charge
            and next_day.limit_remaining == 0.05
        )
        credits = router.credits.get_credits().data
    with tenant.client() as http:
        balance = http.get("/ai-gateway/balance").json()["balance_micros"]
    assert credits.total_credits == (tenant.balance_micros + 1_000_000) / 1_000_000
    assert credits.total_credits - credits.total_usage == pytest.approx(balance / 1_000_000)
    assert credits.total_usage == charge


def test_openrouter_sdk_lists_models(router: OpenRouter) -> None:
    models = router.models.list()
    assert "openai/gpt-4o" in [m.id for m in models.result.data]
    video = next(m for m in models.result.data if m.id == "vidprov/v1.6")  # parsed too
    assert video.architecture.output_modalities == ["video"] and video.context_length is None
    assert models.result.total_count == len(models.result.data)


@pytest.fixture
def llm(emulator: EmulatorHandle, tenant: Tenant) -> ChatOpenAI:
    return ChatOpenAI(
        model="openai/gpt-4o", base_url=emulator.base_url, api_key=tenant.api_key, max_retries=0
    )


def test_openrouter_sdk_responses_whole_and_streamed(router: OpenRouter) -> None:
    """The SDK's responses objects require fields OpenAI's do not (`completed_at`,
    `frequency_penalty`, `presence_penalty`): each event is typed, none unknown."""
    whole = router.beta.responses.send(model="openai/gpt-4o", input="Explain vector clocks")
    assert isinstance(whole, OpenResponsesResult)
    assert whole.status == "completed" and whole.completed_at == whole.created_at
    # The responses schema names the cost's parts `input` and `output` (chat's: `prompt`
    # and `completions`); the SDK requires them.
    details = whole.usage.cost_details  # type: ignore[union-attr]
    assert details.upstream_inference_input_cost > 0  # type: ignore[union-attr]
    assert details.upstream_inference_output_cost > 0  # type: ignore[union-attr]
    events = list(
        router.beta.responses.send(
            model="openai/gpt-4o", input="Explain vector clocks", stream=True
        )
    )
    assert not [e for e in events if isinstance(e, UnknownStreamEvents)]
    assert [e.type for e in events][:2] == ["response.created", "response.in_progress"]
    final = events[-1]
    assert isinstance(final, StreamEventsResponseCompleted)
    texts = [
        [part.text for part in item.content] for item in (final.response.output[0], whole.output[0])
    ]  # type: ignore[union-attr]
    assert texts[0] == texts[1]


def test_openrouter_sdk_errors_carry_the_status_on_the_raw_response(
    demo: EmulatorHandle,
) -> None:
    """The SDK expects OpenRouter's numeric `error.code`; the service's is a string (the
    chat-completions envelope), so the SDK's own validation error is raised, as against
    the real service (docs/fidelity.md, Errors)."""
    with (
        OpenRouter(api_key="sk-emu-broke", server_url=demo.base_url) as broke,
        pytest.raises(ResponseValidationError) as raised,
    ):
        broke.chat.send(model="openai/gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.raw_response.status_code == 402
    assert raised.value.raw_response.json()["error"]["code"] == "insufficient_credits"


def test_langchain_invoke_and_stream(llm: ChatOpenAI) -> None:
    answer = llm.invoke([HumanMessage("Explain vector clocks")])
    assert isinstance(answer.content, str) and answer.content
    assert answer.usage_metadata["total_tokens"] > 0
    streamed = "".join(chunk.content for chunk in llm.stream("Explain vector clocks"))
    assert streamed == answer.content


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def test_langchain_tool_binding(llm: ChatOpenAI) -> None:
    message = llm.bind_tools([multiply]).invoke("What is 6 times 7?")
    call = message.tool_calls[0]
    assert call["name"] == "multiply" and isinstance(call["args"]["a"], int)


class Answer(BaseModel):
    topic: str
    points: list[str]


def test_langchain_with_structured_output(llm: ChatOpenAI) -> None:
    answer = llm.with_structured_output(Answer).invoke("Summarise TCP congestion control")
    assert isinstance(answer, Answer) and answer.points
    by_tool = llm.with_structured_output(Answer, method="function_calling").invoke("About TCP")
    assert isinstance(by_tool, Answer) and by_tool.points
    loose = llm.with_structured_output(None, method="json_mode").invoke("Return JSON about TCP")
    assert isinstance(loose, dict)


def test_openrouter_sdk_reasoning_details_round_trip(router: OpenRouter) -> None:
    """The SDK parses `reasoning_details`; sent back on the assistant message (as the
    AI SDK and OpenRouter's docs do in a tool loop) they are accepted."""
    question = {"role": "user", "content": "Explain database indexes"}
    first = router.chat.send(
        model="deepseek/deepseek-r1", messages=[question], reasoning={"effort": "low"}
    )
    message = first.choices[0].message
    (detail,) = message.reasoning_details or []
    assert isinstance(detail, ReasoningDetailText) and detail.format_ == "unknown"
    assert detail.text == message.reasoning and message.reasoning
    assert first.usage.completion_tokens_details.reasoning_tokens > 0
    thoughts = "".join(
        d.text or ""
        for chunk in router.chat.send(
            model="deepseek/deepseek-r1",
            messages=[question],
            reasoning={"effort": "low"},
            stream=True,
        )
        for choice in chunk.choices
        for d in choice.delta.reasoning_details or []
    )
    assert thoughts == message.reasoning
    sent_back = {
        "role": "assistant",
        "content": message.content,
        "reasoning": message.reasoning,
        "reasoning_details": [detail.model_dump(by_alias=True)],
    }
    second = router.chat.send(
        model="deepseek/deepseek-r1",
        messages=[question, sent_back, {"role": "user", "content": "And B-trees?"}],
    )
    assert second.choices[0].message.content


def test_langchain_reasoning_effort(emulator: EmulatorHandle, tenant: Tenant) -> None:
    llm = ChatOpenAI(
        model="deepseek/deepseek-r1",
        base_url=emulator.base_url,
        api_key=tenant.api_key,
        reasoning_effort="low",
        max_retries=0,
    )
    answer = llm.invoke("Explain database indexes")
    assert answer.content and answer.usage_metadata["output_token_details"]["reasoning"] > 0


def test_langchain_over_the_responses_api(emulator: EmulatorHandle, tenant: Tenant) -> None:
    """`use_responses_api=True`: reasoning summaries as content blocks, streamed the
    same, a tool loop that sends the reasoning back, structured output."""
    llm = ChatOpenAI(
        model="openai/o4-mini",
        base_url=emulator.base_url,
        api_key=tenant.api_key,
        use_responses_api=True,
        reasoning={"effort": "low", "summary": "auto"},
        max_retries=0,
    )
    answer = llm.invoke("Explain vector clocks")
    kinds = [block["type"] for block in answer.content]  # type: ignore[index]
    assert kinds == ["reasoning", "text"] and answer.text
    assert answer.usage_metadata["output_token_details"]["reasoning"] > 0
    streamed = list(llm.stream("Explain vector clocks"))
    whole = streamed[0]
    for chunk in streamed[1:]:
        whole += chunk
    assert whole.text == answer.text and whole.usage_metadata == answer.usage_metadata
    tools = llm.bind_tools([multiply])
    asked = [HumanMessage("What is 6 times 7?")]
    call = tools.invoke(asked)
    assert call.tool_calls[0]["name"] == "multiply"
    result = ToolMessage(content="42", tool_call_id=call.tool_calls[0]["id"])
    assert tools.invoke([*asked, call, result]).text
    summary = llm.with_structured_output(Answer).invoke("Summarise TCP congestion control")
    assert isinstance(summary, Answer) and summary.points


def test_langchain_continues_by_previous_response_id(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """`use_previous_response_id=True` sends only the messages after the last answer,
    naming it: the emulator reads the earlier turns, so the tool loop counts the same
    input tokens as when the whole conversation is sent."""

    def tool_loop(**options: Any) -> tuple[str, int]:
        llm = ChatOpenAI(
            model="openai/gpt-4o",
            base_url=emulator.base_url,
            api_key=tenant.api_key,
            use_responses_api=True,
            max_retries=0,
            **options,
        ).bind_tools([multiply])
        asked = [HumanMessage("What is 6 times 7?")]
        call = llm.invoke(asked)
        done = llm.invoke([*asked, call, ToolMessage("42", tool_call_id=call.tool_calls[0]["id"])])
        return done.text, done.usage_metadata["input_tokens"]  # type: ignore[index]

    assert tool_loop(use_previous_response_id=True) == tool_loop()


def test_langchain_logprobs_whole_and_streamed(emulator: EmulatorHandle, tenant: Tenant) -> None:
    llm = ChatOpenAI(
        model="openai/gpt-4o",
        base_url=emulator.base_url,
        api_key=tenant.api_key,
        logprobs=True,
        top_logprobs=2,
        max_retries=0,
    )
    answer = llm.invoke("Explain vector clocks")
    entries = answer.response_metadata["logprobs"]["content"]
    assert "".join(entry["token"] for entry in entries) == answer.content
    assert all(len(entry["top_logprobs"]) == 2 for entry in entries)
    chunks = list(llm.stream("Explain vector clocks"))
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole += chunk
    assert whole.response_metadata["logprobs"]["content"] == entries


def test_openrouter_sdk_routing_preferences_and_logprobs(
    router: OpenRouter, tenant: Tenant
) -> None:
    """The SDK's typed provider preferences (`max_price` as strings, as it types them)
    and log probabilities."""
    result = router.chat.send(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": "Explain vector clocks"}],
        provider={"order": ["azure"], "zdr": False, "max_price": {"completion": "0.62"}},
        logprobs=True,
        top_logprobs=2,
    )
    with tenant.client() as http:
        event = http.get(f"/ai-gateway/usage/{result.id}").json()
    assert event["provider"] == "openai"  # azure is above the price
    entries = result.choices[0].logprobs.content
    assert "".join(entry.token for entry in entries) == result.choices[0].message.content
    assert all(len(entry.top_logprobs) == 2 for entry in entries)


def test_openrouter_sdk_models_alone_and_a_sort_config(router: OpenRouter) -> None:
    """The SDK's optional `model` with `models`, and its typed `ProviderSortConfig`."""
    # gpt-4o first; partition "none" sorts both models' routes by price, so the cheaper
    # llama serves (by model, gpt-4o would).
    result = router.chat.send(
        models=["openai/gpt-4o", "meta-llama/llama-3.3-70b-instruct"],
        messages=[{"role": "user", "content": "Explain vector clocks"}],
        provider={"sort": {"by": "price", "partition": "none"}},
    )
    assert result.model == "meta-llama/llama-3.3-70b-instruct"
