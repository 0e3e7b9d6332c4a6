"""GET and HEAD /media/{file}: a job's output, with HTTP range requests so players can seek;
and /media/images/{file}: a picture the gateway's image generation tool drew (`image_tool`).

Media URLs are capability URLs, like a storage service's signed links: whoever
has one can fetch it, no API key needed (a `<video src>` sends none).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Final, Literal

from litestar import Controller, MediaType, Request, Response, get, head
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath

from emulator.errors import error_envelope
from emulator.gateway.image_tool import picture_named
from emulator.gateway.pictures import encode
from emulator.media.clips import job_media
from emulator.openapi_answers import refusals
from emulator.web import auth_opt, runtime_of

# One range-spec: `a-b`, `a-` or `-n`, ASCII digits (a regex \d is any Unicode digit).
_SPEC = re.compile(r"([0-9]*)-([0-9]*)")
_HUGE = 10**18  # stands for any offset of more digits than int() should parse
MP4: Final = "video/mp4"  # what the document says a media file is (every clip is one)
PICTURE: Final = "image/*"  # a picture drawn: PNG, JPEG or WebP, as its name says
WHOLE: Final = "whole"  # `_span`'s answer when the Range header is to be ignored


def _file(description: str, media_type: str) -> ResponseSpec:
    return ResponseSpec(
        data_container=bytes,
        media_type=media_type,
        description=description,
        generate_examples=False,
    )


def _answers(media_type: str) -> dict[int, ResponseSpec]:
    """A file whole, a range of it, or nothing new (`If-None-Match`); a range past its end."""
    return {
        200: _file("The file", media_type),
        206: _file("The `Range` asked for (`Content-Range` says which bytes)", media_type),
        304: ResponseSpec(data_container=None, description="Unchanged since the `ETag` sent"),
        **refusals(416),
    }


FILE_ANSWERS = _answers(MP4)
IMAGE_ANSWERS = _answers(PICTURE)


class MediaController(Controller):
    path = "/media"
    tags = ["Media"]
    opt = auth_opt("optional")

    @get(
        "/{file_name:str}",
        summary="A job's output file (supports Range requests)",
        media_type=MP4,
        responses=FILE_ANSWERS,
    )
    async def fetch(
        self, request: Request[Any, Any, Any], file_name: FromPath[str]
    ) -> Response[Any]:
        return media_response(request, file_name)

    @head(
        "/{file_name:str}",
        summary="A job's output file's headers: GET's answer, without the body",
        media_type=MP4,
        responses=FILE_ANSWERS,
    )
    async def probe(
        self, request: Request[Any, Any, Any], file_name: FromPath[str]
    ) -> Response[None]:
        return media_response(request, file_name, with_body=False)

    @get(
        "/images/{file_name:str}",
        summary="A picture the image generation tool drew (`openrouter:image_generation`)",
        media_type=PICTURE,
        responses=IMAGE_ANSWERS,
    )
    async def picture(
        self, request: Request[Any, Any, Any], file_name: FromPath[str]
    ) -> Response[Any]:
        return picture_response(request, file_name)

    @head(
        "/images/{file_name:str}",
        summary="A drawn picture's headers: GET's answer, without the body",
        media_type=PICTURE,
        responses=IMAGE_ANSWERS,
    )
    async def probe_picture(
        self, request: Request[Any, Any, Any], file_name: FromPath[str]
    ) -> Response[None]:
        return picture_response(request, file_name, with_body=False)


def media_response(
    request: Request[Any, Any, Any], file_name: str, *, with_body: bool = True
) -> Response[Any]:
    """A job's output file (`file_response`)."""
    clip, data = job_media(runtime_of(request), file_name)
    return file_response(request, data, clip.content_type, with_body=with_body)


def picture_response(
    request: Request[Any, Any, Any], file_name: str, *, with_body: bool = True
) -> Response[Any]:
    """A picture the image generation tool drew (`file_response`), made from its name."""
    picture = picture_named(file_name)
    return file_response(request, encode(picture), picture.media_type, with_body=with_body)


