"""Thinking sent back on `/messages` is checked as Anthropic's API checks it
(`thinking_history`): signatures seal their blocks, and a tool loop's last assistant
turn opens with its thinking while thinking is on."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from emulator.gateway.wire.messages import signature, signed

SONNET = "anthropic/claude-sonnet-4"
ASK: Any = [{"role": "user", "content": "What's the weather in Paris?"}]
TOOLS: Any = [
    {
        "name": "get_weather",
        "description": "Current weather in a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]
THINKING: Any = {"type": "enabled", "budget_tokens": 1024}


def first_turn(claude: anthropic.Anthropic, thinking: Any = THINKING) -> list[dict[str, Any]]:
    """The assistant's thinking and tool call, as an agent keeps them."""
    made = claude.messages.create(
        model=SONNET, max_tokens=3000, messages=ASK, tools=TOOLS, thinking=thinking
    )
    assert [b.type for b in made.content] == ["thinking", "tool_use"]
    return [b.model_dump(exclude_none=True) for b in made.content]


def next_turn(
    claude: anthropic.Anthropic, said: list[dict[str, Any]], thinking: Any = THINKING
) -> Any:
    call = next(b for b in said if b["type"] == "tool_use")
    result = {"type": "tool_result", "tool_use_id": call["id"], "content": "18 C, sunny"}
    return claude.messages.create(
        model=SONNET,
        max_tokens=3000,
        tools=TOOLS,
        thinking=thinking,
        messages=[
            *ASK,
            {"role": "assistant", "content": said},
            {"role": "user", "content": [result]},
        ],
    )


def test_a_signature_seals_the_text_shown() -> None:
    sig = signature("the whole thought")
    assert signed("the whole thought", sig) and not signed("the whole though", sig)
    hidden = signature("the whole thought", shown="")
    assert signed("", hidden) and not signed("the whole thought", hidden)
    assert not signed("x", "not base64!") and not signed("x", "c2hvcnQ=")


def test_the_blocks_sent_back_as_given_continue_the_loop(claude: anthropic.Anthropic) -> None:
    answer = next_turn(claude, first_turn(claude))
    assert answer.stop_reason == "end_turn" and answer.content[-1].type == "text"


def test_streamed_blocks_sent_back_continue_the_loop(claude: anthropic.Anthropic) -> None:
    with claude.messages.stream(
        model=SONNET, max_tokens=3000, messages=ASK, tools=TOOLS, thinking=THINKING
    ) as stream:
        final = stream.get_final_message()
    said = [b.model_dump(exclude_none=True) for b in final.content]
    assert next_turn(claude, said).stop_reason == "end_turn"


@pytest.mark.parametrize(
    "change",
    [
        lambda b: {**b, "signature": "AAAA" + b["signature"][4:]},
        lambda b: {**b, "thinking": b["thinking"] + " More."},
        lambda b: {**b, "signature": ""},
        lambda b: {**b, "signature": 5},
        lambda b: {**b, "thinking": ["not", "text"]},
    ],
    ids=["signature", "text", "empty signature", "a number", "a list"],
)
def test_a_changed_thinking_block_is_refused(claude: anthropic.Anthropic, change: Any) -> None:
    thought, call = first_turn(claude)
    with pytest.raises(anthropic.APIStatusError) as refused:
        next_turn(claude, [change(thought), call])
    assert refused.value.status_code == 400
    assert "messages.1.content.0: Invalid `signature` in `thinking` block" in str(refused.value)


def test_an_omitted_block_goes_back_empty(claude: anthropic.Anthropic) -> None:
    thought, call = first_turn(claude, thinking={**THINKING, "display": "omitted"})
    assert thought["thinking"] == ""
    assert next_turn(claude, [thought, call]).stop_reason == "end_turn"
    with pytest.raises(anthropic.BadRequestError):
        next_turn(claude, [{**thought, "thinking": "filled in"}, call])


def test_a_tool_loop_without_its_thinking_is_refused_while_thinking_is_on(
    claude: anthropic.Anthropic,
) -> None:
    _, call = first_turn(claude)
    with pytest.raises(anthropic.APIStatusError) as refused:
        next_turn(claude, [call])
    assert refused.value.status_code == 400
    message = str(refused.value)
    assert "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`" in message
    assert "but found `tool_use`" in message
    assert next_turn(claude, [call], thinking={"type": "disabled"}).stop_reason == "end_turn"


def test_other_vendors_models_do_not_check(claude: anthropic.Anthropic) -> None:
    """OpenRouter's /messages on another vendor's model: no Anthropic API to check."""
    _, call = first_turn(claude)
    bad = {"type": "thinking", "thinking": "made up", "signature": "bm9wZQ=="}
    result = {"type": "tool_result", "tool_use_id": call["id"], "content": "18 C"}
    answer = claude.messages.create(
        model="openai/gpt-4o",
        max_tokens=3000,
        tools=TOOLS,
        messages=[
            *ASK,
            {"role": "assistant", "content": [bad, call]},
            {"role": "user", "content": [result]},
        ],
    )
    assert answer.stop_reason == "end_turn"
