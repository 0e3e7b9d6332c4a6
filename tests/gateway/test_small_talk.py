"""Small talk is answered in kind, and calls no tool under `auto` (`small_talk`)."""

from __future__ import annotations

import random

import anthropic
import openai
import pytest

from emulator.gateway.small_talk import REPLIES, kind_of, reply

MODEL = "meta-llama/llama-3.3-70b-instruct"  # no scripted greeting for it in the fixtures
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("hi", "greeting"),
        ("Hello there!", "greeting"),
        ("Good morning", "greeting"),
        ("Hey Claude", "greeting"),
        ("hello!!! :)", "greeting"),
        ("hi, how are you?", "wellbeing"),
        ("How\u2019s it going", "wellbeing"),
        ("Thank you so much!", "thanks"),
        ("thx", "thanks"),
        ("thanks, bye!", "farewell"),
        ("See you later", "farewell"),
        ("ok, got it", "acknowledgment"),
        ("Great, thanks!", "thanks"),
    ],
)
def test_small_talk_is_known_by_its_kind(message: str, kind: str) -> None:
    assert kind_of(message) == kind


@pytest.mark.parametrize(
    "message",
    [
        "hi, what's the weather in Paris?",
        "Hi Sam",  # a name it does not know: maybe more than a greeting
        "hello world",
        "hiyo",
        "pretty",  # "ty" inside a word
        "ok, now list three cities",
        "",
        "thanks " * 20,  # long: something else to say
    ],
)
def test_a_message_with_anything_else_is_not_small_talk(message: str) -> None:
    assert kind_of(message) is None


def test_the_reply_is_one_of_its_kind_drawn_by_the_seed() -> None:
    drawn = {reply("thanks", random.Random(seed)) for seed in range(30)}
    assert drawn == set(REPLIES["thanks"])


def test_a_greeting_with_tools_under_auto_is_answered_in_words(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], tools=[WEATHER], seed=7
    )
    choice = answer.choices[0]
    assert choice.finish_reason == "stop" and choice.message.tool_calls is None
    assert choice.message.content in REPLIES["greeting"]
    again = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], tools=[WEATHER], seed=7
    )
    assert again.choices[0].message.content == choice.message.content


def test_a_call_demanded_is_still_made(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "hi"}],
        tools=[WEATHER],
        tool_choice="required",
    )
    assert answer.choices[0].message.tool_calls[0].function.name == "get_weather"


def test_small_talk_after_a_tool_loop_streams_in_words(client: openai.OpenAI) -> None:
    """The thanks that ends a conversation with a tool in it, streamed on /responses."""
    with client.responses.stream(
        model=MODEL,
        input=[
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": "It is 4 degrees and raining in Oslo."},
            {"role": "user", "content": "Thanks a lot!"},
        ],
        tools=[{"type": "function", **WEATHER["function"]}],
    ) as stream:
        final = stream.get_final_response()
    assert [item.type for item in final.output] == ["message"]
    assert final.output_text in REPLIES["thanks"]


def test_anthropic_clients_get_words_too(claude: anthropic.Anthropic) -> None:
    tool = {"name": "get_weather", "input_schema": WEATHER["function"]["parameters"]}
    message = claude.messages.create(
        model="anthropic/claude-3.5-haiku",
        max_tokens=100,
        messages=[{"role": "user", "content": "bye!"}],
        tools=[tool],
    )
    assert message.stop_reason == "end_turn" and [b.type for b in message.content] == ["text"]
    assert message.content[0].text in REPLIES["farewell"]
