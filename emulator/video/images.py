"""Input images: base64 (or a data URL) of a PNG, JPEG or WebP, or an http(s) URL."""

from __future__ import annotations

import base64
import binascii
import re

from emulator.bodies import HTTP_URL, MAX_URL_CHARS
from emulator.errors import ValidationFailed

MAX_IMAGE_BYTES = 10 * 1024 * 1024
# A data URL's stated type must be one of these, and its bytes must be that format.
IMAGE_TYPES = {"image/png": "png", "image/jpeg": "jpeg", "image/webp": "webp"}
_URL = re.compile(HTTP_URL)


def image_format(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def check_image(value: str, param: str) -> str:
    """The image's format (`png`, `jpeg`, `webp`, or `url`), or a 422 naming `param`."""
    text = value.strip()
    if text.startswith(("http://", "https://")):
        if len(text) > MAX_URL_CHARS or not _URL.match(text):
            raise _bad(param, "a URL needs a host, no whitespace and at most 2,000 characters")
        return "url"
    media_type, payload = base64_payload(text)
    if payload is None:
        raise _bad(param, "a data URL must be base64 (data:image/png;base64,...)")
    if media_type is not None and media_type not in IMAGE_TYPES:
        allowed = ", ".join(IMAGE_TYPES)
        raise _bad(param, f"unsupported MIME type {media_type!r} in the data URL; use {allowed}")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _bad(param, "not valid base64") from exc
    if len(data) > MAX_IMAGE_BYTES:
        raise _bad(param, f"larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MiB")
    found = image_format(data)
    if found is None:
        raise _bad(param, "the decoded bytes are not a PNG, JPEG or WebP image")
    if media_type is not None and IMAGE_TYPES[media_type] != found:
        raise _bad(param, f"the data is not an image of type {media_type} (it is a {found})")
    return found


def base64_payload(text: str) -> tuple[str | None, str | None]:
    """The media type a data URL states (None for plain base64) and its base64; the
    base64 is None for a data URL that is not base64 (`data:image/png,...`)."""
    if not text.startswith("data:"):
        return None, text
    header, _, payload = text.partition(",")
    media_type = header[len("data:") :].split(";")[0].strip().lower()
    return media_type, payload if header.endswith(";base64") else None


def _bad(param: str, why: str) -> ValidationFailed:
    return ValidationFailed(
        f"`{param}`: {why}. Send the base64 of a PNG, JPEG or WebP image, or an https URL.",
        param=param,
        code="invalid_image",
    )
