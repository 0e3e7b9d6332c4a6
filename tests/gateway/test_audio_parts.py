"""Audio parts (`input_audio`): checked as OpenRouter's SDKs type them (base64 `data`
and a `format`), measured from their bytes (32 prompt tokens a second), routed only to
models whose `input_modalities` have `audio` and providers whose format carries it, and
reported in `prompt_tokens_details.audio_tokens`. Nothing is heard."""

from __future__ import annotations

import base64
import json
from typing import Any

import openai
import pytest
from openrouter import OpenRouter
from openrouter.components import ChatContentAudio, ChatContentAudioInputAudio

from emulator.testing import Tenant
from tests.helpers import assert_error, wav


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def part(data: str, fmt: str = "wav") -> dict[str, Any]:
    return {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}


TEXT = {"type": "text", "text": "What is said in this clip?"}
CLIP = part(wav(2.5))  # 2.5 s: 80 tokens


def chat(parts: list[Any], model: str = "emulator/echo", **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": parts}], **extra}


def responses(parts: list[Any], model: str = "emulator/echo") -> dict[str, Any]:
    text = {"type": "input_text", "text": TEXT["text"]}
    swapped = [text if p is TEXT else p for p in parts]
    return {"model": model, "input": [{"role": "user", "content": swapped}]}


@pytest.mark.parametrize(("path", "body"), [("/chat/completions", chat), ("/responses", responses)])
@pytest.mark.parametrize(
    ("bad", "param"),
    [
        ({"type": "input_audio"}, "content[1]"),
        (part("not base64!"), "content[1].input_audio.data"),
        ({"type": "input_audio", "input_audio": {"data": wav(1)}}, "content[1].input_audio.format"),
        (part(""), "content[1].input_audio.data"),
        (part(b64(b"ID3 and then no audio")), "content[1].input_audio.data"),
        (part(b64(b"RIFF\x24\x00\x00\x00WAVEfmt ")),
         "content[1].input_audio.data"),
        (part(wav(1), "mp3"), "content[1].input_audio.data"),
        (part(wav(1), "flac"), "content[1].input_audio.data"),
    ],
    ids=["no-audio", "not-base64", "no-format", "empty", "not-wav", "no-data-chunk",
         "wav-called-mp3", "wav-called-flac"],
)  # fmt: skip
def test_a_malformed_audio_part_is_400_naming_it(
    tenant: Tenant, path: str, body: Any, bad: dict[str, Any], param: str
) -> None:
    with tenant.client() as http:
        refused = http.post(path, json=body([TEXT, bad]))
    assert assert_error(refused, 400, "invalid_request")["param"].endswith(param)


def test_a_clip_costs_32_tokens_a_second_reported_as_audio_tokens(client: openai.OpenAI) -> None:
    heard = client.chat.completions.create(**chat([TEXT, CLIP]))
    plain = client.chat.completions.create(**chat([TEXT]))
    assert heard.usage is not None and plain.usage is not None
    assert heard.usage.prompt_tokens == plain.usage.prompt_tokens + 80
    assert heard.usage.prompt_tokens_details is not None
    assert heard.usage.prompt_tokens_details.audio_tokens == 80
    assert plain.usage.prompt_tokens_details is not None
    assert plain.usage.prompt_tokens_details.audio_tokens == 0
    assert heard.choices[0].message.content == TEXT["text"]  # echo: the text, not the audio
    # Billed as prompt tokens: 80 more at the route's prompt price (1 USD a million).
    assert heard.usage.model_extra is not None and plain.usage.model_extra is not None
    costs = [u.model_extra["cost_details"] for u in (heard.usage, plain.usage) if u.model_extra]
    prompt_costs = [c["upstream_inference_prompt_cost"] for c in costs]
    assert round((prompt_costs[0] - prompt_costs[1]) * 1e6) == 80
    assert heard.usage.model_extra["charge_micros"] > plain.usage.model_extra["charge_micros"]


def test_a_streamed_answer_reports_the_audio_in_its_usage_chunk(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        **chat([TEXT, CLIP, CLIP]), stream=True, stream_options={"include_usage": True}
    )
    usage = [chunk.usage for chunk in stream if chunk.usage is not None]
    assert len(usage) == 1 and usage[0].prompt_tokens_details is not None
    assert usage[0].prompt_tokens_details.audio_tokens == 160


@pytest.mark.parametrize(
    ("data", "fmt", "tokens"),
    [
        (wav(1, rate=8000), "wav", 32),
        (wav(0.01), "wav", 1),  # rounded up
        # MPEG-1 layer III at 128 kbit/s after a 10-byte ID3 tag: 16,000 bytes a second.
        (b64(b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" + bytes(31996)), "mp3", 64),
        (b64(bytes(48000)), "pcm16", 32),  # 24 kHz, 16-bit mono
        (b64(bytes(16000)), "m4a", 32),  # estimated at 128 kbit/s
        (b64(b"fLaC" + bytes(31996)), "FLAC", 64),
    ],
    ids=["wav-8khz", "wav-short", "mp3", "pcm16", "estimated", "flac"],
)  # fmt: skip
def test_a_clip_is_measured_by_its_format(
    client: openai.OpenAI, data: str, fmt: str, tokens: int
) -> None:
    heard = client.chat.completions.create(**chat([TEXT, part(data, fmt)]))
    assert heard.usage is not None and heard.usage.prompt_tokens_details is not None
    assert heard.usage.prompt_tokens_details.audio_tokens == tokens


def test_a_model_without_audio_input_has_no_route(tenant: Tenant, client: openai.OpenAI) -> None:
    with pytest.raises(openai.InternalServerError) as raised:
        client.chat.completions.create(**chat([TEXT, CLIP], model="openai/gpt-4o-mini"))
    assert raised.value.status_code == 503
    with tenant.client() as http:
        refused = http.post("/responses", json=responses([TEXT, CLIP], "anthropic/claude-sonnet-4"))
        error = assert_error(refused, 503, "no_route_available")
        assert error["param"] == "input" and "input_modalities" in error["message"]
        models = {m["id"]: m for m in http.get("/models").json()["data"]}
    assert "audio" in models["google/gemini-2.5-flash"]["architecture"]["input_modalities"]
    assert "audio" not in models["openai/gpt-4o-mini"]["architecture"]["input_modalities"]


def test_audio_goes_only_to_providers_whose_format_carries_it(tenant: Tenant) -> None:
    with tenant.client() as http:
        # Echo's messages-format provider is passed over, not failed.
        served = http.post(
            "/chat/completions",
            json=chat([TEXT, CLIP], provider={"order": ["emulator-messages"]}),
        )
        assert served.status_code == 200, served.text
        assert served.json()["provider"] != "emulator-messages"
        refused = http.post(
            "/chat/completions", json=chat([TEXT, CLIP], provider={"only": ["emulator-messages"]})
        )
        assert "messages format" in assert_error(refused, 503, "no_route_available")["message"]
        # Through a responses-format provider the clip arrives whole: the same tokens.
        via = http.post(
            "/chat/completions", json=chat([TEXT, CLIP], provider={"only": ["emulator-responses"]})
        )
    assert via.status_code == 200, via.text
    assert via.json()["usage"]["prompt_tokens_details"]["audio_tokens"] == 80


def test_the_audio_keys_the_answer(client: openai.OpenAI) -> None:
    def say(*parts: Any) -> str | None:
        answer = client.chat.completions.create(
            **chat([TEXT, *parts], model="google/gemini-2.5-flash", max_tokens=150)
        )
        return answer.choices[0].message.content

    once, again = say(CLIP), say(CLIP)
    assert once and once == again  # the same clip, the same answer
    assert say(part(wav(3))) != once  # another clip, another answer
    assert say() != once


def test_responses_count_the_audio_as_input_tokens(tenant: Tenant) -> None:
    with tenant.client() as http:
        counted = http.post("/responses/input_tokens", json=responses([TEXT, CLIP]))
        plain = http.post("/responses/input_tokens", json=responses([TEXT]))
        answered = http.post("/responses", json=responses([TEXT, CLIP]))
    assert counted.status_code == plain.status_code == answered.status_code == 200
    assert counted.json()["input_tokens"] == plain.json()["input_tokens"] + 80
    assert answered.json()["usage"]["input_tokens"] == counted.json()["input_tokens"]


def test_the_generation_stats_count_the_clips(client: openai.OpenAI, tenant: Tenant) -> None:
    heard = client.chat.completions.create(**chat([TEXT, CLIP, part(wav(1))]))
    plain = client.chat.completions.create(**chat([TEXT]))
    with tenant.client() as http:
        stats = [
            http.get("/generation", params={"id": answer.id}).json()["data"]
            for answer in (heard, plain)
        ]
    assert [s["num_input_audio_prompt"] for s in stats] == [2, None]


def test_the_auto_router_picks_a_model_that_takes_audio(client: openai.OpenAI) -> None:
    picks = {
        client.chat.completions.create(
            **chat([{"type": "text", "text": f"Clip {i}"}, CLIP], model="openrouter/auto"),
            max_tokens=4,
        ).model
        for i in range(6)
    }
    # The models whose `input_modalities` have audio (the echo model is not routed to).
    assert picks <= {"google/gemini-2.5-flash", "google/gemini-2.5-pro", "openai/gpt-audio-mini"}


def test_the_openai_sdk_types_round_trip(client: openai.OpenAI) -> None:
    """The SDK's own `input_audio` part type, as its docs show it."""
    answer = client.chat.completions.create(
        model="emulator/echo",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Transcribe."},
                    {"type": "input_audio", "input_audio": {"data": wav(1), "format": "wav"}},
                ],
            }
        ],
    )
    assert answer.usage is not None and answer.usage.prompt_tokens_details is not None
    assert answer.usage.prompt_tokens_details.audio_tokens == 32
    assert json.loads(answer.model_dump_json())["choices"][0]["message"]["content"] == "Transcribe."


