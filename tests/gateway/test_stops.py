"""The gateway's own stop sequences, for providers whose format has none."""

from __future__ import annotations

from emulator.gateway.canonical import Completion, Finish, TextDelta, ToolCallStart
from emulator.gateway.stops import cut_completion, cut_deltas, first_stop
from emulator.gateway.tokens import count_text


def test_a_whole_answer_is_cut_at_the_earliest_stop() -> None:
    whole = Completion("Tea came first. Then coffee; then more.", (), "length", 9, 12)
    cut = cut_completion(whole, ("then", ";", "."), "responses")
    assert cut.text == "Tea came first" and cut.finish_reason == "stop"
    assert cut.stop_sequence == "."  # the earliest, not the first listed
    assert (cut.input_tokens, cut.output_tokens) == (9, count_text("Tea came first", "responses"))
    assert cut_completion(whole, ("!",), "responses") is whole
    assert cut_completion(whole, ("",), "responses") is whole  # an empty stop stops nothing


def test_a_stream_is_cut_inside_the_delta_that_holds_the_stop() -> None:
    deltas = [TextDelta("Tea ca"), TextDelta("me fi"), TextDelta("rst. The"), Finish("stop", 4, 9)]
    cut = cut_deltas(deltas, ("st.",), "responses")  # the stop spans two deltas
    assert cut == [
        TextDelta("Tea ca"),
        TextDelta("me fi"),
        TextDelta("r"),
        Finish("stop", 4, count_text("Tea came fir", "responses"), stop_sequence="st."),
    ]
    assert cut_deltas(deltas, ("zzz",), "responses") is deltas


def test_nothing_after_the_stop_is_sent() -> None:
    deltas = [TextDelta("Done. "), ToolCallStart(0, "call_1", "f"), Finish("tool_calls", 4, 9)]
    assert cut_deltas(deltas, (".",), "responses") == [
        TextDelta("Done"),
        Finish("stop", 4, 1, stop_sequence="."),
    ]


def test_the_stop_is_the_one_whose_end_is_written_first() -> None:
    assert first_stop("xyz qqq", ("yz", "xy")) == (0, "xy")
    assert first_stop("abc", ("abc", "b")) == (1, "b")  # "b" is whole before "abc" is
    assert first_stop("abc", ("bc", "abc")) == (0, "abc")  # ending together: the longer
    assert first_stop("abc", ("", "z")) is None
