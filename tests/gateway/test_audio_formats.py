"""The FLAC and Ogg Opus the emulator writes (`gateway.audio_formats`), read back by a
real decoder (libsndfile, through `soundfile`) and by the emulator's own measure."""

from __future__ import annotations

import io
import math
import struct

import pytest
import soundfile

from emulator.gateway.audio_formats import (
    FLAC_BLOCK,
    _utf8_number,
    flac,
    flac_length_ms,
    ogg_opus_silence,
    opus_length_ms,
)


def tone(count: int) -> bytes:
    wave = [round(12000 * math.sin(i / 7) + 3000 * math.sin(i / 3.1)) for i in range(count)]
    return struct.pack(f"<{count}h", *wave)


@pytest.mark.parametrize("count", [1, FLAC_BLOCK, 130 * FLAC_BLOCK + 17])
def test_flac_decodes_to_the_same_samples(count: int) -> None:
    """130 frames: frame numbers past 127 take two bytes; the last frame is short."""
    samples = tone(count)
    written = flac(samples, 24_000)
    decoded, rate = soundfile.read(io.BytesIO(written), dtype="int16")
    assert rate == 24_000 and decoded.tobytes() == samples
    assert flac_length_ms(written[:26]) == count * 1000 // 24_000


def test_flac_frame_numbers_are_utf8_coded() -> None:
    assert [_utf8_number(n) for n in (0, 0x7F, 0x80, 0x7FF, 0x800)] == [
        b"\x00", b"\x7f", b"\xc2\x80", b"\xdf\xbf", b"\xe0\xa0\x80"
    ]  # fmt: skip
    assert _utf8_number(0x10000) == "\U00010000".encode()


@pytest.mark.parametrize("ms", [20, 1000, 3041, 61_000])
def test_ogg_opus_silence_lasts_what_was_asked(ms: int) -> None:
    written = ogg_opus_silence(ms, 24_000)
    assert opus_length_ms(written[:40], written[-65_536:]) == ms
    decoded, rate = soundfile.read(io.BytesIO(written), dtype="int16")
    assert len(decoded) / rate == pytest.approx(ms / 1000, abs=0.01)
    assert not decoded.any()
    assert ogg_opus_silence(ms, 24_000) == written  # the same bytes every time


def test_other_data_is_not_measured_as_either() -> None:
    assert flac_length_ms(b"fLaC") is None
    assert opus_length_ms(b"OggS" + bytes(40), b"OggS" + bytes(20)) is None
