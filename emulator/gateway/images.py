"""Images in a prompt, as the providers check them before reading one.

An image is an http(s) URL (never fetched: the emulator has no network) or base64
data of a type the providers read, whose bytes begin as that type's do. Anything
else is refused up front, as the real APIs refuse it, and never billed.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from emulator.bodies import HTTP_URL

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")

_MAGIC = {
    "image/jpeg": b"\xff\xd8\xff",
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/gif": b"GIF8",
}
_DATA_URL = re.compile(r"data:([^;,]*)(;base64)?,(.*)", re.DOTALL)


def is_image(data: bytes, media_type: str) -> bool:
    """Whether `data` starts as an image of `media_type` does (its magic bytes)."""
    if media_type == "image/webp":
        return data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    return data.startswith(_MAGIC[media_type])


def decode_base64(data: str) -> bytes | None:
    """The bytes base64 `data` holds, or None if it is not base64."""
    try:
        return base64.b64decode(data, validate=True)
    except binascii.Error:
        return None


def check_image_result(result: Any) -> None:
    """An image generation call's `result` sent back: base64 of an image."""
    data = decode_base64(result) if isinstance(result, str) else None
    svg = data is not None and data.lstrip()[:4] == b"<svg"  # the tool draws SVG too
    if data is None or not (svg or any(is_image(data, kind) for kind in IMAGE_TYPES)):
        raise ValueError(
            "an image_generation_call's `result` must be the image in base64 (PNG, JPEG, "
            "WebP, GIF or SVG), as the answer gave it"
        )


def check_image_url(url: str) -> None:
    """An OpenAI image URL: http(s), or a base64 data URL of an image, in OpenAI's words."""
    if re.match(HTTP_URL, url):  # a host, no whitespace: as every media URL here
        return
    found = _DATA_URL.fullmatch(url)
    if found is None:
        raise ValueError(
            "Invalid image URL: expected an http(s) URL or a base64-encoded data URL "
            "of an image (e.g. 'data:image/png;base64,iVBORw0KGgo...')"
        )
    media_type, is_base64, data = found.groups()
    if media_type not in IMAGE_TYPES:
        allowed = ", ".join(IMAGE_TYPES)
        raise ValueError(
            f"Invalid image URL: unsupported MIME type {media_type!r}; use one of {allowed}"
        )
    image = decode_base64(data) if is_base64 else None
    if image is None:
        raise ValueError("Invalid base64 image_url: the data URL needs `;base64,` and base64")
    if not is_image(image, media_type):
        raise ValueError(f"Invalid image data: the data is not an image of type {media_type}")
