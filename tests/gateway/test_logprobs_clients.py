"""Log probabilities through the official clients: chat (`logprobs`, `top_logprobs`) and
responses (`include: ["message.output_text.logprobs"]`), whole and streamed, over each
provider format; the messages format has none to give."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionTokenLogprob

from emulator.gateway.tokens import count_text
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

# A model served in each provider wire format, pinned to that provider.
ROUTES = {
    "chat": ("meta-llama/llama-3.3-70b-instruct", "together"),
    "responses": ("openai/gpt-4o", "openai"),
    "messages": ("anthropic/claude-sonnet-4", "anthropic"),
}
QUESTION = "How do rivers shape the valleys around them?"
INCLUDE = ["message.output_text.logprobs"]


def _ask(fmt: str, **extra: Any) -> dict[str, Any]:
    model, provider = ROUTES[fmt]
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": QUESTION}],
        "extra_body": {"provider": {"only": [provider]}},
    }
    return body | extra


def _check(entries: list[ChatCompletionTokenLogprob], text: str, top: int) -> None:
    assert "".join(e.token for e in entries) == text
    for entry in entries:
        assert entry.bytes == list(entry.token.encode())
        assert entry.logprob <= 0
        assert len(entry.top_logprobs) == top
        if top:
            assert entry.top_logprobs[0].token == entry.token


@pytest.mark.parametrize("fmt", ["chat", "responses"])
def test_a_chat_answer_lists_a_logprob_for_each_token(client: openai.OpenAI, fmt: str) -> None:
    answer = client.chat.completions.create(logprobs=True, top_logprobs=3, **_ask(fmt))
    choice = answer.choices[0]
    text = choice.message.content or ""
    assert choice.logprobs is not None and choice.logprobs.content is not None
    _check(choice.logprobs.content, text, 3)
    assert answer.usage is not None
    assert len(choice.logprobs.content) == answer.usage.completion_tokens
    assert answer.usage.completion_tokens == count_text(text, fmt)  # the provider's tokens
    plain = client.chat.completions.create(**_ask(fmt))
    assert plain.choices[0].message.content == text  # asking does not change the answer
    assert plain.choices[0].logprobs is None
    again = client.chat.completions.create(logprobs=True, top_logprobs=3, **_ask(fmt))
    assert again.choices[0].logprobs == choice.logprobs  # the same numbers, every time


def test_a_messages_format_provider_gives_none(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(logprobs=True, top_logprobs=2, **_ask("messages"))
    assert answer.choices[0].message.content
    assert answer.choices[0].logprobs is None


@pytest.mark.parametrize("fmt", ["chat", "responses", "messages"])
def test_a_streamed_chunk_carries_the_logprobs_of_its_content(
    client: openai.OpenAI, fmt: str
) -> None:
    whole = client.chat.completions.create(logprobs=True, top_logprobs=1, **_ask(fmt))
    streamed: list[ChatCompletionTokenLogprob] = []
    text = ""
    for chunk in client.chat.completions.create(
        logprobs=True, top_logprobs=1, stream=True, **_ask(fmt)
    ):
        for choice in chunk.choices:
            piece = choice.delta.content or ""
            text += piece
            if choice.logprobs is not None:
                assert piece and choice.logprobs.content is not None
                assert "".join(e.token for e in choice.logprobs.content) == piece
                streamed += choice.logprobs.content
    assert text == whole.choices[0].message.content
    if fmt == "messages":
        assert streamed == [] and whole.choices[0].logprobs is None
        return
    assert whole.choices[0].logprobs is not None
    assert streamed == whole.choices[0].logprobs.content


@pytest.mark.parametrize("fmt", ["chat", "responses"])
def test_a_cut_answer_lists_what_is_kept(client: openai.OpenAI, fmt: str) -> None:
    answer = client.chat.completions.create(logprobs=True, max_tokens=5, **_ask(fmt))
    choice = answer.choices[0]
    assert choice.finish_reason == "length"
    assert choice.logprobs is not None and choice.logprobs.content is not None
    assert answer.usage is not None and len(choice.logprobs.content) == 5
    _check(choice.logprobs.content, choice.message.content or "", 0)
    # A stop sequence: a responses-format provider has none, the gateway cuts there.
    stopped = client.chat.completions.create(logprobs=True, stop=["t"], **_ask(fmt))
    content = stopped.choices[0].message.content or ""
    assert "t" not in content and stopped.choices[0].finish_reason == "stop"
    assert stopped.choices[0].logprobs is not None
    _check(stopped.choices[0].logprobs.content or [], content, 0)
    for chunk in client.chat.completions.create(
        logprobs=True, stop=["t"], stream=True, **_ask(fmt)
    ):
        for piece in chunk.choices:
            if piece.delta.content:
                assert piece.logprobs is not None
                _check(piece.logprobs.content or [], piece.delta.content, 0)


def test_each_of_n_answers_has_its_own(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(logprobs=True, top_logprobs=2, n=2, **_ask("chat"))
    lists = []
    for choice in answer.choices:
        assert choice.logprobs is not None and choice.logprobs.content is not None
        _check(choice.logprobs.content, choice.message.content or "", 2)
        lists.append(choice.logprobs.content)
    assert lists[0] != lists[1]


def test_tool_calls_and_reasoning_have_no_logprobs_of_their_own(client: openai.OpenAI) -> None:
    tool = {
        "type": "function",
        "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}},
    }
    called = client.chat.completions.create(
        logprobs=True,
        tools=[tool],
        tool_choice="required",
        **_ask("chat"),  # type: ignore[list-item]
    )
    assert called.choices[0].message.tool_calls
    assert called.choices[0].logprobs is not None
    assert called.choices[0].logprobs.content == []
    reasoned = client.chat.completions.create(
        model="x-ai/grok-3-mini",
        messages=[{"role": "user", "content": QUESTION}],
        logprobs=True,
        extra_body={"reasoning": {"effort": "low"}},
    )
    choice = reasoned.choices[0]
    assert (choice.message.model_extra or {}).get("reasoning")
    assert choice.logprobs is not None
    _check(choice.logprobs.content or [], choice.message.content or "", 0)  # the answer's only


@pytest.mark.parametrize("fmt", ["chat", "responses"])
def test_a_response_carries_them_when_include_asks(client: openai.OpenAI, fmt: str) -> None:
    model, provider = ROUTES[fmt]
    asked: dict[str, Any] = {
        "model": model,
        "input": QUESTION,
        "extra_body": {"provider": {"only": [provider]}},
    }
    response = client.responses.create(include=INCLUDE, top_logprobs=2, **asked)  # type: ignore[arg-type]
    part = response.output[0].content[0]  # type: ignore[union-attr]
    assert part.type == "output_text" and part.logprobs is not None
    _check(part.logprobs, part.text, 2)  # type: ignore[arg-type]
    assert response.usage is not None and len(part.logprobs) == response.usage.output_tokens
    assert response.top_logprobs == 2
    plain = client.responses.create(**asked)
    assert plain.output_text == response.output_text
    assert plain.output[0].content[0].logprobs == []  # type: ignore[union-attr]
    deltas, done = [], None
    for event in client.responses.create(include=INCLUDE, top_logprobs=2, stream=True, **asked):  # type: ignore[arg-type]
        if event.type == "response.output_text.delta":
            assert "".join(e.token for e in event.logprobs) == event.delta
            deltas += event.logprobs
        elif event.type == "response.output_text.done":
            assert [e.model_dump() for e in event.logprobs] == [e.model_dump() for e in deltas]
        elif event.type == "response.completed":
            done = event.response
    assert done is not None
    assert done.output[0].content[0].logprobs == part.logprobs  # type: ignore[union-attr]
    assert [(e.token, e.logprob) for e in deltas] == [(e.token, e.logprob) for e in part.logprobs]


def test_bad_logprob_fields_are_refused(tenant: Tenant, emulator: EmulatorHandle) -> None:
    auth = {"Authorization": f"Bearer {tenant.api_key}"}
    chat = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "Hi"}]}
    with httpx.Client(base_url=emulator.base_url, headers=auth) as http:
        alone = http.post("/chat/completions", json={**chat, "top_logprobs": 2})
        assert assert_error(alone, 400, "invalid_request")["param"] == "top_logprobs"
        too_many = http.post(
            "/chat/completions", json={**chat, "logprobs": True, "top_logprobs": 21}
        )
        assert assert_error(too_many, 400, "invalid_request")["param"] == "top_logprobs"
        wrong = http.post("/chat/completions", json={**chat, "logprobs": "yes"})
        assert assert_error(wrong, 400, "invalid_request")["param"] == "logprobs"
        negative = http.post(
            "/responses", json={"model": "openai/gpt-4o", "input": "Hi", "top_logprobs": -1}
        )
        assert assert_error(negative, 400, "invalid_request")["param"] == "top_logprobs"


def test_the_catalog_names_the_models_that_give_them(client: openai.OpenAI) -> None:
    models = {m.id: m.model_extra or {} for m in client.models.list()}
    assert "logprobs" in models["openai/gpt-4o"]["supported_parameters"]
    assert "top_logprobs" in models["meta-llama/llama-3.3-70b-instruct"]["supported_parameters"]
    # Only messages-format providers serve it (a model lists what any of its routes takes).
    assert "logprobs" not in models["anthropic/claude-3.5-haiku"]["supported_parameters"]
    assert "logprobs" in models["anthropic/claude-sonnet-4"]["supported_parameters"]
