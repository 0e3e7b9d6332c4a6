"""Audio in answers (`gateway.audio_output`): `modalities` with `audio` and the `audio`
settings, streamed, to a model whose `output_modalities` have it. The transcript comes in
`delta.audio.transcript`, the sound in `delta.audio.data`, and the sound's tokens (six a
token of transcript) are output tokens at the route's audio price."""

from __future__ import annotations

import asyncio
import base64
import io
import wave
from typing import Any

import openai
import pytest
import soundfile  # libsndfile: a real decoder of FLAC and Ogg Opus

from emulator.gateway.audio_output import EXPIRES_S, PER_TEXT_TOKEN
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

AUDIO_MODEL = "openai/gpt-audio-mini"
ASK = [{"role": "user", "content": "Tell the team the build is green"}]


def speak(fmt: str = "wav", **extra: Any) -> dict[str, Any]:
    body = {
        "model": AUDIO_MODEL,
        "messages": ASK,
        "modalities": ["text", "audio"],
        "audio": {"voice": "alloy", "format": fmt},
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    return {**body, **extra}


def heard(client: openai.OpenAI, **body: Any) -> tuple[str, bytes, list[Any]]:
    """The transcript, the sound's bytes and the chunks of a streamed answer."""
    chunks = list(client.chat.completions.create(**body))
    transcript, sound = "", b""
    for chunk in chunks:
        for choice in chunk.choices:
            audio = choice.delta.audio
            assert choice.delta.content in (None, "")  # the text is the transcript
            if audio is not None:
                transcript += audio.transcript or ""
                sound += base64.b64decode(audio.data or "", validate=True)
    return transcript, sound, chunks


def test_a_spoken_answer_streams_its_transcript_then_its_sound(client: openai.OpenAI) -> None:
    transcript, sound, chunks = heard(client, **speak())
    assert transcript and transcript[0].isupper()
    with wave.open(io.BytesIO(sound)) as played:
        assert (played.getframerate(), played.getnchannels(), played.getsampwidth()) == (
            24_000,
            1,
            2,
        )
        frames = played.getnframes()
    usage = chunks[-1].usage
    assert usage is not None and usage.completion_tokens_details is not None
    audio_tokens = usage.completion_tokens_details.audio_tokens
    assert audio_tokens is not None
    spoken = usage.completion_tokens - audio_tokens  # the transcript's tokens
    assert audio_tokens == PER_TEXT_TOKEN * spoken
    assert frames == spoken * 7_200  # 0.3 s a token of transcript at 24 kHz
    # The sound's tokens at the route's audio price (20 USD a million), the transcript's
    # at the completion price (2.4 USD a million).
    extra = usage.model_extra or {}
    expected = audio_tokens * 20_000_000 + spoken * 2_400_000
    assert round(extra["cost_details"]["upstream_inference_completions_cost"] * 1e12) == expected
    pieces = [c.choices[0].delta.audio for c in chunks if c.choices and c.choices[0].delta.audio]
    first, last = pieces[0], pieces[-1]
    assert first.id is not None and first.id.startswith("audio_") and last.id == first.id
    assert last.expires_at == chunks[0].created + EXPIRES_S


def test_the_echo_model_speaks_its_echo(client: openai.OpenAI) -> None:
    transcript, sound, _ = heard(client, **speak("pcm16", model="emulator/echo"))
    assert transcript == ASK[0]["content"]
    assert len(sound) % 14_400 == 0 and sound  # 0.3 s of 16-bit samples at 24 kHz a token


def test_the_same_request_gives_the_same_sound_and_the_voice_changes_it(
    client: openai.OpenAI,
) -> None:
    first = heard(client, **speak())
    again = heard(client, **speak())
    other = heard(client, **speak(audio={"voice": "verse", "format": "wav"}))
    assert first[:2] == again[:2]
    assert other[0] == first[0] and other[1] != first[1]  # the same words, another voice


def test_mp3_sound_is_frames_a_player_measures(client: openai.OpenAI) -> None:
    """Silence in MPEG layer III frames; sent back as audio input, its length is read
    from them (32 prompt tokens a second)."""
    _, sound, chunks = heard(client, **speak("mp3", model="emulator/echo"))
    assert sound[:2] == b"\xff\xfb" and len(sound) % 384 == 0
    usage = chunks[-1].usage
    assert usage is not None and usage.completion_tokens_details is not None
    spoken = usage.completion_tokens - (usage.completion_tokens_details.audio_tokens or 0)
    seconds = len(sound) // 384 * 0.024
    assert seconds == pytest.approx(spoken * 0.3, abs=0.024)
    part = {
        "type": "input_audio",
        "input_audio": {"data": base64.b64encode(sound).decode(), "format": "mp3"},
    }
    back = client.chat.completions.create(
        model="emulator/echo",
        messages=[{"role": "user", "content": [{"type": "text", "text": "x"}, part]}],  # type: ignore[list-item]
    )
    assert back.usage is not None and back.usage.prompt_tokens_details is not None
    assert back.usage.prompt_tokens_details.audio_tokens == -(-int(seconds * 1000) * 32 // 1000)


def sent_back(client: openai.OpenAI, sound: bytes, fmt: str) -> int:
    """The prompt's audio tokens when `sound` is sent back as an `input_audio` part."""
    part = {
        "type": "input_audio",
        "input_audio": {"data": base64.b64encode(sound).decode(), "format": fmt},
    }
    back = client.chat.completions.create(
        model="emulator/echo",
        messages=[{"role": "user", "content": [{"type": "text", "text": "x"}, part]}],  # type: ignore[list-item]
    )
    assert back.usage is not None and back.usage.prompt_tokens_details is not None
    return back.usage.prompt_tokens_details.audio_tokens or 0


def test_flac_is_the_wavs_samples_a_decoder_reads_back(client: openai.OpenAI) -> None:
    """FLAC: the tone of the WAV answer, sample for sample (libsndfile decodes it); sent
    back, its length is read from its header (32 prompt tokens a second)."""
    _, wav_sound, _ = heard(client, **speak("wav"))
    _, flac_sound, _ = heard(client, **speak("flac"))
    assert flac_sound[:4] == b"fLaC"
    decoded, rate = soundfile.read(io.BytesIO(flac_sound), dtype="int16")
    expected, wav_rate = soundfile.read(io.BytesIO(wav_sound), dtype="int16")
    assert (rate, wav_rate) == (24_000, 24_000)
    assert decoded.tobytes() == expected.tobytes() and len(decoded) > 0
    assert sent_back(client, flac_sound, "flac") == -(-len(decoded) * 1000 // 24_000 * 32 // 1000)


def test_opus_is_silence_in_ogg_of_the_sounds_length(client: openai.OpenAI) -> None:
    _, wav_sound, _ = heard(client, **speak("wav"))
    _, opus_sound, _ = heard(client, **speak("opus"))
    assert opus_sound[:4] == b"OggS" and opus_sound[28:36] == b"OpusHead"
    decoded, rate = soundfile.read(io.BytesIO(opus_sound), dtype="int16")
    seconds = (len(wav_sound) - 44) / 2 / 24_000  # the WAV's samples after its header
    assert len(decoded) / rate == pytest.approx(seconds, abs=0.02)
    assert not decoded.any()  # silence
    ms = round(seconds * 1000)
    assert sent_back(client, opus_sound, "opus") == -(-ms * 32 // 1000)
    assert sent_back(client, opus_sound, "ogg") == -(-ms * 32 // 1000)


def test_max_tokens_bounds_the_transcript_and_the_sound_together(client: openai.OpenAI) -> None:
    transcript, _, chunks = heard(client, **speak(max_tokens=35))
    usage = chunks[-1].usage
    assert usage is not None and usage.completion_tokens == 35  # 5 of text, 30 of sound
    ended = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
    assert ended == "length" and transcript


def test_a_cut_stream_bills_the_sound_sent(tenant: Tenant) -> None:
    """Cut before its sound, an answer bills its transcript alone; whole, both."""
    body = speak(model="emulator/echo")
    with tenant.client() as http:
        whole = http.post("/chat/completions", json=body)
        lines = [line for line in whole.text.split("\n\n") if line.startswith("data: {")]
        first_sound = next(i for i, line in enumerate(lines) if '"data":"' in line)
        with tenant.client(headers={"X-Emulator-Fault": f"cut={first_sound}"}) as cut:
            served = cut.post("/chat/completions", json=body)
        assert served.status_code == 200 and '"data":"' not in served.text
        billed = http.get("/generation", params={"id": served.headers["X-Generation-Id"]})
        full = http.get("/generation", params={"id": whole.headers["X-Generation-Id"]})
    text_tokens = billed.json()["data"]["tokens_completion"]
    assert text_tokens > 0
    assert full.json()["data"]["tokens_completion"] == (1 + PER_TEXT_TOKEN) * text_tokens


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"stream": False}, "stream"),
        ({"audio": None}, "audio"),
        ({"audio": {"voice": "alloy", "format": "aac"}}, "audio.format"),
        ({"modalities": ["text", "audio", "image"]}, "modalities"),
        ({"audio": {"voice": "alloy", "format": "ogg"}}, "audio.format"),
    ],
)
def test_a_bad_audio_request_is_400_naming_the_field(
    tenant: Tenant, change: dict[str, Any], param: str
) -> None:
    body = {k: v for k, v in {**speak(), **change}.items() if v is not None}
    if not body.get("stream"):
        body.pop("stream_options")
    with tenant.client() as http:
        refused = http.post("/chat/completions", json=body)
    assert assert_error(refused, 400, "invalid_request")["param"] == param


def test_a_model_that_cannot_speak_has_no_route(tenant: Tenant) -> None:
    with tenant.client() as http:
        refused = http.post("/chat/completions", json=speak(model="openai/gpt-4o-mini"))
        other_format = http.post(
            "/chat/completions",
            json=speak(model="emulator/echo", provider={"only": ["emulator-messages"]}),
        )
        listed = http.get("/models", params={"output_modalities": "audio"}).json()["data"]
    error = assert_error(refused, 503, "no_route_available")
    assert error["param"] == "modalities" and '"audio"' in error["message"]
    assert "chat format" in assert_error(other_format, 503, "no_route_available")["message"]
    assert {m["id"] for m in listed} == {AUDIO_MODEL, "emulator/echo", "emulator/echo:free"}


def test_responses_asking_for_audio_is_told_to_use_chat(tenant: Tenant) -> None:
    body = {"model": AUDIO_MODEL, "input": "Say hi", "modalities": ["text", "audio"]}
    with tenant.client() as http:
        refused = http.post("/responses", json=body)
    assert "delta.audio" in assert_error(refused, 400, "invalid_request")["message"]


def test_the_hold_covers_the_sound(emulator: EmulatorHandle, tenant: Tenant) -> None:
    """The hold prices the whole output as sound: an account that could pay for the text
    alone is refused before the answer."""
    with tenant.client() as http:
        quoted = http.post("/ai-gateway/quote", json=speak(max_tokens=700))
    assert quoted.status_code == 200, quoted.text
    hold, estimate = quoted.json()["hold_micros"], quoted.json()["estimated_charge_micros"]
    assert hold >= 700 * 20 and hold >= estimate  # 700 tokens at 20 micros
    assert estimate > 600 * 20  # six sevenths of the output is sound
    short = emulator.create_tenant(balance_micros=hold - 1)
    with short.client() as http:
        refused = http.post("/chat/completions", json=speak(max_tokens=700))
        text_only = http.post(
            "/chat/completions",
            json={**speak(max_tokens=700), "modalities": ["text"], "audio": None},
        )
    assert_error(refused, 402, "insufficient_credits")
    assert text_only.status_code == 200, text_only.text


def test_the_auto_router_picks_a_model_that_speaks(client: openai.OpenAI) -> None:
    _, sound, chunks = heard(client, **speak(model="openrouter/auto"))
    assert chunks[0].model in {AUDIO_MODEL, "emulator/echo"} and sound


def test_the_catalog_prices_audio_output(tenant: Tenant) -> None:
    with tenant.client() as http:
        model = http.get(f"/models/{AUDIO_MODEL}").json()
    assert model["architecture"]["output_modalities"] == ["text", "audio"]
    assert model["pricing"]["audio_output"] == "0.00002"
    assert model["pricing"]["audio_output_micros_per_mtok"] == 20_000_000


def test_the_async_client_hears_the_same(
    emulator: EmulatorHandle, tenant: Tenant, client: openai.OpenAI
) -> None:
    async def main() -> bytes:
        async with openai.AsyncOpenAI(
            base_url=emulator.base_url, api_key=tenant.api_key, max_retries=0
        ) as async_client:
            stream = await async_client.chat.completions.create(**speak())
            sound = b""
            async for chunk in stream:
                for choice in chunk.choices:
                    if choice.delta.audio is not None and choice.delta.audio.data:
                        sound += base64.b64decode(choice.delta.audio.data)
            return sound

    assert asyncio.run(main()) == heard(client, **speak())[1]


def test_a_custom_voice_by_id_speaks_too(client: openai.OpenAI) -> None:
    custom = heard(client, **speak(audio={"voice": {"id": "voice_1234"}, "format": "wav"}))
    named = heard(client, **speak())
    assert custom[0] == named[0] and custom[1] and custom[1] != named[1]
