"""How long a clip lasts, read from its bytes as a player reads them (`gateway.audio`)."""

from __future__ import annotations

import base64
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.gateway import audio


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def chunk(name: bytes, body: bytes, size: int | None = None) -> bytes:
    padded = body + (b"\0" if len(body) % 2 else b"")
    return name + struct.pack("<I", len(body) if size is None else size) + padded


def riff(*chunks: bytes) -> bytes:
    body = b"WAVE" + b"".join(chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


# PCM, stereo, 44.1 kHz, 16-bit: 176,400 bytes a second.
FMT = chunk(b"fmt ", struct.pack("<HHIIHH", 1, 2, 44100, 176400, 4, 16))


def test_a_wav_is_measured_past_other_chunks_by_its_data_chunk() -> None:
    listed = chunk(b"LIST", b"INFOISFT" + b"x" * 33)  # odd: padded to an even length
    data = riff(FMT, listed, chunk(b"data", bytes(176400 * 3)))
    assert audio.length_ms(b64(data), "wav") == 3000


@pytest.mark.parametrize("claimed", [0, 0xFFFFFFFF, 176400 * 10])
def test_a_wav_header_that_claims_no_length_or_too_much_counts_the_bytes_present(
    claimed: int,
) -> None:
    data = riff(FMT, chunk(b"data", bytes(176400 // 2), size=claimed))
    assert audio.length_ms(b64(data), "wav") == 500


def test_a_wav_s_data_may_be_its_64th_chunk() -> None:
    data = riff(FMT, *[chunk(b"LIST", b"")] * 62, chunk(b"data", bytes(176400)))
    assert audio.length_ms(b64(data), "wav") == 1000


def test_a_wav_header_that_claims_less_than_present_is_believed() -> None:
    data = riff(FMT, chunk(b"data", bytes(176400), size=176400 // 4))
    assert audio.length_ms(b64(data), "wav") == 250


@pytest.mark.parametrize(
    "data",
    [
        b"RIFX" + bytes(40),
        riff(chunk(b"data", bytes(100))),
        riff(FMT),
        riff(FMT, *[chunk(b"LIST", b"")] * 63, chunk(b"data", bytes(100))),
    ],
    ids=["not-riff", "data-before-fmt", "no-data", "data-past-64-chunks"],
)
def test_a_wav_without_what_a_player_needs_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError, match="WAV"):
        audio.length_ms(b64(data), "wav")


def test_an_mp3_skips_its_tag_and_junk_and_reads_its_first_frame_bitrate() -> None:
    # ID3v2.4 with a footer (flag 0x10): 10 + 300 + 10 bytes; then two junk bytes; then an
    # MPEG-2 layer III frame at 64 kbit/s (index 8): 8,000 bytes a second.
    size = bytes([0, 0, 2, 44])  # syncsafe 300
    tag = b"ID3\x04\x00\x10" + size + bytes(300) + b"3DI" + bytes(7)
    frames = b"\xff\xf3\x80\x00" + bytes(7996)
    assert audio.length_ms(b64(tag + b"\x00\xff" + frames), "mp3") == 1000


@pytest.mark.parametrize(
    "header",
    [b"\xff\xfd\x90\x00", b"\xff\xfb\xf0\x00", b"\xff\xfb\x00\x00", b"\xff\xeb\x90\x00"],
    ids=["layer-ii", "bad-bitrate", "free-bitrate", "reserved-version"],
)
def test_an_mp3_without_a_layer_iii_frame_of_known_bitrate_is_refused(header: bytes) -> None:
    with pytest.raises(ValueError, match="MP3"):
        audio.length_ms(b64(header + bytes(100)), "mp3")


def test_raw_and_unknown_formats_are_measured_by_their_size() -> None:
    assert audio.length_ms(b64(bytes(72000)), "pcm24") == 1000
    assert audio.length_ms(b64(bytes(8000)), "aac") == 500  # 128 kbit/s
    assert audio.tokens(500) == 16 and audio.tokens(1) == 1 and audio.tokens(0) == 0


@given(st.binary(max_size=200), st.integers(0, 220), st.integers(0, 50))
def test_a_slice_decodes_only_what_it_is_asked_for(data: bytes, start: int, n: int) -> None:
    assert audio._slice(b64(data), start, n) == data[start : start + n]
