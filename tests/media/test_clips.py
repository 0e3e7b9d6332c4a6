"""A job's output is the fixture clip as the file is now: an edited clip is served."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx

from emulator.server import BackgroundServer
from emulator.settings import Settings, default_fixtures_dir
from tests.helpers import bearer

VIDEO = {"model": "emulator/video", "task_type": "text2video", "prompt": "a fox"}


def _made(client: httpx.Client) -> tuple[int, bytes]:
    """A new 5 s 16:9 video's record size and downloaded bytes."""
    job = client.post("/api/v1/generate/video", json=VIDEO).json()
    assert client.post(f"/_emulator/jobs/{job['id']}/complete").is_success
    record = client.get(f"/api/v1/generation/{job['id']}").json()
    return record["file_size"], client.get(record["video_url"]).content


def test_a_clip_edited_on_disk_is_the_next_output_after_a_reset(tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    shutil.copytree(default_fixtures_dir(), fixtures)
    clip, other = fixtures / "media/video-16x9-5s.mp4", fixtures / "media/video-16x9-10s.mp4"
    server = BackgroundServer(
        Settings(db=":memory:", fixtures=fixtures, clock="manual", log_level="warning")
    ).start()
    try:
        with httpx.Client(base_url=server.url, headers=bearer("sk-emu-demo-all")) as client:
            assert _made(client) == (len(clip.read_bytes()), clip.read_bytes())
            shutil.copy(other, clip)  # the user swaps in another clip
            assert client.post("/_emulator/reset").is_success
            edited = clip.read_bytes()
            assert edited == other.read_bytes()
            assert _made(client) == (len(edited), edited)
    finally:
        server.stop()
