"""A scripted `reply: ""` is an empty answer, not a cue to generate one (it was read
as "no reply" and the generator answered instead)."""

from __future__ import annotations

from pathlib import Path

import anthropic
import openai
import pytest

from emulator.store.fixtures import load_fixtures
from emulator.testing import EmulatorHandle

RULE = {"pattern": "^say nothing$", "reply": ""}
ASK = [{"role": "user", "content": "Say nothing"}]
PROVIDERS = ["emulator", "emulator-responses", "emulator-messages"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_chat_gets_an_empty_message_whole_and_streamed(
    emulator: EmulatorHandle, client: openai.OpenAI, provider: str
) -> None:
    kwargs = {
        "model": "emulator/echo",
        "messages": ASK,
        "extra_body": {"provider": {"only": [provider]}},
    }
    with emulator.replies.scripted(RULE):
        whole = client.chat.completions.create(**kwargs)
        chunks = list(client.chat.completions.create(**kwargs, stream=True))
    choice = whole.choices[0]
    assert choice.message.content == "" and choice.finish_reason == "stop"
    assert whole.usage is not None and whole.usage.completion_tokens == 0
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == ""
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


def test_responses_and_messages_get_an_empty_text(
    emulator: EmulatorHandle, client: openai.OpenAI, claude: anthropic.Anthropic
) -> None:
    with emulator.replies.scripted(RULE):
        response = client.responses.create(model="emulator/echo", input="Say nothing")
        message = claude.messages.create(
            model="emulator/echo",
            max_tokens=50,
            messages=ASK,
        )
    assert response.output_text == "" and response.status == "completed"
    assert "".join(b.text for b in message.content if b.type == "text") == ""
    assert message.stop_reason == "end_turn" and message.usage.output_tokens == 0


def test_the_fixtures_keep_an_empty_reply(tmp_path: Path) -> None:
    (tmp_path / "replies.yaml").write_text('replies:\n  - {pattern: "^x$", reply: ""}\n')
    assert [r.stored() for r in load_fixtures(tmp_path).replies] == [
        {"pattern": "^x$", "reply": "", "models": []}
    ]
