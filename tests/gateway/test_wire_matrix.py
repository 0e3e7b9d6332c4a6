"""Translation on its own: every wire format round-trips the canonical types, whole and streamed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import pytest

from emulator.gateway.canonical import (
    Completion,
    Delta,
    Finish,
    ForcedTool,
    Message,
    Reasoning,
    ReasoningDelta,
    Request,
    TextDelta,
    Tool,
    ToolArgumentsDelta,
    ToolCall,
    ToolCallStart,
)
from emulator.gateway.providers import EVENTS, WIRE
from emulator.gateway.tokens import count_text
from emulator.gateway.wire import chat, chat_chunks
from tests.helpers import RESPONSES_STREAM_EVENTS


@dataclass
class Collected:
    """Deltas gathered back into a completion (what a client saw of a stream)."""

    text: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    calls: list[list[str]] = field(default_factory=list)  # [id, name, arguments]
    finish: Finish | None = None

    def add(self, delta: Delta) -> None:
        if isinstance(delta, TextDelta):
            self.text.append(delta.text)
        elif isinstance(delta, ReasoningDelta):
            self.thoughts.append(delta.text)
        elif isinstance(delta, ToolCallStart):
            self.calls.append([delta.id, delta.name, ""])
        elif isinstance(delta, ToolArgumentsDelta):
            self.calls[delta.index][2] += delta.fragment
        else:
            self.finish = delta

    def completion(self) -> Completion:
        finish = self.finish or Finish("stop", 0, 0)
        return Completion(
            text="".join(self.text) if self.text or not self.calls else None,
            tool_calls=tuple(ToolCall(i, n, a) for i, n, a in self.calls),
            finish_reason=finish.reason,
            input_tokens=finish.input_tokens,
            output_tokens=finish.output_tokens,
            reasoning="".join(self.thoughts) if self.thoughts else None,
            reasoning_tokens=finish.reasoning_tokens,
        )


FORMATS = ["chat", "responses", "messages"]
WEATHER = Tool(
    "get_weather",
    "Weather of a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CONVERSATION = (
    Message("system", "Be brief."),
    # Its images as sent, three ways: each format hands each on as it came.
    Message(
        "user",
        "What is the weather in Oslo?",
        images=3,
        pictures=("data:image/png;base64,iVBORw0KGgo=", "https://example.com/a.png", "file:f1"),
    ),
    Message("assistant", "", tool_calls=(ToolCall("call_1", "get_weather", '{"city":"Oslo"}'),)),
    Message("tool", '{"temp": 3}', tool_call_id="call_1"),
)
TEXT = Completion("Cold and clear in Oslo.", (), "stop", 42, 7)
CUT = Completion("Cold and", (), "length", 42, 2)
CALL = Completion(
    None, (ToolCall("call_9", "get_weather", '{"city":"Oslo"}'),), "tool_calls", 42, 9
)
OSLO, BERGEN = (
    ToolCall("call_1", "get_weather", '{"city":"Oslo"}'),
    ToolCall("call_2", "get_weather", '{"city":"Bergen","days":3}'),
)
CALLS = Completion(None, (OSLO, BERGEN), "tool_calls", 42, 20)
# Cut at max_tokens inside the second call: the first is whole, the second half written.
CUT_CALLS = Completion(
    None, (OSLO, ToolCall("call_2", "get_weather", '{"city":"Ber')), "length", 42, 12
)
# Reasoning first. The messages format has no reasoning count: it counts the thinking.
THOUGHT = "The user asks about Oslo. Check the weather first."
THOUGHT_TOKENS = count_text(THOUGHT, "messages")
REASONED = Completion("Cold and clear in Oslo.", (), "stop", 42, 7 + THOUGHT_TOKENS)
REASONED.reasoning, REASONED.reasoning_tokens = THOUGHT, THOUGHT_TOKENS
# `max_tokens` reached while reasoning: finish `length`, empty content.
REASONED_CUT = replace(REASONED, text="", finish_reason="length", output_tokens=THOUGHT_TOKENS)
REASONED_CALL = replace(CALL, output_tokens=9 + THOUGHT_TOKENS)
REASONED_CALL.reasoning, REASONED_CALL.reasoning_tokens = THOUGHT, THOUGHT_TOKENS
ANSWERS = [TEXT, CUT, CALL, CALLS, REASONED, REASONED_CUT, REASONED_CALL]
ANSWER_IDS = [
    "text",
    "length",
    "tool_call",
    "tool_calls",
    "reasoning",
    "reasoning_length",
    "reasoning_tool_call",
]


@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "one_call"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_requests_round_trip(fmt: str, parallel: bool) -> None:
    request = Request(
        messages=CONVERSATION,
        max_tokens=50,
        tools=(WEATHER,),
        tool_choice=ForcedTool("get_weather"),
        stop=("\n\n",) if fmt != "responses" else (),
        temperature=0.5,
        seed=7,
        parallel_tool_calls=parallel,
    )
    wire = WIRE[fmt]
    back = wire.parse_request(json.loads(json.dumps(wire.render_request(request, "m"))))
    assert back == request


@pytest.mark.parametrize("name", ["auto", "none", "required"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_tool_named_as_a_mode_is_forced_by_name(fmt: str, name: str) -> None:
    tool = Tool(name, "", {"type": "object"})
    for choice in (ForcedTool(name), name):  # the tool forced, or the mode
        request = Request(messages=CONVERSATION, tools=(tool,), tool_choice=choice)
        wire = WIRE[fmt]
        back = wire.parse_request(json.loads(json.dumps(wire.render_request(request, "m"))))
        assert back.tool_choice == choice


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "schema_format",
    [{"type": "json_object"}, {"type": "json_schema", "name": "out", "schema": {"type": "object"}}],
)
def test_structured_output_survives(fmt: str, schema_format: dict) -> None:
    request = Request(
        messages=(Message("user", "hi"),), max_tokens=10, response_format=schema_format
    )
    wire = WIRE[fmt]
    back = wire.parse_request(wire.render_request(request, "m")).response_format
    if fmt == "messages" and "name" in schema_format:  # Anthropic's schemas have no name
        assert "name" not in wire.render_request(request, "m")["output_config"]["format"]
        schema_format = {**schema_format, "name": "output"}
    assert back == schema_format


def render_whole(fmt: str, completion: Completion) -> dict:
    wire = WIRE[fmt]
    if fmt == "chat":
        return wire.render_response([completion], id="x", model="m", created=0, extra={})
    if fmt == "messages":
        return wire.render_response(completion, id="x", model="m")
    return wire.render_response(completion, id="x", model="m", created=0)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("completion", ANSWERS, ids=ANSWER_IDS)
def test_answers_round_trip(fmt: str, completion: Completion) -> None:
    native = render_whole(fmt, completion)
    assert WIRE[fmt].parse_response(json.loads(json.dumps(native))) == [completion]


@pytest.mark.parametrize("fmt", FORMATS)
def test_several_calls_cut_at_max_tokens_whole(fmt: str) -> None:
    """The calls that fit are kept whole; the cut one keeps the start of its arguments,
    except in the messages format, whose `input` object cannot hold half an object."""
    parsed = WIRE[fmt].parse_response(json.loads(json.dumps(render_whole(fmt, CUT_CALLS))))
    if fmt == "messages":
        cut = ToolCall("call_2", "get_weather", "{}")
        assert parsed == [replace(CUT_CALLS, tool_calls=(OSLO, cut))]
    else:
        assert parsed == [CUT_CALLS]


def stream_round_trip(fmt: str, completion: Completion) -> tuple[list[dict], Completion]:
    """The provider's events for `completion`, and what parsing them gives back."""
    pieces = ["Cold ", "and ", "clear in Oslo."] if completion is TEXT else [completion.text or ""]
    pieces = [p for p in pieces if p]
    thought = completion.reasoning or ""
    thoughts = [p for p in (thought[:9], thought[9:]) if p]
    deltas = list(chat_chunks.deltas(completion, pieces, 0, thoughts))
    wire = EVENTS[fmt]
    if fmt == "chat":
        events = list(
            chat_chunks.render_chunks(iter(deltas), id="x", model="m", created=0, extra={})
        )
        parsed = list(chat_chunks.parse_chunks(events))
    elif fmt == "messages":
        events = list(wire.render_events(iter(deltas), id="x", model="m"))
        parsed = list(wire.parse_events(events))
    else:  # with what the SDK's Response type requires of the request's echo
        extra = WIRE[fmt].request_echo({})
        events = list(wire.render_events(iter(deltas), id="x", model="m", created=0, extra=extra))
        parsed = list(wire.parse_events(events))
    collected = Collected()
    for delta in parsed:
        collected.add(delta)
    return events, collected.completion()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("completion", [*ANSWERS, CUT_CALLS], ids=[*ANSWER_IDS, "cut_calls"])
