"""The output file of a job: a fixture clip per aspect ratio and duration.

The clips are small H.264 test patterns (fixtures/media/); a job's output is
the clip of its aspect ratio and duration, so the same job always gives the
same bytes and the record's `file_size` is the file's size.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from emulator.errors import NotFound, NotImplementedYet
from emulator.jobs.engine import state_at
from emulator.settings import default_fixtures_dir
from emulator.store.jobs import job_by_id
from emulator.store.meta import get_platform

if TYPE_CHECKING:
    from emulator.runtime import Runtime


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
    clips = video.get("clips") or {}
    spec = clips.get(aspect_ratio) or next(iter(clips.values()), None)
    if spec is None:  # a fixtures folder whose video.yaml has no `clips:` at all
        raise NotImplementedYet(
            "The fixtures in use have no output clips (`clips:` in video.yaml), so this "
            f"video cannot be made: add a {aspect_ratio} clip to them, as the bundled "
            "fixtures have."
        )
    files = {int(k): v for k, v in spec["files"].items()}
    chosen = min(files, key=lambda d: (abs(d - seconds), d))
    path = _resolve(fixtures_dir, files[chosen])
    return Clip(path, spec["width"], spec["height"], chosen, len(read_bytes(path)))


def _resolve(fixtures_dir: Path, relative: str) -> Path:
    """In the fixtures folder in use, else the bundled one (a partial folder)."""
    own = fixtures_dir / relative
    return own if own.is_file() else default_fixtures_dir() / relative


def read_bytes(path: Path) -> bytes:
    """The clip's bytes, read again once the file changed (a user's edited fixtures)."""
    found = path.stat()
    return _read(path, found.st_mtime_ns, found.st_size)


@functools.lru_cache(maxsize=64)
def _read(path: Path, mtime_ns: int, size: int) -> bytes:  # the stamp: the cache's key
    return path.read_bytes()


def job_media(rt: Runtime, file_name: str) -> tuple[Clip, bytes]:
    """The output of the job a media file name (`{job id}.mp4`) names, once completed."""
    job_id, _, extension = file_name.rpartition(".")
    with rt.store.read() as conn:
        job = job_by_id(conn, job_id) if extension == "mp4" else None
        video = get_platform(conn, "video") or {}
    if job is None or state_at(job, rt.clock.now()).status != "completed":
        raise NotFound(f"No media {file_name!r} (or its job has not completed).")
    clip = find_clip(video, rt.fixtures_dir, job.outputs["aspect_ratio"], job.outputs["duration"])
    return clip, read_bytes(clip.path)
