"""Range requests on /media/{file}, through HTTP: what RFC 9110 allows, and never a 500.

One completed video serves every test (media bytes are stable for a job)."""

from __future__ import annotations

import httpx
import pytest

from emulator.testing import EmulatorHandle
from tests.helpers import assert_error

VIDEO = {
    "model": "vidprov/v1.6",
    "task_type": "text2video",
    "prompt": "a heron standing in a river",
    "aspect_ratio": "16:9",
    "duration": "5s",
    "mode": "standard",
}


@pytest.fixture(scope="module")
def video(emulator: EmulatorHandle) -> tuple[str, bytes]:
    """The URL and the whole bytes of a finished video."""
    with emulator.create_tenant().client() as client:
        record = client.post("/generate/video", json=VIDEO).json()
        emulator.advance(600)
        url = client.get(f"/generation/{record['id']}").json()["video_url"]
    return url, httpx.get(url).content


def ranged(url: str, value: bytes | str) -> httpx.Response:
    return httpx.get(url, headers={"Range": value})


def test_the_unit_is_case_insensitive_and_whitespace_optional(video: tuple[str, bytes]) -> None:
    url, data = video
    for value in ["BYTES=0-1", "Bytes=0-1", "bytes= 0-1", "bytes = 0-1", "bytes=0-1,"]:
        answer = ranged(url, value)
        assert answer.status_code == 206, value
        assert answer.content == data[:2]
        assert answer.headers["content-range"] == f"bytes 0-1/{len(data)}"


def test_several_ranges_or_another_unit_get_the_whole_file(video: tuple[str, bytes]) -> None:
    url, data = video
    for value in ["bytes=0-1,2-3", "bytes=0-1, 5-9, -3", "items=0-1"]:
        answer = ranged(url, value)
        assert answer.status_code == 200, value
        assert answer.content == data and "content-range" not in answer.headers


def test_offsets_of_thousands_of_digits_are_not_a_500(video: tuple[str, bytes]) -> None:
    url, data = video
    whole = ranged(url, "bytes=0-" + "9" * 5000)  # an end past the file is clipped
    assert whole.status_code == 206 and whole.content == data
    assert whole.headers["content-range"] == f"bytes 0-{len(data) - 1}/{len(data)}"
    suffix = ranged(url, "bytes=-" + "9" * 5000)  # more than the file: all of it
    assert suffix.status_code == 206 and suffix.content == data
    padded = ranged(url, "bytes=" + "0" * 5000 + "1-2")  # leading zeros are still 1
    assert padded.status_code == 206 and padded.content == data[1:3]
    far = ranged(url, "bytes=" + "9" * 5000 + "-")
    assert_error(far, 416, "range_not_satisfiable")


def test_416_is_the_error_envelope_with_content_range(video: tuple[str, bytes]) -> None:
    url, data = video
    for value in [
        b"bytes=999999-",
        b"bytes=5-2",
        b"bytes=-0",
        b"bytes=,",
        b"garbage",
        b"bytes=0-\xb2",
    ]:
        answer = ranged(url, value)
        error = assert_error(answer, 416, "range_not_satisfiable", "invalid_request_error")
        assert error["param"] == "Range"
        assert f"bytes=0-{len(data) - 1}" in error["message"]  # says what would work
        assert answer.headers["content-range"] == f"bytes */{len(data)}"
        assert "immutable" not in answer.headers.get("cache-control", "")
