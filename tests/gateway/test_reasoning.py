"""Reasoning through the openai SDK: every provider format, both client formats, whole
and streamed; its tokens in usage and billing; `max_tokens`, `exclude`, summaries,
capability routing, streams cut in the middle of it, and the models that reason
unasked."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai.types.responses import ResponseReasoningItem, ResponseStreamEvent
from pydantic import BaseModel, TypeAdapter

from emulator.gateway.tokens import count_text
from emulator.gateway.wire.messages import signature
from emulator.testing import Tenant
from tests.helpers import assert_error

# A reasoning model served in each provider wire format.
ROUTES = {
    "chat": ("deepseek/deepseek-r1", "deepseek"),
    "responses": ("openai/o4-mini", "openai"),
    "messages": ("anthropic/claude-sonnet-4", "anthropic"),
}
# deepseek-r1 has no tool use: another chat-format reasoning model for tool calls.
TOOL_ROUTES = {**ROUTES, "chat": ("x-ai/grok-3-mini", "xai")}
QUESTION = "Explain how database indexes speed up queries"


class Seen:
    """What a client got: the answer's text, the reasoning's, the usage, the finish."""

    def __init__(
        self,
        text: str,
        reasoning: str | None,
        usage: Any,
        finish: str,
        output_types: list[str] | None = None,  # a response's output items, by type
    ) -> None:
        self.text, self.reasoning, self.usage, self.finish = text, reasoning, usage, finish
        self.output_types = output_types

    def tokens(self) -> tuple[int, int]:
        """(output tokens, reasoning tokens), in either client format."""
        u = self.usage
        if hasattr(u, "completion_tokens"):
            return u.completion_tokens, u.completion_tokens_details.reasoning_tokens
        return u.output_tokens, u.output_tokens_details.reasoning_tokens


def chat(
    client: openai.OpenAI, fmt: str, stream: bool, routes: dict = ROUTES, **extra: Any
) -> Seen:
    model, provider = routes[fmt]
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": QUESTION}],
        "extra_body": {"provider": {"only": [provider]}, "reasoning": {"effort": "low"}},
    }
    kwargs["extra_body"] |= extra.pop("extra_body", {})
    kwargs |= extra
    if not stream:
        answer = client.chat.completions.create(**kwargs)
        message = answer.choices[0].message
        reasoning = (message.model_extra or {}).get("reasoning")
        # OpenRouter's structured reasoning says the same, where there is reasoning.
        details = (message.model_extra or {}).get("reasoning_details")
        assert details == (None if reasoning is None else [detail(reasoning, fmt, whole=True)])
        return Seen(message.content or "", reasoning, answer.usage, answer.choices[0].finish_reason)
    text, thoughts, usage, finish, signed = "", None, None, "", False
    chunks = list(client.chat.completions.create(stream=True, **kwargs))
    for chunk in chunks:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            piece = (choice.delta.model_extra or {}).get("reasoning")
            details = (choice.delta.model_extra or {}).get("reasoning_details")
            if piece == "":  # a messages provider's thinking ends with its signature alone
                assert fmt == "messages" and thoughts and not signed
                assert details == [detail("", fmt, whole=True, signed=thoughts)]
                signed = True
                continue
            assert details == (None if piece is None else [detail(piece, fmt)])
            if piece is not None:
                assert not text, "reasoning comes before the content"
                thoughts = (thoughts or "") + piece
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    assert signed == (fmt == "messages" and thoughts is not None)
    return Seen(text, thoughts, usage, finish)


def detail(text: str, fmt: str, whole: bool = False, signed: str | None = None) -> dict[str, Any]:
    """One of OpenRouter's `reasoning_details`, in the serving provider's vendor's shape:
    OpenAI's summaries, Anthropic's signed thinking, others' text (a stream's pieces
    have no signature; its last piece of Anthropic's thinking is its signature of
    the whole, `signed`)."""
    if fmt == "responses":
        return {
            "type": "reasoning.summary",
            "summary": text,
            "format": "openai-responses-v1",
            "index": 0,
        }
    by = text if signed is None else signed
    sig = {"signature": signature(by) if fmt == "messages" else None} if whole else {}
    vendor = "anthropic-claude-v1" if fmt == "messages" else "unknown"
    return {"type": "reasoning.text", "text": text, **sig, "format": vendor, "index": 0}


def responses(client: openai.OpenAI, fmt: str, stream: bool, **extra: Any) -> Seen:
    model, provider = ROUTES[fmt]
    kwargs: dict[str, Any] = {
        "model": model,
        "input": QUESTION,
        "reasoning": {"effort": "low", "summary": "auto"},
        "extra_body": {"provider": {"only": [provider]}},
        **extra,
    }
    if not stream:
        response = client.responses.create(**kwargs)
    else:
        with client.responses.stream(**kwargs) as stream_:
            events = list(stream_)
        for event in events:
            TypeAdapter(ResponseStreamEvent).validate_python(event.model_dump(warnings=False))
        # The last event's response: `get_final_response()` knows only response.completed.
        response = events[-1].response  # type: ignore[union-attr]
    item = response.output[0]
    assert isinstance(item, ResponseReasoningItem) and item.id.startswith("rs_")
    reasoning = "".join(part.text for part in item.summary)
    finish = "length" if response.status == "incomplete" else "stop"
    kinds = [item.type for item in response.output]
    return Seen(response.output_text, reasoning, response.usage, finish, kinds)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", list(ROUTES))
@pytest.mark.parametrize("client_format", ["chat", "responses"])
def test_reasoning_from_every_provider_format(
    client: openai.OpenAI, client_format: str, fmt: str, stream: bool
) -> None:
    ask = chat if client_format == "chat" else responses
    seen = ask(client, fmt, stream)
    whole = ask(client, fmt, False) if stream else seen
    assert seen.reasoning and seen.text and seen.finish == "stop"
    words = {"database", "indexes", "speed", "queries"}
    assert any(word in seen.reasoning for word in words), seen.reasoning  # about the prompt
    output, reasoning = seen.tokens()
    # Low effort: about 20 tokens (the tokenizer of the provider's family), never more.
    assert 10 <= reasoning <= 20 and reasoning == count_text(seen.reasoning, fmt)
    assert output == reasoning + count_text(seen.text, fmt)
    assert (seen.text, seen.reasoning, seen.tokens()) == (
        whole.text,
        whole.reasoning,
        whole.tokens(),
    )


def test_the_answer_is_the_same_with_or_without_reasoning(client: openai.OpenAI) -> None:
    body = {"model": "deepseek/deepseek-r1", "messages": [{"role": "user", "content": QUESTION}]}
    plain = client.chat.completions.create(  # type: ignore[call-overload]
        **body, extra_body={"reasoning": {"enabled": False}}
    )
    reasoned = chat(client, "chat", False)
    assert "reasoning" not in (plain.choices[0].message.model_extra or {})
    assert plain.usage.completion_tokens_details.reasoning_tokens == 0  # type: ignore[union-attr]
    assert reasoned.text == plain.choices[0].message.content
    assert reasoned.tokens()[0] == plain.usage.completion_tokens + reasoned.tokens()[1]  # type: ignore[union-attr]


def unasked(client: openai.OpenAI, model: str, stream: bool, **extra: Any) -> Seen:
    """A chat answer from `model` without a word about reasoning (but `extra`)."""
    kwargs = {"model": model, "messages": [{"role": "user", "content": QUESTION}], **extra}
    if not stream:
        answer = client.chat.completions.create(**kwargs)
        message = answer.choices[0].message
        reasoning = (message.model_extra or {}).get("reasoning")
        return Seen(message.content or "", reasoning, answer.usage, answer.choices[0].finish_reason)
    chunks = list(client.chat.completions.create(stream=True, **kwargs))
    pieces = [(c.delta.model_extra or {}).get("reasoning") for k in chunks for c in k.choices]
    text = "".join(c.delta.content or "" for k in chunks for c in k.choices)
    thoughts = "".join(p for p in pieces if p) or None
    return Seen(text, thoughts, chunks[-1].usage, "stop")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize(
    ("model", "shown"),
    [("deepseek/deepseek-r1", True), ("x-ai/grok-3-mini", True), ("openai/o4-mini", False)],
)
def test_a_reasoning_model_reasons_unasked_and_bills_it(
    tenant: Tenant, model: str, shown: bool, stream: bool
) -> None:
    """As upstream: o-series and R1 think whether asked or not, at the default effort;
    R1 and Grok return the thinking, o-series bill it and keep it to themselves."""
    client = openai.OpenAI(api_key=tenant.api_key, base_url=tenant.base_url, max_retries=0)
    with client:
        seen = unasked(client, model, stream)
        off = unasked(client, model, stream, extra_body={"reasoning": {"enabled": False}})
    output, reasoning = seen.tokens()
    assert 45 <= reasoning <= 60  # the default effort, medium
    assert (seen.reasoning is not None) is shown and seen.text == off.text
    assert output == off.tokens()[0] + reasoning and off.tokens()[1] == 0
    with tenant.client() as http:
        event = http.get("/ai-gateway/usage", params={"limit": 2}).json()["data"][1]
    assert event["completion_tokens"] == output  # billed: the event of `seen`


def test_reasoning_unasked_follows_the_model_that_serves(client: openai.OpenAI) -> None:
    """The serving model decides: a fallback to R1 reasons, a model that reasons only
    when asked (Claude) does not."""
    fallen = unasked(client, "emulator/fail-503", False, extra_body={"models": [ROUTES["chat"][0]]})
    assert fallen.reasoning and fallen.tokens()[1] > 0
    claude = unasked(client, "anthropic/claude-sonnet-4", False)
    assert claude.reasoning is None and claude.tokens()[1] == 0


def test_reasoning_unasked_turned_off_or_hidden(client: openai.OpenAI) -> None:
    model = "deepseek/deepseek-r1"
    for off in ({"reasoning": {"effort": "none"}}, {"reasoning_effort": "none"}):
        seen = unasked(client, model, False, extra_body=off)
        assert seen.reasoning is None and seen.tokens()[1] == 0
    hidden = unasked(client, model, False, extra_body={"include_reasoning": False})
    assert hidden.reasoning is None and hidden.tokens()[1] > 0  # still thought, and billed
    kept = client.responses.create(model="openai/o4-mini", input=QUESTION)
    assert isinstance(kept.output[0], ResponseReasoningItem) and kept.output[0].summary == []
    assert kept.usage and kept.usage.output_tokens_details.reasoning_tokens > 0
    none = client.responses.create(
        model="openai/o4-mini", input=QUESTION, reasoning={"effort": "none"}
    )
    assert none.usage and none.usage.output_tokens_details.reasoning_tokens == 0
    assert [item.type for item in none.output] == ["message"]


@pytest.mark.parametrize(
    ("asked", "low", "high"),
    [
        ({"effort": "low"}, 10, 20),
        ({"effort": "medium"}, 45, 60),
        ({"effort": "high"}, 120, 150),
        ({}, 45, 60),  # enabled, the default effort
        ({"max_tokens": 33}, 25, 33),
    ],
)
def test_the_effort_or_budget_sets_the_length(
    client: openai.OpenAI, asked: dict, low: int, high: int
) -> None:
    seen = chat(client, "chat", False, extra_body={"reasoning": asked})
    assert low <= seen.tokens()[1] <= high


def test_openai_s_reasoning_effort_is_reasoning_effort(client: openai.OpenAI) -> None:
    """The SDK's typed `reasoning_effort` asks what `reasoning.effort` asks (OpenRouter
    takes it as that); `none` asks for none; `xhigh` and `max` think longest."""
    model, provider = ROUTES["chat"]
    asked = {"model": model, "messages": [{"role": "user", "content": QUESTION}]}
    only = {"provider": {"only": [provider]}}
    typed = client.chat.completions.create(**asked, reasoning_effort="low", extra_body=only)
    same = chat(client, "chat", False)  # reasoning.effort "low"
    message = typed.choices[0].message
    assert (message.model_extra or {})["reasoning"] == same.reasoning
    assert (message.content, typed.usage.completion_tokens) == (same.text, same.tokens()[0])  # type: ignore[union-attr]
    off = client.chat.completions.create(**asked, reasoning_effort="none", extra_body=only)
    assert "reasoning" not in (off.choices[0].message.model_extra or {})
    lengths = [
        chat(client, "chat", False, extra_body={"reasoning": {"effort": effort}}).tokens()[1]
        for effort in ("high", "xhigh", "max")
    ]
    assert 120 <= lengths[0] <= 150 < lengths[1] <= 300 < lengths[2] <= 600, lengths


def test_include_reasoning_and_disabled_reasoning(client: openai.OpenAI) -> None:
    assert chat(client, "chat", False, extra_body={"include_reasoning": True}).reasoning
    off = chat(client, "chat", False, extra_body={"reasoning": {"enabled": False}})
    assert off.reasoning is None and off.tokens()[1] == 0


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", list(ROUTES))
def test_excluded_reasoning_is_billed_not_returned(
    client: openai.OpenAI, fmt: str, stream: bool
) -> None:
    shown = chat(client, fmt, stream)
    hidden = chat(client, fmt, stream, extra_body={"reasoning": {"effort": "low", "exclude": True}})
    assert hidden.reasoning is None and hidden.text == shown.text
    assert hidden.tokens() == shown.tokens() and hidden.tokens()[1] > 0


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", list(ROUTES))
def test_max_tokens_reached_while_reasoning_ends_with_length_and_no_content(
    client: openai.OpenAI, fmt: str, stream: bool
) -> None:
    cut = chat(client, fmt, stream, max_tokens=5)
    assert cut.finish == "length" and cut.text == "" and cut.tokens() == (5, 5)
    assert cut.reasoning and count_text(cut.reasoning, fmt) == 5
    cut = responses(client, fmt, stream, max_output_tokens=5)
    assert cut.finish == "length" and cut.text == "" and cut.tokens() == (5, 5)
    assert cut.output_types == ["reasoning"]  # no empty message, as OpenAI answers it


class Answer(BaseModel):
    answer: str


@pytest.mark.parametrize("fmt", list(ROUTES))
def test_parsing_an_answer_cut_while_reasoning_gives_none(client: openai.OpenAI, fmt: str) -> None:
    """The SDK's `parse` and parsing stream meet no empty message to parse (pydantic would
    raise a ValidationError, which no `except openai.OpenAIError` catches)."""
    model, provider = ROUTES[fmt]
    kwargs: dict[str, Any] = {
        "model": model,
        "input": QUESTION,
        "max_output_tokens": 5,
        "reasoning": {"effort": "low"},
        "extra_body": {"provider": {"only": [provider]}},
        "text_format": Answer,
    }
    parsed = client.responses.parse(**kwargs)
    assert parsed.status == "incomplete" and parsed.output_parsed is None
    with client.responses.stream(**kwargs) as stream:
        events = list(stream)
    assert events[-1].type == "response.incomplete"
    assert [item.type for item in events[-1].response.output] == ["reasoning"]


def test_the_answer_gets_what_the_reasoning_leaves_of_max_tokens(client: openai.OpenAI) -> None:
    seen = chat(client, "chat", False, max_tokens=25)
    output, reasoning = seen.tokens()
    assert seen.finish == "length" and seen.text and output == 25 and 0 < reasoning < 25


def test_a_responses_reasoning_item_has_no_summary_unless_asked(client: openai.OpenAI) -> None:
    for stream in (False, True):
        seen = responses(client, "responses", stream, reasoning={"effort": "low"})
        assert seen.reasoning == "" and seen.tokens()[1] > 0


def test_a_responses_stream_s_reasoning_events(tenant: Tenant) -> None:
    body = {
        "model": "openai/o4-mini",
        "input": QUESTION,
        "reasoning": {"effort": "low", "summary": "auto"},
        "stream": True,
    }
    with tenant.client() as http:
        text = http.post("/responses", json=body).text
    events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    first = [e["type"].removeprefix("response.") for e in events if e.get("output_index") == 0]
    deltas = first.count("reasoning_summary_text.delta")
    assert deltas > 1 and first == [
        "output_item.added",
        "reasoning_summary_part.added",
        *["reasoning_summary_text.delta"] * deltas,
        "reasoning_summary_text.done",
        "reasoning_summary_part.done",
        "output_item.done",
    ]
    message = [e for e in events if e.get("output_index") == 1]
    assert message[0]["item"]["type"] == "message"
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert done == events[-1]["response"]["output"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_the_usage_event_counts_and_charges_the_reasoning(tenant: Tenant, stream: bool) -> None:
    body = {
        "model": "deepseek/deepseek-r1",
        "messages": [{"role": "user", "content": QUESTION}],
        "reasoning": {"effort": "high"},
        "stream": stream,
    }
    with tenant.client() as http:
        answer = http.post("/chat/completions", json=body)
        if stream:
            chunks = [json.loads(x[6:]) for x in answer.text.split("\n\n") if x[6:7] == "{"]
            usage = chunks[-1]["usage"]
        else:
            usage = answer.json()["usage"]
        event = http.get(f"/ai-gateway/usage/{answer.headers['x-generation-id']}").json()
        held = http.get("/ai-gateway/reservations", params={"limit": 1}).json()["data"][0]
    assert usage["completion_tokens_details"]["reasoning_tokens"] > 100
    assert event["completion_tokens"] == usage["completion_tokens"]
    assert event["reasoning_tokens"] == usage["completion_tokens_details"]["reasoning_tokens"]
    assert event["finish_reason"] == "stop"
    assert event["charge_micros"] == usage["charge_micros"] > 0
    assert held["charge_micros"] == event["charge_micros"] <= held["amount_micros"]
    with tenant.client() as http:  # OpenRouter's stats say the same
        stats = http.get("/generation", params={"id": event["id"]}).json()["data"]
    assert (stats["native_tokens_reasoning"], stats["finish_reason"]) == (
        event["reasoning_tokens"],
        "stop",
    )


def test_a_stream_cut_inside_the_reasoning_bills_what_of_it_was_sent(tenant: Tenant) -> None:
    body = {
        "model": "deepseek/deepseek-r1",
        "messages": [{"role": "user", "content": QUESTION}],
        "reasoning": {"effort": "medium"},
        "stream": True,
    }
    with tenant.client(headers={"X-Emulator-Fault": "cut=4"}) as http:
        text = http.post("/chat/completions", json=body).text
    chunks = [json.loads(x[6:]) for x in text.split("\n\n") if x[6:7] == "{"]
    sent = "".join(c["choices"][0]["delta"].get("reasoning", "") for c in chunks[:-1])
    assert chunks[-1]["choices"][0]["finish_reason"] == "error" and sent
    with tenant.client() as http:
        event = http.get("/ai-gateway/usage", params={"limit": 1}).json()["data"][0]
    assert event["completion_tokens"] == count_text(sent, "chat") > 0
    assert event["reasoning_tokens"] == event["completion_tokens"]  # all of it reasoning
    assert event["finish_reason"] == "error" and event["metadata"]["stream_end"] == "cut"


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "reasoning": {}},
         "reasoning"),
        ("/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                               "include_reasoning": True}, "include_reasoning"),
        ("/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                               "reasoning_effort": "low"}, "reasoning_effort"),
        ("/responses", {"input": "hi", "reasoning": {"effort": "low"}}, "reasoning"),
    ],
)  # fmt: skip
def test_a_model_that_cannot_reason_ignores_reasoning_unless_parameters_are_required(
    tenant: Tenant, path: str, body: dict, param: str
) -> None:
    with tenant.client() as http:
        # OpenRouter's default: a provider gets only the parameters it takes.
        ignored = http.post(path, json={"model": "openai/gpt-4o", **body})
        plain = {k: v for k, v in body.items() if k != param}
        same = http.post(path, json={"model": "openai/gpt-4o", **plain})
        assert ignored.status_code == same.status_code == 200, ignored.text
        assert _text(ignored.json()) == _text(same.json())
        assert ignored.json()["usage"] == same.json()["usage"]  # no reasoning billed
        strict = {"model": "openai/gpt-4o", "provider": {"require_parameters": True}, **body}
        error = assert_error(http.post(path, json=strict), 503, "no_route_available")
        # It names the field the client sent, and the capability to look for.
        assert error["param"] == param and '"reasoning"' in error["message"]
        served = http.post(path, json={**strict, "models": ["openai/o4-mini"]})
        assert served.status_code == 200 and served.json()["model"] == "openai/o4-mini"


def _text(answer: dict) -> str:
    if answer["object"] == "response":
        return answer["output_text"]
    return answer["choices"][0]["message"]["content"]


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                               "reasoning": {"effort": "extreme"}}, "reasoning.effort"),
        ("/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                               "reasoning_effort": "extreme"}, "reasoning_effort"),
        ("/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                               "reasoning_effort": "low", "reasoning": {"effort": "high"}},
         "reasoning_effort"),
        ("/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                               "reasoning": {"max_tokens": 0}}, "reasoning.max_tokens"),
        ("/responses", {"input": "hi", "reasoning": {"summary": "long"}}, "reasoning.summary"),
        ("/responses", {"input": "hi", "include": "reasoning.encrypted_content"}, "include"),
    ],
)  # fmt: skip
def test_malformed_reasoning_is_400(tenant: Tenant, path: str, body: dict, param: str) -> None:
    with tenant.client() as http:
        refused = http.post(path, json={"model": "openai/o4-mini", **body})
    assert assert_error(refused, 400, "invalid_request")["param"] == param


@pytest.mark.parametrize("fmt", list(ROUTES))
def test_reasoning_then_a_tool_call_whole_and_streamed(client: openai.OpenAI, fmt: str) -> None:
    tool = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}
    seen = [
        chat(client, fmt, stream, TOOL_ROUTES, tools=[tool], tool_choice="required")
        for stream in (False, True)
    ]
    for one in seen:
        assert one.reasoning and one.finish == "tool_calls" and one.tokens()[1] > 0
    assert seen[0].reasoning == seen[1].reasoning and seen[0].tokens() == seen[1].tokens()


def test_a_stop_sequence_cut_by_the_gateway_keeps_the_reasoning(client: openai.OpenAI) -> None:
    """A responses-format provider takes no `stop`: the gateway cuts the answer, not the
    reasoning before it, and bills both."""
    seen = [chat(client, "responses", stream, stop=["."]) for stream in (False, True)]
    for one in seen:
        output, reasoning = one.tokens()
        assert one.finish == "stop" and "." not in one.text and one.reasoning
        assert output == reasoning + count_text(one.text, "responses")
    assert seen[0].tokens() == seen[1].tokens()


def test_a_reasoning_item_sent_back_as_input_is_accepted(client: openai.OpenAI) -> None:
    """The usual loop sends the whole output back with the tool's result."""
    tool = {"type": "function", "name": "search", "parameters": {"type": "object"}}
    kwargs: dict[str, Any] = {
        "model": "openai/o4-mini",
        "tools": [tool],
        "reasoning": {"effort": "low", "summary": "auto"},
    }
    first = client.responses.create(input=QUESTION, **kwargs)
    call = first.output[1]
    assert first.output[0].type == "reasoning" and call.type == "function_call"
    sent_back = [item.model_dump(exclude_none=True) for item in first.output]
    result = {"type": "function_call_output", "call_id": call.call_id, "output": "[]"}
    second = client.responses.create(
        input=[{"role": "user", "content": QUESTION}, *sent_back, result], **kwargs
    )
    assert second.status == "completed" and "search" in second.output_text


