"""Files in a prompt: a chat `file` part, a responses `input_file`, an Anthropic PDF
document. Checked as the real APIs check them before anything is billed, and read as
the model reads them: a text file's text, a PDF's pages' text (`pdf_pages`).

A file's data is an http(s) URL (never fetched: the emulator has no network, so it is
taken and not read) or a base64 data URL. A PDF must be one that can be read.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from functools import lru_cache
from typing import Any

from emulator.bodies import HTTP_URL
from emulator.gateway.images import decode_base64

MAX_PDF_PAGES = 100  # per PDF, as OpenAI and Anthropic limit a request's
PDF = "application/pdf"
# Text a model reads as it is sent: any text/* type and the text formats of code and data.
_TEXT_TYPES = re.compile(
    r"text/[\w.+-]+|application/(json|xml|x-yaml|yaml|javascript|x-sh|x-python|sql|"
    r"x-tex|csv|[\w.-]+\+(json|xml))"
)
_DATA_URL = re.compile(r"data:([^;,]*)((?:;[^;,]*)*),(.*)", re.DOTALL)

# pypdf logs each oddity of a damaged PDF; a refused file is answered, not logged.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def check_file_data(value: str) -> None:
    """A file's data: an http(s) URL or a base64 data URL (a PDF one must be readable);
    a ValueError in words that name what is wrong."""
    if re.match(HTTP_URL, value):
        return
    media_type, data = _decoded(value)
    if data is None:
        raise ValueError(
            "Invalid file data: expected an http(s) URL or a base64-encoded data URL "
            "(e.g. 'data:application/pdf;base64,JVBERi0...')"
        )
    if media_type == PDF:
        pdf_pages(data)


def file_text(value: str | None) -> str:
    """What the model reads of a file's data: a text file's text, a PDF's pages; nothing
    for a URL, a file id or a type not read (an image, a spreadsheet, an archive)."""
    if value is None or re.match(HTTP_URL, value):
        return ""
    media_type, data = _decoded(value)
    if data is None:
        return ""
    if media_type == PDF:
        return "\n\n".join(page for page in pdf_pages(data) if page)
    if _TEXT_TYPES.fullmatch(media_type):
        return data.decode("utf-8", errors="replace")
    return ""


def parsed_files(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The PDFs of a chat request's `file` parts as OpenRouter hands back what it parsed:
    `annotations` of type `file` (the data's SHA-256, its name, a text part a page), one
    for each PDF, which a client may send back with its assistant message."""
    found: dict[str, dict[str, Any]] = {}
    for message in messages:
        content = message.get("content")
        for part in content if isinstance(content, list) else ():
            file = part.get("file") if part.get("type") == "file" else None
            if not file or not file.get("file_data"):
                continue
            media_type, data = _decoded(file["file_data"])
            if media_type != PDF or data is None:
                continue
            digest = hashlib.sha256(data).hexdigest()
            pages = [{"type": "text", "text": page} for page in pdf_pages(data)]
            parsed = {"hash": digest, "name": file.get("filename"), "content": pages}
            found.setdefault(digest, {"type": "file", "file": parsed})
    return list(found.values())


# A file is checked, read and handed back in one request: decoded and parsed once. Two
# entries: a cache that kept more would keep clients' files alive long after.
@lru_cache(maxsize=2)
def pdf_pages(data: bytes) -> tuple[str, ...]:
    """Each page's text, in order; a ValueError for data that is not a PDF to read, or
    a PDF of more than `MAX_PDF_PAGES` pages (counted before any is read)."""
    if not data.startswith(b"%PDF-"):
        raise ValueError("Invalid PDF: the data does not begin as a PDF does ('%PDF-')")
    from pypdf import PdfReader  # only when a PDF comes: most requests have none

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise _Refused("Invalid PDF: the PDF is encrypted (password protected)")
        if len(reader.pages) > MAX_PDF_PAGES:
            raise _Refused(
                f"The PDF has {len(reader.pages)} pages: a PDF may have at most "
                f"{MAX_PDF_PAGES} pages"
            )
        return tuple(page.extract_text() for page in reader.pages)
    except _Refused:
        raise
    except Exception as error:  # any failure of a parser, on any bytes a client sends
        raise ValueError(f"Invalid PDF: the PDF cannot be read ({error})") from None


class _Refused(ValueError):
    """A PDF read and refused, in words of ours rather than the parser's."""


@lru_cache(maxsize=2)  # as `pdf_pages`
def _decoded(value: str) -> tuple[str, bytes | None]:
    """A base64 data URL's media type and bytes; no bytes for anything else."""
    found = _DATA_URL.fullmatch(value)
    if found is None or not found.group(2).endswith(";base64"):
        return "", None
    return found.group(1).lower(), decode_base64(found.group(3))