def test_streams_round_trip(fmt: str, completion: Completion) -> None:
    assert stream_round_trip(fmt, completion)[1] == completion


@pytest.mark.parametrize("completion", [CALLS, CUT_CALLS], ids=["tool_calls", "cut_calls"])
def test_several_calls_stream_in_each_format_s_own_shape(completion: Completion) -> None:
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    chunks, _ = stream_round_trip("chat", completion)
    starts = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks[1:-2]]
    assert [s["index"] for s in starts if "id" in s] == [0, 1]  # distinct indexes, in order
    blocks, _ = stream_round_trip("messages", completion)
    opened = [b for b in blocks if b["type"] == "content_block_start"]
    assert [(b["index"], b["content_block"]["type"]) for b in opened] == [
        (0, "tool_use"),
        (1, "tool_use"),
    ]
    events, _ = stream_round_trip("responses", completion)
    adapter = TypeAdapter(ResponseStreamEvent)
    for event in events:
        adapter.validate_python(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    calls = [
        (e["type"].removeprefix("response."), e["output_index"])
        for e in events
        if "output_index" in e
    ]
    per_call = ["output_item.added"] + ["function_call_arguments.delta"] * 2
    per_call += ["function_call_arguments.done", "output_item.done"]
    arguments = {0: len(OSLO.arguments), 1: len(completion.tool_calls[1].arguments)}
    expected = [  # each call added, streamed, done and closed before the next one
        (kind, index)
        for index in (0, 1)
        for kind in (per_call[:1] + per_call[1:2] * -(-arguments[index] // 24) + per_call[3:])
    ]
    assert calls == expected
    closed = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert closed == events[-1]["response"]["output"]
    last = "incomplete" if completion.finish_reason == "length" else "completed"
    assert [item["status"] for item in closed] == ["completed", last]


def test_responses_events_are_numbered_and_bracketed() -> None:
    from emulator.gateway.wire import responses_events as responses

    deltas = chat_chunks.deltas(TEXT, ["Cold ", "and clear in Oslo."])
    events = list(responses.render_events(deltas, id="r", model="m", created=0))
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    assert {e["type"] for e in events} >= RESPONSES_STREAM_EVENTS


def test_messages_stream_shape() -> None:
    from emulator.gateway.wire import messages_events

    events = list(messages_events.render_events(chat_chunks.deltas(CALL, []), id="m", model="m"))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "content_block_start" in kinds and "message_delta" in kinds
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_a_request_with_another_max_tokens_keeps_every_other_field() -> None:
    full = Request(
        messages=(Message(role="user", text="hi"),),
        max_tokens=9,
        tools=(Tool("t", "d", {"type": "object"}),),
        tool_choice=ForcedTool("t"),
        response_format={"type": "json_object"},
        stop=("x",),
        seed=3,
        temperature=0.5,
        n=2,
        parallel_tool_calls=False,
        reasoning=Reasoning(20, exclude=True),
    )
    assert full.with_max_tokens(4) == replace(full, max_tokens=4)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_reasoning_request_round_trips(fmt: str) -> None:
    """The budget crosses every format (chat `reasoning.max_tokens`, responses `effort`
    or the emulator's `max_tokens`, messages `thinking.budget_tokens`); the gateway asks
    a responses provider for a summary, whose text is the reasoning."""
    wire = WIRE[fmt]
    summary = "auto" if fmt == "responses" else None
    for tokens in (60, 77):
        request = Request(
            messages=(Message("user", "hi"),), max_tokens=500, reasoning=Reasoning(tokens)
        )
        back = wire.parse_request(json.loads(json.dumps(wire.render_request(request, "m"))))
        assert back == replace(request, reasoning=Reasoning(tokens, summary=summary))


def test_reasoning_streams_first_in_each_format_s_own_shape() -> None:
    from openai.types.responses import ResponseStreamEvent
    from pydantic import TypeAdapter

    chunks, _ = stream_round_trip("chat", REASONED)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert [d.get("reasoning") for d in deltas[1:3]] == [THOUGHT[:9], THOUGHT[9:]]
    assert "reasoning" not in deltas[3] and deltas[3]["content"]
    assert chunks[-1]["usage"]["completion_tokens_details"]["reasoning_tokens"] == THOUGHT_TOKENS
    blocks, _ = stream_round_trip("messages", REASONED)
    thinking = [b for b in blocks if b.get("index") == 0]
    assert thinking[0]["content_block"]["type"] == "thinking"
    assert [b["delta"]["type"] for b in thinking[1:-1]] == ["thinking_delta"] * 2 + [
        "signature_delta"
    ]
    assert thinking[-1]["type"] == "content_block_stop"
    events, _ = stream_round_trip("responses", REASONED)
    adapter = TypeAdapter(ResponseStreamEvent)
    for event in events:
        adapter.validate_python(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    first = [e["type"].removeprefix("response.") for e in events if e.get("output_index") == 0]
    assert first == [
        "output_item.added",
        "reasoning_summary_part.added",
        "reasoning_summary_text.delta",
        "reasoning_summary_text.delta",
        "reasoning_summary_text.done",
        "reasoning_summary_part.done",
        "output_item.done",
    ]
    final = events[-1]["response"]
    assert final["output"][0] == {
        "type": "reasoning",
        "id": "rs_x",
        "summary": [{"type": "summary_text", "text": THOUGHT}],
    }
    assert {e["output_index"] for e in events if "output_index" in e} == {0, 1}


@pytest.mark.parametrize("sealed", [False, True])
def test_a_responses_stream_without_summary_sends_an_empty_reasoning_item(sealed: bool) -> None:
    from emulator.gateway.wire import responses_events as responses
    from emulator.gateway.wire.responses_items import Shown, is_sealed, seal

    deltas = chat_chunks.deltas(REASONED, ["Cold."], 0, [THOUGHT])
    shown = Shown(summary=False, sealed=sealed)
    events = list(responses.render_events(deltas, id="r", model="m", created=0, shown=shown))
    kinds = [e["type"] for e in events if e.get("output_index") == 0]
    assert kinds == ["response.output_item.added", "response.output_item.done"]
    item = events[-1]["response"]["output"][0]
    assert item["summary"] == []
    # Sealed, the whole reasoning travels as opaque `encrypted_content`, only there.
    assert item.get("encrypted_content") == (seal(THOUGHT) if sealed else None)
    assert is_sealed(seal(THOUGHT)) and not is_sealed(THOUGHT) and not is_sealed("%%")
    assert events[-1]["response"]["usage"]["output_tokens_details"]["reasoning_tokens"] > 0


@pytest.mark.parametrize("field", ["reasoning", "reasoning_effort", "include_reasoning"])
def test_a_null_reasoning_field_asks_for_none(field: str) -> None:
    """The chat parser also reads what other clients than the gateway send: a field
    present but null asks for nothing."""
    body = {"messages": [{"role": "user", "content": "hi"}], field: None}
    assert chat.parse_request(body).reasoning is None