def test_a_reasoning_item_of_an_unstored_response_is_not_found(client: openai.OpenAI) -> None:
    """With `store: false` the reasoning item sent back by its id has nothing to name
    (OpenAI's 404): a stateless loop needs its `encrypted_content`, and has it."""
    tool = {"type": "function", "name": "search", "parameters": {"type": "object"}}
    kwargs: dict[str, Any] = {
        "model": "openai/o4-mini",
        "tools": [tool],
        "reasoning": {"effort": "low"},
        "store": False,
    }
    question = {"role": "user", "content": QUESTION}

    def second_turn(first: Any) -> Any:
        call = first.output[1]
        result = {"type": "function_call_output", "call_id": call.call_id, "output": "[]"}
        sent_back = [item.model_dump(exclude_none=True) for item in first.output]
        return client.responses.create(input=[question, *sent_back, result], **kwargs)

    with pytest.raises(openai.NotFoundError) as missing:
        second_turn(client.responses.create(input=QUESTION, **kwargs))
    error = missing.value.body
    assert isinstance(error, dict) and error["code"] == "item_not_found"
    assert error["param"] == "input[1].id"
    assert "Items are not persisted when `store` is set to false" in error["message"]
    sealed = client.responses.create(
        input=QUESTION, include=["reasoning.encrypted_content"], **kwargs
    )
    assert second_turn(sealed).status == "completed"


