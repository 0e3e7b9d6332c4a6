"""The image an image model edits: the last one of the conversation (`Message.pictures`,
the user's or an earlier answer's sent back).

An edit keeps what the emulator can read of its source: its size, and the mean colour
of the visible pixels of its first row that has any, which becomes the top of the new
gradient (the prompt draws the rest): an edit of a PNG edit keeps the first picture's
top. Data URLs are read with Pillow; an http(s) URL (never fetched), an uploaded file's
id, or bytes no decoder reads, are known by their name alone: no size, and a top colour
drawn from it.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from emulator.gateway.canonical import Message
from emulator.gateway.images import decode_base64
from emulator.gateway.pictures import SIDES, Colour

_MOST_PIXELS = 4096 * 4096  # decoded for their colour; a larger image gives its size alone
_FORMATS = ("PNG", "JPEG", "WEBP", "GIF")  # the image types a prompt takes (`images`)


@dataclass(frozen=True)
class Source:
    """What an edit keeps of its image: a digest of it as sent, its size when read, and
    the colour along its top."""

    digest: bytes
    size: tuple[int, int] | None
    top: Colour


def last_picture(messages: Iterable[Message]) -> str | None:
    """The conversation's last image as sent, or None when it has none."""
    found = None
    for message in messages:
        if message.pictures:
            found = message.pictures[-1]
    return found


def last_source(messages: Iterable[Message]) -> Source | None:
    """What an edit keeps of the conversation's last image (None: it has none)."""
    picture = last_picture(messages)
    return None if picture is None else read(picture)


@lru_cache(maxsize=8)  # a test suite edits the same few images again and again
def read(picture: str) -> Source:
    digest = hashlib.sha256(picture.encode()).digest()
    named = Source(digest, None, (digest[0], digest[1], digest[2]))
    if not picture.startswith("data:"):
        return named
    data = decode_base64(picture.partition(",")[2])
    if not data:
        return named
    if data.lstrip()[:4] == b"<svg":  # an SVG the image tool drew (Pillow reads none)
        return _svg(data, named)
    from PIL import Image  # only for an edit: Pillow is slow to import

    unreadable = (OSError, ValueError, SyntaxError, EOFError, Image.DecompressionBombError)
    try:
        with Image.open(io.BytesIO(data), formats=_FORMATS) as image:
            width, height = image.size
            if width * height > _MOST_PIXELS:
                return Source(digest, (width, height), named.top)
            top = _top_colour(image.convert("RGBA"))
    except unreadable:  # bytes no decoder reads, or a bomb: a picture known by its name
        return named
    return Source(digest, (width, height), top or named.top)


def _svg(data: bytes, named: Source) -> Source:
    """An SVG's size (its `width` and `height`) and its gradient's first colour."""
    size = _SVG_SIZE.search(data)
    colour = _SVG_COLOUR.search(data)
    top = named.top if colour is None else _hex_colour(colour[1])
    sides = None if size is None else (int(size[1]), int(size[2]))
    return Source(named.digest, sides if sides and min(sides) > 0 else None, top)


def _hex_colour(hex_: bytes) -> Colour:
    red, green, blue = bytes.fromhex(hex_.decode())
    return red, green, blue


_SVG_SIZE = re.compile(rb'<svg[^>]*?\swidth="([0-9]{1,5})"\s+height="([0-9]{1,5})"')
_SVG_COLOUR = re.compile(rb'stop-color="#([0-9a-fA-F]{6})"')


def _top_colour(image: Any) -> Colour | None:
    """The mean colour of the visible pixels of the first row that has any (a clear
    picture's corners are not its colour)."""
    from PIL import ImageStat

    box = image.getchannel("A").getbbox()  # where any pixel is visible
    if box is None:
        return None
    row = image.crop((0, box[1], image.size[0], box[1] + 1))
    red, green, blue = (
        round(m) for m in ImageStat.Stat(row.convert("RGB"), row.getchannel("A")).mean
    )
    return red, green, blue


def fitted(size: tuple[int, int]) -> tuple[int, int]:
    """A source's size within the sides the emulator draws, its shape kept."""
    low, high = SIDES
    width, height = size
    scale = min(1.0, high / max(width, height))
    return (max(low, round(width * scale)), max(low, round(height * scale)))
