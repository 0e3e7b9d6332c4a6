"""GET /media/{file}: a job's output, with HTTP range requests so players can seek.

Media URLs are capability URLs, like a storage service's signed links: whoever
has one can fetch it, no API key needed (a `<video src>` sends none).
"""

from __future__ import annotations

import re
from typing import Any

from litestar import Controller, Request, Response, get
from litestar.params import FromPath

from emulator.media.clips import job_media
from emulator.web import auth_opt, runtime_of

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class MediaController(Controller):
    path = "/media"
    tags = ["Media"]
    opt = auth_opt("optional")

    @get("/{file_name:str}", summary="A job's output file (supports Range requests)")
    async def fetch(
        self, request: Request[Any, Any, Any], file_name: FromPath[str]
    ) -> Response[bytes]:
        return media_response(request, file_name)


def media_response(request: Request[Any, Any, Any], file_name: str) -> Response[bytes]:
    clip, data = job_media(runtime_of(request), file_name)
    headers = {"Accept-Ranges": "bytes", "Cache-Control": "public, max-age=31536000, immutable"}
    wanted = request.headers.get("range")
    status, body = 200, data
    if wanted:
        span = _span(wanted, len(data))
        if span is None:
            headers["Content-Range"] = f"bytes */{len(data)}"
            return Response(b"", status_code=416, headers=headers, media_type=clip.content_type)
        start, end = span
        status, body = 206, data[start : end + 1]
        headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
    headers["Content-Length"] = str(len(body))
    return Response(body, status_code=status, headers=headers, media_type=clip.content_type)


def _span(header: str, size: int) -> tuple[int, int] | None:
    """One `bytes=a-b`, `bytes=a-` or `bytes=-n` range, clipped; None if unsatisfiable."""
    match = _RANGE.match(header.strip())
    if match is None or size == 0:
        return None
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:  # the last n bytes
        n = int(last)
        return (max(size - n, 0), size - 1) if n else None
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    return (start, end) if start <= end and start < size else None