def file_response(
    request: Request[Any, Any, Any], data: bytes, content_type: str, *, with_body: bool = True
) -> Response[Any]:
    """The file, or the range of it asked for. Without the body (HEAD), the same status
    and headers; errors (404, 416) keep their envelope, which the server leaves out."""
    tag = f'"{hashlib.blake2b(data, digest_size=12).hexdigest()}"'
    # Revalidated, not immutable: ids start again after a reset or a restore, so one URL
    # may be another job's file (a browser would keep showing the old one for a year).
    headers = {"Accept-Ranges": "bytes", "Cache-Control": "no-cache", "ETag": tag}
    if _matches(request.headers.get("if-none-match"), tag):
        return Response(b"", status_code=304, headers=headers, media_type=content_type)
    wanted = request.headers.get("range")
    if wanted and request.headers.get("if-range", tag) != tag:
        wanted = None  # the file changed since the client's first part: all of it (RFC 9110)
    span = _span(wanted, len(data)) if wanted else WHOLE
    status, body = 200, data
    if span is None:
        return _not_satisfiable(wanted or "", len(data))
    if isinstance(span, tuple):
        start, end = span
        status, body = 206, data[start : end + 1]
        headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
    headers["Content-Length"] = str(len(body))
    body = body if with_body else b""
    return Response(body, status_code=status, headers=headers, media_type=content_type)


def _matches(if_none_match: str | None, tag: str) -> bool:
    """RFC 9110 13.1.2: `*` or a list of tags, compared weakly (a `W/` prefix aside)."""
    if not if_none_match:
        return False
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or tag in tags


def _not_satisfiable(wanted: str, size: int) -> Response[dict[str, Any]]:
    """416 in the error envelope, with the `Content-Range: bytes */size` RFC 9110 asks for."""
    shown = wanted if len(wanted) <= 40 else wanted[:40] + "..."
    example = f" such as bytes=0-{size - 1}" if size else ""
    message = (
        f"Range {shown!r} asks for no bytes of this {size}-byte file. Ask for one range "
        f"that starts before byte {size}{example}, or send no Range header for the whole file."
    )
    body = error_envelope(message, "invalid_request_error", "range_not_satisfiable", "Range")
    headers = {"Accept-Ranges": "bytes", "Content-Range": f"bytes */{size}"}
    return Response(body, status_code=416, headers=headers, media_type=MediaType.JSON)


def _span(header: str, size: int) -> tuple[int, int] | Literal["whole"] | None:
    """The one byte range asked for, clipped to the file; None if unsatisfiable (416).

    WHOLE (answer 200 with the file) when the header is to be ignored, as RFC 9110
    section 14.2 allows: another unit, several ranges, or a range that does not parse
    (`bytes=abc`, `bytes=1-1e3`, `bytes=5-2`). 416 is only for a valid range that asks
    for no byte of the file (`bytes=999999-`, `bytes=-0`). The unit is
    case-insensitive and whitespace around `=` and `,` is optional.
    """
    unit, _, ranges = header.partition("=")
    specs = [spec.strip() for spec in ranges.split(",") if spec.strip()]
    if unit.strip().lower() != "bytes" or len(specs) != 1:
        return WHOLE
    match = _SPEC.fullmatch(specs[0])
    if match is None or match.groups() == ("", ""):
        return WHOLE
    first, last = match.groups()
    if first and last and _above(first, last):  # last-pos before first-pos: invalid
        return WHOLE
    return _clip(_offset(first), _offset(last), size)


def _clip(first: int | None, last: int | None, size: int) -> tuple[int, int] | None:
    """A valid range within a file of `size` bytes; None if it has no byte of it."""
    if size == 0:
        return None
    if first is None:  # the last n bytes
        return (max(size - (last or 0), 0), size - 1) if last else None
    end = size - 1 if last is None else min(last, size - 1)
    return (first, end) if first < size else None


def _above(a: str, b: str) -> bool:
    """Whether the numeral `a` is greater than `b`, at any length (no int() of them)."""
    a, b = a.lstrip("0"), b.lstrip("0")
    return (len(a), a) > (len(b), b)


def _offset(digits: str) -> int | None:
    """A range offset; beyond 18 digits it is _HUGE, as int() stops at ~4300 digits."""
    digits = digits.lstrip("0") or ("0" if digits else "")
    if not digits:
        return None
    return int(digits) if len(digits) <= 18 else _HUGE
