"""Translation on its own: every wire format round-trips the canonical types, whole and streamed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import pytest

from emulator.gateway.canonical import (
    Completion,
    Delta,
    Finish,
    Message,
    Request,
    TextDelta,
    Tool,
    ToolArgumentsDelta,
    ToolCall,
    ToolCallStart,
)
from emulator.gateway.providers import WIRE
from emulator.gateway.wire import chat
from tests.helpers import RESPONSES_STREAM_EVENTS


@dataclass
class Collected:
    """Deltas gathered back into a completion (what a client saw of a stream)."""

    text: list[str] = field(default_factory=list)
    calls: list[list[str]] = field(default_factory=list)  # [id, name, arguments]
    finish: Finish | None = None

    def add(self, delta: Delta) -> None:
        if isinstance(delta, TextDelta):
            self.text.append(delta.text)
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
        )


FORMATS = ["chat", "responses", "messages"]
WEATHER = Tool(
    "get_weather",
    "Weather of a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CONVERSATION = (
    Message("system", "Be brief."),
    Message("user", "What is the weather in Oslo?", images=1),
    Message("assistant", "", tool_calls=(ToolCall("call_1", "get_weather", '{"city":"Oslo"}'),)),
    Message("tool", '{"temp": 3}', tool_call_id="call_1"),
)
TEXT = Completion("Cold and clear in Oslo.", (), "stop", 42, 7)
CUT = Completion("Cold and", (), "length", 42, 2)
CALL = Completion(
    None, (ToolCall("call_9", "get_weather", '{"city":"Oslo"}'),), "tool_calls", 42, 9
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_requests_round_trip(fmt: str) -> None:
    request = Request(
        messages=CONVERSATION,
        max_tokens=50,
        tools=(WEATHER,),
        tool_choice="get_weather",
        stop=("\n\n",) if fmt != "responses" else (),
        temperature=0.5,
        seed=7,
    )
    wire = WIRE[fmt]
    back = wire.parse_request(json.loads(json.dumps(wire.render_request(request, "m"))))
    assert back == request


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
    assert wire.parse_request(wire.render_request(request, "m")).response_format == schema_format


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("completion", [TEXT, CUT, CALL], ids=["text", "length", "tool_call"])
def test_answers_round_trip(fmt: str, completion: Completion) -> None:
    wire = WIRE[fmt]
    if fmt == "chat":
        native = wire.render_response([completion], id="x", model="m", created=0, extra={})
    elif fmt == "messages":
        native = wire.render_response(completion, id="x", model="m")
    else:
        native = wire.render_response(completion, id="x", model="m", created=0)
    assert wire.parse_response(json.loads(json.dumps(native))) == [completion]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("completion", [TEXT, CUT, CALL], ids=["text", "length", "tool_call"])
def test_streams_round_trip(fmt: str, completion: Completion) -> None:
    pieces = ["Cold ", "and ", "clear in Oslo."] if completion is TEXT else [completion.text or ""]
    pieces = [p for p in pieces if p]
    deltas = list(chat.deltas(completion, pieces))
    wire = WIRE[fmt]
    if fmt == "chat":
        events = list(chat.render_chunks(iter(deltas), id="x", model="m", created=0, extra={}))
        parsed = list(chat.parse_chunks(events))
    elif fmt == "messages":
        events = list(wire.render_events(iter(deltas), id="x", model="m"))
        parsed = list(wire.parse_events(events))
    else:
        events = list(wire.render_events(iter(deltas), id="x", model="m", created=0))
        parsed = list(wire.parse_events(events))
    collected = Collected()
    for delta in parsed:
        collected.add(delta)
    assert collected.completion() == completion


def test_responses_events_are_numbered_and_bracketed() -> None:
    from emulator.gateway.wire import responses

    deltas = chat.deltas(TEXT, ["Cold ", "and clear in Oslo."])
    events = list(responses.render_events(deltas, id="r", model="m", created=0))
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    assert {e["type"] for e in events} >= RESPONSES_STREAM_EVENTS


def test_messages_stream_shape() -> None:
    from emulator.gateway.wire import messages

    events = list(messages.render_events(chat.deltas(CALL, []), id="m", model="m"))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "content_block_start" in kinds and "message_delta" in kinds
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_a_request_with_another_max_tokens_keeps_every_other_field() -> None:
    full = Request(
        messages=(Message(role="user", text="hi"),),
        max_tokens=9,
        tools=(Tool("t", "d", {"type": "object"}),),
        tool_choice="t",
        response_format={"type": "json_object"},
        stop=("x",),
        seed=3,
        temperature=0.5,
        n=2,
    )
    assert full.with_max_tokens(4) == replace(full, max_tokens=4)
