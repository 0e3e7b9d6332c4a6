"""An answer's sound sent back in a later turn (`gateway.kept_audio`): by its id (OpenAI's
`{"role": "assistant", "audio": {"id": ...}}`) or as the whole `audio` of OpenRouter's
assistant message, read as its transcript for an hour, for its own account."""

from __future__ import annotations

from typing import Any

import httpx
import openai

from emulator.gateway.audio_output import EXPIRES_S
from emulator.testing import EmulatorHandle, Tenant
from tests.gateway.test_audio_output import ASK, speak
from tests.helpers import assert_error

AGAIN = {"role": "user", "content": "Say it once more"}


def spoken(client: openai.OpenAI) -> tuple[str, str]:
    """The id and the transcript of a spoken answer to `ASK`."""
    audio_id, transcript = None, ""
    for chunk in client.chat.completions.create(**speak("pcm16")):
        for choice in chunk.choices:
            if choice.delta.audio is not None:
                audio_id = audio_id or choice.delta.audio.id
                transcript += choice.delta.audio.transcript or ""
    assert audio_id is not None and transcript
    return audio_id, transcript


def prompt_tokens(client: openai.OpenAI, assistant: Any) -> int:
    answer = client.chat.completions.create(
        model="openai/gpt-4o-mini", messages=[*ASK, assistant, AGAIN], max_tokens=5
    )
    assert answer.usage is not None
    return answer.usage.prompt_tokens


def test_the_sound_sent_back_by_id_reads_as_its_transcript(client: openai.OpenAI) -> None:
    audio_id, transcript = spoken(client)
    by_id = prompt_tokens(client, {"role": "assistant", "audio": {"id": audio_id}})
    as_text = prompt_tokens(client, {"role": "assistant", "content": transcript})
    assert by_id == as_text
    assert by_id != prompt_tokens(client, {"role": "assistant", "content": "Yes."})


def test_a_spoken_conversation_goes_on_with_the_sdk(client: openai.OpenAI) -> None:
    """OpenAI's guide: the answer's audio id as the assistant's turn, then ask again."""
    audio_id, _ = spoken(client)
    body = speak("pcm16", messages=[*ASK, {"role": "assistant", "audio": {"id": audio_id}}, AGAIN])
    chunks = list(client.chat.completions.create(**body))
    said = "".join(
        c.choices[0].delta.audio.transcript or ""
        for c in chunks
        if c.choices and c.choices[0].delta.audio is not None
    )
    assert said and chunks[-1].usage is not None


def test_openrouters_whole_audio_needs_no_lookup(tenant: Tenant) -> None:
    """The assistant message as a client that appends the answer sends it back: the
    transcript given is the turn's, whatever the id (the quote reads it the same way)."""
    sent = {
        "role": "assistant",
        "content": None,
        "audio": {"id": "audio_never_made", "transcript": "The build is green.", "expires_at": 1},
    }
    as_text = {"role": "assistant", "content": "The build is green."}
    with tenant.client() as http:
        quotes = [
            http.post(
                "/ai-gateway/quote",
                json={"model": "openai/gpt-4o-mini", "messages": [*ASK, turn, AGAIN]},
            )
            for turn in (sent, as_text)
        ]
        answered = http.post(
            "/chat/completions", json={"model": "emulator/echo", "messages": [*ASK, sent, AGAIN]}
        )
    assert [q.status_code for q in quotes] == [200, 200], quotes[0].text
    tokens = [q.json()["estimated_input_tokens"] for q in quotes]
    assert tokens[0] == tokens[1]
    assert answered.status_code == 200, answered.text


def test_the_sound_is_kept_an_hour(emulator: EmulatorHandle, client: openai.OpenAI) -> None:
    audio_id, _ = spoken(client)
    emulator.advance(EXPIRES_S - 60)
    prompt_tokens(client, {"role": "assistant", "audio": {"id": audio_id}})
    emulator.advance(61)
    try:
        prompt_tokens(client, {"role": "assistant", "audio": {"id": audio_id}})
    except openai.BadRequestError as refused:
        assert refused.code == "audio_not_found"
        assert refused.param == "messages[1].audio.id"
        assert "hour" in refused.message
    else:
        raise AssertionError("an expired sound was read")


def test_another_accounts_sound_is_not_found(
    emulator: EmulatorHandle, client: openai.OpenAI
) -> None:
    audio_id, _ = spoken(client)
    other = emulator.create_tenant()
    with other.client() as http:
        refused = http.post(
            "/chat/completions",
            json={
                "model": "emulator/echo",
                "messages": [*ASK, {"role": "assistant", "audio": {"id": audio_id}}, AGAIN],
            },
        )
    assert_error(refused, 400, "audio_not_found")
    assert refused.json()["error"]["param"] == "messages[1].audio.id"


def bad(http: httpx.Client, message: dict[str, Any]) -> httpx.Response:
    return http.post(
        "/chat/completions", json={"model": "emulator/echo", "messages": [*ASK, message, AGAIN]}
    )


def test_audio_is_an_assistants_and_needs_an_id(tenant: Tenant) -> None:
    with tenant.client() as http:
        on_user = bad(http, {"role": "user", "content": "hi", "audio": {"id": "audio_1"}})
        empty = bad(http, {"role": "assistant", "audio": {"data": "AAAA"}})
        nothing = bad(http, {"role": "assistant"})
    for refused in (on_user, empty):
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["param"] == "messages[1]"
    assert "input_audio" in on_user.json()["error"]["message"]
    assert "`id`" in empty.json()["error"]["message"]
    assert "an `assistant` message needs `content`" in nothing.json()["error"]["message"]


def test_the_messages_own_content_comes_first(client: openai.OpenAI) -> None:
    """With `content` beside it, the audio is not looked up: an id never made passes."""
    both = {"role": "assistant", "content": "Yes.", "audio": {"id": "audio_never_made"}}
    assert prompt_tokens(client, both) == prompt_tokens(
        client, {"role": "assistant", "content": "Yes."}
    )
