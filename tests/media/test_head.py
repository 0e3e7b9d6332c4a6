"""HEAD /media/{file}, through HTTP: players and download tools probe before they fetch.

HEAD answers as GET does (status and headers, Content-Length too), without the body."""

from __future__ import annotations

import httpx

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

# What a GET answer and a HEAD answer must share (the rest is per request: id, date).
RUNNING = {
    "model": "vidprov/v1.6",
    "task_type": "text2video",
    "prompt": "a kingfisher on a branch",
    "aspect_ratio": "9:16",
    "duration": "5s",
    "mode": "standard",
}
SAME = ("content-type", "content-length", "accept-ranges", "cache-control", "content-range", "etag")


def both(url: str, headers: dict[str, str] | None = None) -> tuple[httpx.Response, httpx.Response]:
    return httpx.get(url, headers=headers), httpx.head(url, headers=headers)


def assert_like_get(got: httpx.Response, probed: httpx.Response) -> None:
    assert probed.status_code == got.status_code
    assert probed.content == b""
    assert [probed.headers.get(k) for k in SAME] == [got.headers.get(k) for k in SAME]


def test_head_answers_as_get_without_the_body(video: tuple[str, bytes]) -> None:
    url, data = video
    got, probed = both(url)
    assert probed.status_code == 200, probed.text
    assert_like_get(got, probed)
    assert probed.headers["content-length"] == str(len(data))
    assert probed.headers["content-type"] == "video/mp4"
    assert probed.headers["accept-ranges"] == "bytes"


def test_head_with_a_range_answers_206_as_get_does(video: tuple[str, bytes]) -> None:
    url, data = video
    got, probed = both(url, {"Range": "bytes=100-199"})
    assert probed.status_code == 206
    assert_like_get(got, probed)
    assert probed.headers["content-length"] == "100"
    assert probed.headers["content-range"] == f"bytes 100-199/{len(data)}"


def test_head_with_an_ignored_range_answers_200(video: tuple[str, bytes]) -> None:
    url, _ = video
    for value in ["bytes=abc", "items=0-1", "bytes=0-1,5-6"]:
        got, probed = both(url, {"Range": value})
        assert probed.status_code == 200, value
        assert_like_get(got, probed)


def test_head_with_an_unsatisfiable_range_answers_416(video: tuple[str, bytes]) -> None:
    url, data = video
    got, probed = both(url, {"Range": "bytes=999999999-"})
    assert_error(got, 416, "range_not_satisfiable")
    assert probed.status_code == 416 and probed.content == b""
    assert probed.headers["content-range"] == f"bytes */{len(data)}"
    assert probed.headers["content-type"] == "application/json"


def test_head_of_missing_media_is_the_404_get_gives(tenant: Tenant, http: httpx.Client) -> None:
    with tenant.client() as client:
        running = client.post("/generate/video", json=RUNNING).json()
    for path in ["/media/nothing.mp4", f"/media/{running['id']}.mp4", "/media/x.mov"]:
        got, probed = http.get(path), http.head(path)
        assert_error(got, 404, "not_found")
        assert probed.status_code == 404 and probed.content == b"", path
        # the envelope's headers: GET's body is what HEAD leaves out
        assert probed.headers["content-type"] == "application/json"
        assert probed.headers["content-length"] == str(len(got.content))


def test_head_is_in_the_openapi_document(emulator: EmulatorHandle) -> None:
    paths = httpx.get(f"{emulator.url}/schema/openapi.json").json()["paths"]
    media = next(item for path, item in paths.items() if path.startswith("/media/"))
    assert {"get", "head"} <= media.keys()
    assert media["head"]["summary"]
