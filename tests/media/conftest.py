"""One completed video for the media tests of a module (media bytes are stable for a job)."""

from __future__ import annotations

import httpx
import pytest

from emulator.testing import EmulatorHandle

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
