"""The prompt as `gateway.prompt_cache` reads it: as many tokens as the provider counts,
and breakpoints carried through the messages format unchanged."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.billing.pricing import CacheBill, Fees, charge_for
from emulator.gateway import audio, charges, prompt_cache
from emulator.gateway.canonical import CacheMark, Message, Request, Tool, ToolCall
from emulator.gateway.content import prompt_tokens, tool_text
from emulator.gateway.routing import Route
from emulator.gateway.tokens import count_text, framing
from emulator.gateway.wire import chat, messages
from tests.helpers import a_route, wav

FAMILIES = ["chat", "responses", "messages"]


def conversation() -> Request:
    call = ToolCall("call_1", "lookup", '{"city": "Paris"}')
    return Request(
        messages=(
            Message("system", "You are terse.", cache_marks=(CacheMark(14),)),
            Message("user", "Weather in Paris?\nAnd in Rome?", images=2),
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", '{"temp": 21}', tool_call_id="call_1"),
        ),
        tools=(Tool("lookup", "Look a city up", {"type": "object"}),),
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_the_layout_has_as_many_tokens_as_the_prompt(family: str) -> None:
    request = conversation()
    pieces, ends, marks = prompt_cache._layout(request, family)
    assert len(pieces) == prompt_tokens(request, family) == ends[-1]
    assert len(ends) == 1 + len(request.messages)  # the tools end a block too
    assert marks == [(ends[1], 300)]  # the system message's end


@pytest.mark.parametrize("family", ["chat", "responses"])
def test_a_clip_counts_its_tokens_and_another_clip_is_another_prefix(family: str) -> None:
    def asking(data: str) -> Request:
        clip = audio.clip(data, "wav")
        said = Message("user", "What is said?", audio=(clip,))
        return replace(conversation(), messages=(*conversation().messages[:2], said))

    one, other = asking(wav(1)), asking(wav(1, rate=8000))  # as long, not the same
    pieces, ends, _ = prompt_cache._layout(one, family)
    assert len(pieces) == prompt_tokens(one, family) == ends[-1]
    others, _, _ = prompt_cache._layout(other, family)
    assert len(others) == len(pieces) and others[: ends[-2]] == pieces[: ends[-2]]
    assert others[ends[-2] + framing(family)] != pieces[ends[-2] + framing(family)]


def test_a_breakpoint_on_a_tool_ends_the_tools_up_to_it() -> None:
    lookup = Tool("lookup", "Look a city up", {"type": "object"}, cache_ttl=3600)
    tools = (lookup, Tool("fetch", "Fetch a page", {"type": "object"}))
    request = replace(conversation(), tools=tools)
    _, ends, marks = prompt_cache._layout(request, "messages")
    assert marks[0] == (count_text(tool_text(lookup), "messages"), 3600)
    assert ends[0] == count_text(tool_text(tools[0]) + tool_text(tools[1]), "messages")
    native = messages.render_request(request, "m")
    assert native["tools"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "cache_control" not in native["tools"][1]
    assert [t.cache_ttl for t in messages.parse_request(native).tools] == [3600, None]
    assert prompt_cache.worst_prompt_price(route("messages", 1_250_000), request) == 2_000_000


@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=4), st.data())
def test_breakpoints_survive_the_messages_format(texts: list[str], data: st.DataObject) -> None:
    marked = data.draw(st.lists(st.booleans(), min_size=len(texts), max_size=len(texts)))
    parts = [
        {"type": "text", "text": text, **({"cache_control": {"type": "ephemeral"}} if m else {})}
        for text, m in zip(texts, marked, strict=True)
    ]
    sent = chat.parse_request({"messages": [{"role": "user", "content": parts}]})
    native = messages.render_request(sent, "m")
    back = messages.parse_request(native)
    assert back.messages[0].text == sent.messages[0].text == "\n".join(texts)
    kept = [mark for mark in sent.messages[0].cache_marks if mark.offset > 0]
    assert back.messages[0].cache_marks == tuple(kept)


def test_system_and_tool_result_breakpoints_survive_the_messages_format() -> None:
    request = Request(
        messages=(
            Message("system", "first rules", cache_marks=(CacheMark(11, 3600),)),
            Message("system", "second rules", cache_marks=(CacheMark(12),)),
            Message("user", "go"),
            Message("assistant", "", tool_calls=(ToolCall("c1", "f", "{}"),)),
            Message("tool", "result", tool_call_id="c1", cache_marks=(CacheMark(6),)),
        )
    )
    native = messages.render_request(request, "m")
    assert native["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    back = messages.parse_request(native)
    assert back.messages[0].text == "first rules\nsecond rules"
    assert back.messages[0].cache_marks == (CacheMark(11, 3600), CacheMark(24))
    assert back.messages[-1].cache_marks == (CacheMark(6),)


def route(wire_format: str, write: int | None) -> Route:
    return a_route(
        wire_format=wire_format,
        prompt_micros_per_mtok=1_000_000,
        completion_micros_per_mtok=0,
        cache_read_micros_per_mtok=100_000,
        cache_write_micros_per_mtok=write,
    )


def test_the_worst_prompt_price_is_the_write_price_only_with_breakpoints() -> None:
    plain = Request(messages=(Message("user", "hi"),))
    marked = Request(messages=(Message("user", "hi", cache_marks=(CacheMark(2),)),))
    hour = Request(messages=(Message("user", "hi", cache_marks=(CacheMark(2, 3600),)),))
    explicit, automatic = route("messages", 1_250_000), route("chat", None)
    assert prompt_cache.worst_prompt_price(explicit, plain) == 1_000_000
    assert prompt_cache.worst_prompt_price(explicit, marked) == 1_250_000
    assert prompt_cache.worst_prompt_price(explicit, hour) == 2_000_000
    assert prompt_cache.worst_prompt_price(automatic, marked) == 1_000_000  # reads only


def test_writes_are_billed_per_breakpoint_ttl() -> None:
    use = prompt_cache._written(1100, [(1200, 3600), (1500, 300), (1000, 300)])
    assert (use.read, use.written, use.written_1h) == (1100, 400, 100)


def test_a_route_reading_for_nothing_still_holds_for_its_writes() -> None:
    free_reads = replace(route("messages", 1_250_000), cache_read_micros_per_mtok=0)
    marked = Request(messages=(Message("user", "x " * 2000, cache_marks=(CacheMark(4000),)),))
    fees = Fees(0, 0)
    held = charges.worst_case(free_reads, marked, fees)
    prompt = prompt_tokens(marked, "messages")
    written = CacheBill(0, prompt, 0, 0, 1_250_000)
    assert held >= charge_for(prompt, 100, 1_000_000, 0, fees, written).charge_micros


def test_images_come_before_the_text_and_a_breakpoint_at_the_end_covers_all() -> None:
    message = Message("user", "look", images=1, cache_marks=(CacheMark(4),))
    pieces, ends, marks = prompt_cache._layout(Request(messages=(message,)), "messages")
    assert pieces[5] == "<image>" and marks == [(ends[0], 300)]
    middle = Message("user", "see\nthis", images=1, cache_marks=(CacheMark(3),))
    _, ends, marks = prompt_cache._layout(Request(messages=(middle,)), "messages")
    assert marks == [(5 + 85 + 1, 300)]  # framing, the image, "see"
