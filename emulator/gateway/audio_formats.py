"""Sound in the containers a player opens, written here (no encoder is needed):

- FLAC: the samples as they are (`VERBATIM` subframes: lossless, not compressed), 16-bit
  mono, in frames of 4,096 samples with their CRCs, behind a `STREAMINFO` that tells the
  rate and the number of samples (so a reader knows the length without decoding);
- Ogg Opus: silence of the length asked for, one 20 ms Opus frame a packet (the 3-byte
  silent CELT frame encoders emit for digital silence), 50 packets an Ogg page, the last
  page's granule position trimming it to the exact length (RFC 7845).

Both are deterministic: the same samples (or length) give the same bytes.
"""

from __future__ import annotations

import struct
from functools import lru_cache

FLAC_BLOCK = 4096  # samples a frame
_FLAC_RATE_CODES = {8000: 4, 16000: 5, 22050: 6, 24000: 7, 32000: 8, 44100: 9, 48000: 10}

OPUS_RATE = 48_000  # Opus's granule positions always count 48 kHz samples
OPUS_PRE_SKIP = 312  # samples a decoder drops at the start (libopus's usual look-ahead)
_OPUS_FRAME = 960  # 20 ms at 48 kHz
_OPUS_SILENCE = b"\xf8\xff\xfe"  # TOC: CELT fullband 20 ms, mono, one frame; then silence
_OPUS_PAGE_PACKETS = 50  # a second of sound a page
_OGG_SERIAL = 0x454D5500  # "EMU": one stream, so any fixed serial number does


def flac(samples: bytes, rate: int) -> bytes:
    """16-bit little-endian mono `samples` at `rate` (one of `_FLAC_RATE_CODES`) as FLAC."""
    count = len(samples) // 2
    fields = (rate << 44) | (0 << 41) | (15 << 36) | count  # mono, 16 bits a sample
    info = struct.pack(">HH", FLAC_BLOCK, FLAC_BLOCK) + bytes(6) + fields.to_bytes(8, "big")
    out = [b"fLaC", b"\x80\x00\x00\x22", info, bytes(16)]  # the last block; no MD5
    words = struct.unpack(f"<{count}h", samples[: count * 2])
    for number, start in enumerate(range(0, count, FLAC_BLOCK)):
        block = words[start : start + FLAC_BLOCK]
        head = bytes([0xFF, 0xF8, 0x70 | _FLAC_RATE_CODES[rate], 0x08])
        head += _utf8_number(number) + struct.pack(">H", len(block) - 1)
        frame = head + bytes([_crc8(head), 0x02]) + struct.pack(f">{len(block)}h", *block)
        out.append(frame + struct.pack(">H", _crc16(frame)))
    return b"".join(out)


def flac_length_ms(info: bytes) -> int | None:
    """A FLAC's length from its first 42 bytes (`fLaC` and `STREAMINFO`), when it says."""
    if len(info) < 26 or info[:4] != b"fLaC" or info[4] & 0x7F != 0:
        return None
    fields = int.from_bytes(info[18:26], "big")
    rate, count = fields >> 44, fields & (1 << 36) - 1
    return count * 1000 // rate if rate and count else None


def ogg_opus_silence(ms: int, input_rate: int) -> bytes:
    """`ms` of silence as an Ogg Opus file (`input_rate`: the rate it says it came from)."""
    head = b"OpusHead" + struct.pack("<BBHIhB", 1, 1, OPUS_PRE_SKIP, input_rate, 0, 0)
    vendor = b"emulator"
    tags = b"OpusTags" + struct.pack("<I", len(vendor)) + vendor + struct.pack("<I", 0)
    pages = [_ogg_page([head], 0, 0, 0x02), _ogg_page([tags], 0, 1, 0)]
    length = ms * OPUS_RATE // 1000
    packets = -(-(OPUS_PRE_SKIP + length) // _OPUS_FRAME)  # the pre-skip is decoded too
    for sequence, first in enumerate(range(0, packets, _OPUS_PAGE_PACKETS), start=2):
        done = min(first + _OPUS_PAGE_PACKETS, packets)
        last = done == packets
        # Samples decoded by the page's end; the last page's trims the sound to `ms`.
        granule = OPUS_PRE_SKIP + length if last else done * _OPUS_FRAME
        body = [_OPUS_SILENCE] * (done - first)
        pages.append(_ogg_page(body, granule, sequence, 0x04 if last else 0))
    return b"".join(pages)


def opus_length_ms(head: bytes, tail: bytes) -> int | None:
    """An Ogg Opus file's length from its first 40 bytes (`OpusHead`'s pre-skip) and its
    last bytes (the last page's granule position), when they are Opus's."""
    last = tail.rfind(b"OggS")
    if head[:4] != b"OggS" or head[28:36] != b"OpusHead" or last < 0 or len(tail) < last + 14:
        return None
    pre_skip = int.from_bytes(head[38:40], "little")
    granule = int.from_bytes(tail[last + 6 : last + 14], "little")
    return max(0, granule - pre_skip) * 1000 // OPUS_RATE


def _ogg_page(packets: list[bytes], granule: int, sequence: int, flags: int) -> bytes:
    """One Ogg page of whole packets, each under 255 bytes (one lacing value each)."""
    lacing = bytes(len(p) for p in packets)
    head = b"OggS" + struct.pack(
        "<BBqIIIB", 0, flags, granule, _OGG_SERIAL, sequence, 0, len(packets)
    )
    page = head + lacing + b"".join(packets)
    return page[:22] + struct.pack("<I", _ogg_crc(page)) + page[26:]


def _utf8_number(n: int) -> bytes:
    """A frame number as FLAC writes it: UTF-8's coding, extended to 36 bits."""
    if n < 0x80:
        return bytes([n])
    tail = []
    length = 2
    while n >= 1 << (5 * length + 1):  # a lead byte of `length` holds 7 - length bits
        length += 1
    for _ in range(length - 1):
        tail.append(0x80 | n & 0x3F)
        n >>= 6
    return bytes([(0xFF << (8 - length)) & 0xFF | n, *reversed(tail)])


@lru_cache(maxsize=1)
def _tables() -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """CRC-8 (poly 0x07) and CRC-16 (0x8005) of FLAC, CRC-32 (0x04C11DB7) of Ogg: MSB first."""

    def table(poly: int, bits: int) -> tuple[int, ...]:
        top, mask = 1 << (bits - 1), (1 << bits) - 1
        rows = []
        for byte in range(256):
            crc = byte << (bits - 8)
            for _ in range(8):
                crc = (crc << 1 ^ poly if crc & top else crc << 1) & mask
            rows.append(crc)
        return tuple(rows)

    return table(0x07, 8), table(0x8005, 16), table(0x04C11DB7, 32)


def _crc8(data: bytes) -> int:
    crc, table = 0, _tables()[0]
    for byte in data:
        crc = table[crc ^ byte]
    return crc


def _crc16(data: bytes) -> int:
    crc, table = 0, _tables()[1]
    for byte in data:
        crc = (crc << 8 & 0xFFFF) ^ table[(crc >> 8) ^ byte]
    return crc


def _ogg_crc(data: bytes) -> int:
    crc, table = 0, _tables()[2]
    for byte in data:
        crc = (crc << 8 & 0xFFFFFFFF) ^ table[(crc >> 24) ^ byte]
    return crc
