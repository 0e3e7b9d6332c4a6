"""Range requests on /media/{file}, through HTTP: what RFC 9110 allows, and never a 500.

One completed video (the `video` fixture) serves every test."""

from __future__ import annotations

import httpx

from tests.helpers import assert_error


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
    for value in ["bytes=0-1,2-3", "bytes=0-1, 5-9, -3", "bytes=999999-,9999999-", "items=0-1"]:
        assert_whole_file(ranged(url, value), data, value)


def test_a_range_that_does_not_parse_is_ignored(video: tuple[str, bytes]) -> None:
    """RFC 9110 section 14.2: a server MAY ignore a Range it cannot parse; 416 is for a
    valid range that misses the file, not for a malformed one."""
    url, data = video
    for value in [
        b"bytes=abc",
        b"bytes=1-1e3",
        b"bytes=5-2",  # last-pos before first-pos makes the range invalid
        b"bytes=" + b"9" * 5000 + b"-" + b"9" * 4999,  # the same, at any length
        b"bytes=-",
        b"bytes=1-2-3",
        b"bytes=,",
        b"bytes=0-1,abc",
        b"bytes",
        b"=0-1",
        b"garbage",
        b"bytes=0-\xb2",
    ]:
        assert_whole_file(ranged(url, value), data, value)


def assert_whole_file(answer: httpx.Response, data: bytes, value: bytes | str) -> None:
    assert answer.status_code == 200, value
    assert answer.content == data and "content-range" not in answer.headers
    assert answer.headers["content-length"] == str(len(data))
    assert answer.headers["accept-ranges"] == "bytes"


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
        b"bytes=999999-9999999",
        b"BYTES = 999999-",
        b"bytes=-0",  # a valid suffix range of no bytes
        b"bytes=" + b"9" * 30 + b"-",
    ]:
        answer = ranged(url, value)
        error = assert_error(answer, 416, "range_not_satisfiable", "invalid_request_error")
        assert error["param"] == "Range"
        assert f"bytes=0-{len(data) - 1}" in error["message"]  # says what would work
        assert answer.headers["content-range"] == f"bytes */{len(data)}"
        assert "immutable" not in answer.headers.get("cache-control", "")
