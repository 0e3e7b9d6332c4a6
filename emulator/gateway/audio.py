"""Audio in prompts (`input_audio` parts): how long a clip lasts and what it costs.

Nothing is heard. A clip's length is read from its bytes as a player reads it:

- `wav`: the `fmt ` chunk's byte rate and the `data` chunk's size (the bytes
  present when the header claims more, or claims none, as streamed WAVs do);
- `mp3`: the first frame's bitrate over the bytes after any ID3 tag, as for a
  constant-bitrate file (a variable-bitrate file's length is an estimate);
- `pcm16` and `pcm24`: raw samples, mono at 24 kHz (OpenAI's `pcm16`);
- `flac`: its `STREAMINFO`'s sample count over its rate; `ogg` and `opus` (Ogg
  Opus): its last page's granule position, less its pre-skip (`audio_formats`);
  either estimated as below when it does not say;
- any other format (`m4a`, `aac`, `aiff`, Ogg Vorbis, ...; which a provider
  takes varies, so any name is taken): estimated at 128 kbit/s.

`wav`, `mp3`, `flac`, `ogg` and `opus` data must be of that format (a client that names
the wrong one gets a 400, as a provider would refuse to decode it). A clip costs
32 prompt tokens a second (Gemini's rate), rounded up, in every tokenizer family,
billed as prompt tokens (as an image's are). Only the headers' bytes (and an Ogg file's
last page) are decoded.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Iterable
from typing import Any

from emulator.gateway import audio_formats
from emulator.gateway.canonical import AudioClip, Message, Request

TOKENS_PER_SECOND = 32
_ESTIMATE_BYTES_PER_MS = 16  # 128 kbit/s
_RAW_BYTES_PER_MS = {"pcm16": 48, "pcm24": 72}  # mono, 24 kHz
_MAGIC = {"flac": (0, b"fLaC"), "ogg": (0, b"OggS"), "opus": (0, b"OggS")}
_OGG_TAIL = 65_536  # bytes read from the end for the last page (a page is at most 65,307)
# MPEG audio layer III bitrates (kbit/s) by bitrate index: MPEG-1, then MPEG-2 and 2.5.
_MP3_KBPS = {
    3: (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
    2: (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}
_MP3_KBPS[0] = _MP3_KBPS[2]
_MP3_SYNC_SEARCH = 4096  # bytes after the tag where the first frame may start
_WAV_CHUNKS = 64  # read before `data` (a few in a real file): a bound on the walk


def clip(data: str, fmt: str) -> AudioClip:
    """A part's audio, measured; raises ValueError (a 400 naming the data) when the
    data is not of its `format`. `data` is valid base64 (the schema checked it)."""
    return AudioClip(fmt, length_ms(data, fmt.lower()), data)


def length_ms(data: str, fmt: str) -> int:
    size = _size(data)
    if fmt == "wav":
        return _wav_ms(data, size)
    if fmt == "mp3":
        return _mp3_ms(data, size)
    if fmt in _MAGIC:
        at, magic = _MAGIC[fmt]
        if _slice(data, at, len(magic)) != magic:
            raise ValueError(f"`input_audio.data` is not {fmt.upper()} audio (`format` {fmt!r})")
        told = _told_ms(data, size, fmt)
        if told is not None:
            return told
    return size // _RAW_BYTES_PER_MS.get(fmt, _ESTIMATE_BYTES_PER_MS)


def _told_ms(data: str, size: int, fmt: str) -> int | None:
    """The length a FLAC's or an Ogg Opus's headers tell (None: they do not)."""
    if fmt == "flac":
        return audio_formats.flac_length_ms(_slice(data, 0, 26))
    start = max(0, size - _OGG_TAIL)
    return audio_formats.opus_length_ms(_slice(data, 0, 40), _slice(data, start, size - start))


def tokens(ms: int) -> int:
    return (ms * TOKENS_PER_SECOND + 999) // 1000


def message_tokens(message: Message) -> int:
    return sum(tokens(c.ms) for c in message.audio)


def clips(messages: Iterable[Message]) -> list[AudioClip]:
    return [c for m in messages for c in m.audio]


def prompt_tokens(request: Request) -> int:
    """The prompt tokens of the request's audio (`prompt_tokens_details.audio_tokens`)."""
    return sum(message_tokens(m) for m in request.messages if m.audio)


def key(request: Request) -> str:
    """What the request's audio adds to the key of its answer's generator: nothing
    without audio (those answers keep their bytes), else the clips' digests."""
    heard = clips(request.messages)
    return "".join(f"|audio:{digest(c.data)}" for c in heard)


@functools.lru_cache(maxsize=64)  # a str keeps its hash: a repeated clip is not re-read
def digest(data: str) -> str:
    return hashlib.blake2b(data.encode(), digest_size=12).hexdigest()


def part(c: AudioClip) -> dict[str, Any]:
    """The clip as the chat and responses formats carry it to a provider."""
    return {"type": "input_audio", "input_audio": {"data": c.data, "format": c.format}}


def _size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")


def _slice(data: str, start: int, n: int) -> bytes:
    """Bytes `start` to `start + n` of base64 `data`, decoding only their quads."""
    first = start // 3
    chunk = base64.b64decode(data[first * 4 : (start + n + 2) // 3 * 4])
    return chunk[start - first * 3 : start - first * 3 + n]


def _wav_ms(data: str, size: int) -> int:
    head = _slice(data, 0, 12)
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise ValueError("`input_audio.data` is not a WAV file (`format` 'wav'): no RIFF header")
    at, byte_rate = 12, 0
    for _ in range(_WAV_CHUNKS):
        if at + 8 > size:
            break
        chunk = _slice(data, at, 8)
        name, length = chunk[:4], int.from_bytes(chunk[4:], "little")
        if name == b"fmt " and length >= 12:
            byte_rate = int.from_bytes(_slice(data, at + 16, 4), "little")
        elif name == b"data":
            if not byte_rate:
                break
            present = size - at - 8
            length = present if length in (0, 0xFFFFFFFF) else min(length, present)
            return length * 1000 // byte_rate
        at += 8 + length + (length & 1)  # chunks are padded to an even length
    raise ValueError(
        "`input_audio.data` is not a playable WAV file (`format` 'wav'): it needs a "
        f"`fmt ` chunk with a byte rate before its `data` chunk, among its first {_WAV_CHUNKS}"
    )


def _mp3_ms(data: str, size: int) -> int:
    start = 0
    tag = _slice(data, 0, 10)
    if tag[:3] == b"ID3" and len(tag) == 10:  # ID3v2: a syncsafe size, then the frames
        footer = 10 if tag[5] & 16 else 0
        start = 10 + (tag[6] << 21 | tag[7] << 14 | tag[8] << 7 | tag[9]) + footer
    window = _slice(data, start, _MP3_SYNC_SEARCH) if start < size else b""
    for i in range(len(window) - 3):
        if window[i] != 0xFF or window[i + 1] & 0xE0 != 0xE0:
            continue
        flags, index = window[i + 1], window[i + 2] >> 4
        version, layer = (flags >> 3) & 3, (flags >> 1) & 3
        if version == 1 or layer != 1 or index in (0, 15):  # reserved, not layer III, free
            continue
        kbps = _MP3_KBPS[version][index]
        return (size - start - i) * 8 // kbps
    raise ValueError(
        "`input_audio.data` is not an MP3 file (`format` 'mp3'): no MPEG layer III frame"
    )