def test_encrypted_reasoning_round_trip(client: openai.OpenAI) -> None:
    """`include: ["reasoning.encrypted_content"]` (what a client that keeps no state
    asks for) adds an opaque blob to the reasoning item, whole and streamed, with or
    without a summary; sent back as it came it is accepted, mangled it is a 400."""
    tool = {"type": "function", "name": "search", "parameters": {"type": "object"}}
    kwargs: dict[str, Any] = {
        "model": "openai/o4-mini",
        "tools": [tool],
        "reasoning": {"effort": "low"},
        "include": ["reasoning.encrypted_content"],
    }
    first = client.responses.create(input=QUESTION, **kwargs)
    item = first.output[0]
    assert isinstance(item, ResponseReasoningItem) and item.summary == []
    assert item.encrypted_content and QUESTION not in item.encrypted_content
    with client.responses.stream(input=QUESTION, **kwargs) as stream:
        events = list(stream)
    done = [e.item for e in events if e.type == "response.output_item.done"]
    final = events[-1].response.output[0]  # type: ignore[union-attr]
    assert done[0].encrypted_content == final.encrypted_content == item.encrypted_content  # type: ignore[union-attr]
    summarised = client.responses.create(
        input=QUESTION, **{**kwargs, "reasoning": {"effort": "low", "summary": "auto"}}
    )
    assert summarised.output[0].encrypted_content == item.encrypted_content  # type: ignore[union-attr]
    plain = client.responses.create(input=QUESTION, **{**kwargs, "include": []})
    assert plain.output[0].encrypted_content is None  # type: ignore[union-attr]

    call = first.output[1]
    assert call.type == "function_call"
    result = {"type": "function_call_output", "call_id": call.call_id, "output": "[]"}
    sent_back = [item.model_dump(exclude_none=True) for item in first.output]
    question = {"role": "user", "content": QUESTION}
    second = client.responses.create(input=[question, *sent_back, result], **kwargs)
    assert second.status == "completed"
    sent_back[0]["encrypted_content"] = "not-what-was-given"
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(input=[question, *sent_back, result], **kwargs)
    error = refused.value.body
    assert isinstance(error, dict) and error["code"] == "invalid_encrypted_content"
    assert error["param"] == "input[1].encrypted_content"


@pytest.mark.parametrize("fmt", ROUTES)
def test_a_budget_far_above_the_output_limit_is_cut_by_it(tenant: Tenant, fmt: str) -> None:
    """A budget of 10**12 tokens reasons up to the route's output limit (what caps
    `max_tokens`) and stops: it froze the server, reasoning until the budget."""
    model = ROUTES[fmt][0]
    with openai.OpenAI(
        base_url=f"{tenant.base_url}", api_key=tenant.api_key, max_retries=0, timeout=30
    ) as client:
        answer = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": QUESTION}],
            max_tokens=500,
            extra_body={"reasoning": {"max_tokens": 10**12}},
        )
    usage = answer.usage
    assert usage is not None and usage.completion_tokens_details is not None
    assert answer.choices[0].finish_reason == "length"
    assert usage.completion_tokens == usage.completion_tokens_details.reasoning_tokens == 500
