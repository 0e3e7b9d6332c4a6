"""Audio in answers: OpenRouter's audio output through chat completions.

A request with `audio` among its `modalities` names its `audio` (`voice`,
`format`) and streams (OpenRouter: "Audio output requires streaming";
`check_streamed`); it is
served only by a model with `audio` among its `output_modalities` (fixtures), on
a provider of the chat format. The answer's text is then its transcript: streamed
in `delta.audio.transcript` (the first with the audio's `id`), then its audio in
`delta.audio.data` (base64, a second of sound a chunk), then the audio's
`expires_at`; `content` stays null.

The sound lasts 0.3 s per token of transcript (about 200 tokens a minute, as
speech goes), and costs `TOKENS_PER_SECOND` output tokens a second (OpenAI's
rate: a token per 50 ms), six per token of transcript, all counted in
`completion_tokens` (`completion_tokens_details.audio_tokens`) and priced at the
route's `audio_output_micros_per_mtok`. `max_tokens` bounds the whole: the
transcript gets a seventh of it. `pcm16` is raw 16-bit mono samples at 24 kHz
(OpenAI's), `wav` the same behind a WAV header: a tone a token, its pitch drawn
from the token's place, the voice and the transcript (the same request gives the
same bytes), `flac` the same samples losslessly in FLAC (`audio_formats`). `mp3`
is silence of the same length in MPEG-1 layer III frames (128 kbit/s, 48 kHz), and
`opus` silence in Ogg Opus: a lossy encoder is beyond the emulator. `aac` is
refused (400 naming `audio.format`).
"""

from __future__ import annotations

import base64
import hashlib
import math
import struct
import zlib
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from emulator.errors import InvalidRequest
from emulator.gateway import audio_formats
from emulator.gateway.canonical import AudioDelta, AudioOutput, Completion

TOKENS_PER_SECOND = 20
SECONDS_PER_TEXT_TOKEN = 0.3  # of sound: about 200 tokens a minute, as speech goes
PER_TEXT_TOKEN = round(TOKENS_PER_SECOND * SECONDS_PER_TEXT_TOKEN)  # audio tokens: 6
FORMATS = ("wav", "mp3", "pcm16", "flac", "opus")
RATE = 24_000  # samples a second, mono, 16-bit (pcm16 and wav)
_TOKEN_SAMPLES = RATE * 3 // 10  # 0.3 s of sound a token of transcript
_TONE_SAMPLES = RATE * 24 // 100  # of which a tone, then silence
# Periods (in samples) that divide the tone's length: 300, 250, 200, 150, 133, 125, 100 Hz
_PERIODS = (80, 96, 120, 160, 180, 192, 240)
_CHUNK = 48_000  # bytes of sound a `delta.audio.data` (a multiple of 3: no base64 padding)
EXPIRES_S = 3600  # `expires_at`: an hour after the answer, as OpenAI keeps it
# MPEG-1 layer III, 128 kbit/s, 48 kHz, mono, no CRC: a frame is 384 bytes and 24 ms.
_MP3_HEADER = b"\xff\xfb\x94\xc0"
_MP3_FRAME = _MP3_HEADER + bytes(380)  # side information and main data zero: silence
_MP3_FRAME_MS = 24


def asked(body: dict[str, Any]) -> AudioOutput | None:
    """The audio a chat body asks for: `audio` among its `modalities`, with its `audio`
    settings (their values checked by the body's schema; the stream by
    `check_streamed`)."""
    if "audio" not in (body.get("modalities") or ()):
        return None
    if "image" in body["modalities"]:
        raise InvalidRequest(
            "`modalities` asks for both image and audio: no model answers with both. Ask "
            "for one of them.",
            param="modalities",
        )
    settings = body.get("audio")
    if settings is None:
        raise InvalidRequest(
            "`audio` is required when `modalities` has `audio`: send its `voice` and `format`.",
            param="audio",
        )
    if settings["format"] not in FORMATS:
        raise InvalidRequest(
            f"Audio format {settings['format']!r} is not supported by the emulator's "
            f"audio models; use one of {', '.join(FORMATS)}.",
            param="audio.format",
        )
    voice = settings["voice"]
    name = voice if isinstance(voice, str) else str(voice.get("id", ""))
    return AudioOutput(name, settings["format"])


def check_streamed(body: dict[str, Any]) -> None:
    """A client's request for sound streams (OpenRouter's rule; a provider's own request
    is not checked: the gateway asks it for a whole answer to count its prompt)."""
    if "audio" in (body.get("modalities") or ()) and not body.get("stream"):
        raise InvalidRequest(
            "Audio output requires streaming: send `stream: true`.", param="stream"
        )


