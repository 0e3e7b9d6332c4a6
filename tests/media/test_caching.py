"""Caching of /media/{file}: revalidated by ETag, never `immutable`, because a reset or a
restore gives the same URL to another job's file."""

from __future__ import annotations

import httpx

from emulator.testing import EmulatorHandle
from tests.media.conftest import VIDEO


def test_a_client_revalidates_and_gets_304_while_the_file_is_the_same(
    video: tuple[str, bytes],
) -> None:
    url, data = video
    first = httpx.get(url)
    tag = first.headers["etag"]
    assert first.headers["cache-control"] == "no-cache" and tag.startswith('"')
    for value in [tag, f"W/{tag}", f'"other", {tag}', "*"]:
        again = httpx.get(url, headers={"If-None-Match": value})
        assert again.status_code == 304 and again.content == b"", value
        assert again.headers["etag"] == tag
    assert httpx.get(url, headers={"If-None-Match": '"other"'}).content == data
    assert httpx.head(url, headers={"If-None-Match": tag}).status_code == 304


def test_if_range_with_another_tag_gets_the_whole_file(video: tuple[str, bytes]) -> None:
    url, data = video
    tag = httpx.get(url).headers["etag"]
    part = httpx.get(url, headers={"Range": "bytes=0-9", "If-Range": tag})
    assert part.status_code == 206 and part.content == data[:10]
    whole = httpx.get(url, headers={"Range": "bytes=0-9", "If-Range": '"before"'})
    assert whole.status_code == 200 and whole.content == data


def test_the_same_url_after_a_reset_is_another_file_with_another_tag(
    demo: EmulatorHandle,
) -> None:
    def made(**changes: object) -> httpx.Response:
        with demo.create_tenant().client() as client:
            record = client.post("/generate/video", json=VIDEO | changes).json()
            demo.advance(600)
            url = client.get(f"/generation/{record['id']}").json()["video_url"]
        return httpx.get(url)

    before = made(aspect_ratio="16:9")
    demo.reset()
    after = made(aspect_ratio="9:16")
    assert before.url == after.url and before.content != after.content
    assert before.headers["etag"] != after.headers["etag"]
    stale = httpx.get(after.url, headers={"If-None-Match": before.headers["etag"]})
    assert stale.status_code == 200 and stale.content == after.content