def test_the_openrouter_sdk_sends_its_typed_audio_part(router: OpenRouter) -> None:
    audio = ChatContentAudio(
        type="input_audio", input_audio=ChatContentAudioInputAudio(data=wav(2), format_="wav")
    )
    result = router.chat.send(
        model="google/gemini-2.5-flash",
        messages=[{"role": "user", "content": [{"type": "text", "text": "Transcribe."}, audio]}],
        max_tokens=200,
    )
    assert result.choices[0].message.content
    assert result.usage.prompt_tokens_details is not None
    assert result.usage.prompt_tokens_details.audio_tokens == 64


@pytest.mark.parametrize("provider", ["emulator", "emulator-responses"])
def test_a_tool_result_s_audio_reaches_either_format_whole(tenant: Tenant, provider: str) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "record", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "Record the room."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": [TEXT, CLIP]},
    ]
    tools = [{"type": "function", "function": {"name": "record", "parameters": {}}}]
    body = chat([], messages=messages, tools=tools, provider={"only": [provider]})
    heard_not = [*messages[:2], {**messages[2], "content": [TEXT]}]
    with tenant.client() as http:
        answered = http.post("/chat/completions", json=body)
        plain = http.post("/chat/completions", json={**body, "messages": heard_not})
    assert answered.status_code == plain.status_code == 200, answered.text
    usage, without = answered.json()["usage"], plain.json()["usage"]
    assert usage["prompt_tokens_details"]["audio_tokens"] == 80
    assert usage["prompt_tokens"] == without["prompt_tokens"] + 80