def wire_fields(wanted: AudioOutput) -> dict[str, Any]:
    """The chat body's fields that ask for `wanted` (to a chat provider)."""
    return {
        "modalities": ["text", "audio"],
        "audio": {"voice": wanted.voice, "format": wanted.format},
    }


def text_budget(max_tokens: int) -> int:
    """Of `max_tokens`, which bounds text and sound together, the transcript's share."""
    return max(1, max_tokens // (1 + PER_TEXT_TOKEN))


def share_of(output_tokens: int) -> int:
    """Of an answer's output tokens, its sound's (a quote's estimate)."""
    return output_tokens - output_tokens // (1 + PER_TEXT_TOKEN)


def tokens_of(text_tokens: int) -> int:
    """The audio tokens of a transcript of `text_tokens`."""
    return PER_TEXT_TOKEN * text_tokens


def attach(completion: Completion, wanted: AudioOutput, text_tokens: int) -> None:
    """The answer's sound, and its tokens among the output's."""
    completion.audio_out = wanted
    completion.audio_tokens = tokens_of(text_tokens)
    completion.output_tokens += completion.audio_tokens


def deltas(completion: Completion, pieces: list[str], choice: int) -> Iterator[AudioDelta]:
    """The stream of one answer's sound: its transcript's pieces (the first with the
    sound's id), its data a second a chunk, then its end."""
    assert completion.audio_out is not None
    text = completion.text or ""
    audio_id = "audio_" + hashlib.sha256(f"{choice}\n{text}".encode()).hexdigest()[:24]
    yield AudioDelta(choice, audio_id, pieces[0] if pieces else "")
    for piece in pieces[1:]:
        yield AudioDelta(choice, transcript=piece)
    sound = encoded(completion.audio_out, text, completion.audio_tokens)
    for at in range(0, len(sound), _CHUNK):
        yield AudioDelta(choice, data=base64.b64encode(sound[at : at + _CHUNK]).decode("ascii"))
    yield AudioDelta(choice, audio_id, ends=True)


def wire_piece(delta: AudioDelta, created: int) -> dict[str, Any]:
    """A chunk's `delta.audio` (OpenAI's shape)."""
    if delta.ends:
        return {"id": delta.id, "expires_at": created + EXPIRES_S}
    if delta.data:
        return {"data": delta.data}
    piece = {"transcript": delta.transcript}
    return piece if delta.id is None else {"id": delta.id, **piece}


def parsed_piece(piece: dict[str, Any], choice: int) -> AudioDelta:
    """A chunk's `delta.audio`, read back."""
    if "expires_at" in piece:
        return AudioDelta(choice, piece.get("id"), ends=True)
    if piece.get("data"):
        return AudioDelta(choice, data=piece["data"])
    return AudioDelta(choice, piece.get("id"), piece.get("transcript") or "")


def encoded(wanted: AudioOutput, transcript: str, audio_tokens: int) -> bytes:
    """The sound of a transcript whose audio costs `audio_tokens`, in `wanted.format`."""
    spoken = audio_tokens // PER_TEXT_TOKEN  # the transcript's tokens
    if wanted.format == "mp3":
        frames = math.ceil(spoken * 300 / _MP3_FRAME_MS)
        return _MP3_FRAME * frames
    if wanted.format == "opus":
        return audio_formats.ogg_opus_silence(spoken * 300, RATE)
    samples = _samples(wanted.voice, transcript, spoken)
    if wanted.format == "pcm16":
        return samples
    if wanted.format == "flac":
        return audio_formats.flac(samples, RATE)
    return _wav_header(len(samples)) + samples


def _samples(voice: str, transcript: str, spoken: int) -> bytes:
    """A tone for each token of transcript, then a pause; its pitch drawn from the
    voice, the transcript and the token's place."""
    seed = zlib.crc32(f"{voice}\n{transcript}".encode())
    pause = bytes(2 * (_TOKEN_SAMPLES - _TONE_SAMPLES))
    parts = []
    for place in range(spoken):
        period = _PERIODS[(seed >> (place % 24) ^ place * 7) % len(_PERIODS)]
        parts.append(_tone(period) + pause)
    return b"".join(parts)


@lru_cache(maxsize=len(_PERIODS))
def _tone(period: int) -> bytes:
    """A sine of `period` samples, at a quarter of full scale, for a tone's length."""
    wave = [round(8192 * math.sin(2 * math.pi * i / period)) for i in range(period)]
    return struct.pack(f"<{period}h", *wave) * (_TONE_SAMPLES // period)


def _wav_header(data_size: int) -> bytes:
    byte_rate = RATE * 2
    return (
        b"RIFF"
        + struct.pack("<I", 36 + data_size)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, RATE, byte_rate, 2, 16)
        + b"data"
        + struct.pack("<I", data_size)
    )
