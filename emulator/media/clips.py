"""The output file of a job: a fixture clip per aspect ratio and duration.

The clips are small H.264 test patterns (fixtures/media/); a job's output is
the clip of its aspect ratio and duration, so the same job always gives the
same bytes and the record's `file_size` is the file's size.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from emulator.settings import default_fixtures_dir


@dataclass(frozen=True)
class Clip:
    path: Path
    width: int
    height: int
    seconds: int
    size: int
    content_type: str = "video/mp4"

    @property
    def resolution(self) -> str:
        return f"{self.width}x{self.height}"


def find_clip(video: dict, fixtures_dir: Path, aspect_ratio: str, seconds: int) -> Clip:  # type: ignore[type-arg]
    """The clip for an aspect ratio and a duration (the nearest duration there is)."""
    spec = video["clips"].get(aspect_ratio) or next(iter(video["clips"].values()))
    files = {int(k): v for k, v in spec["files"].items()}
    chosen = min(files, key=lambda d: (abs(d - seconds), d))
    path = _resolve(fixtures_dir, files[chosen])
    return Clip(path, spec["width"], spec["height"], chosen, len(read_bytes(path)))


def _resolve(fixtures_dir: Path, relative: str) -> Path:
    """In the fixtures folder in use, else the bundled one (a partial folder)."""
    own = fixtures_dir / relative
    return own if own.is_file() else default_fixtures_dir() / relative


@functools.lru_cache(maxsize=64)
def read_bytes(path: Path) -> bytes:
    return path.read_bytes()
