"""Bodies of the /vidprov task routes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from emulator.bodies import HttpUrl, Prompt, RequestBody, says_something

Image = Annotated[str, Field(min_length=1, max_length=15_000_000)]


def _fetchable(value: str) -> str:
    """An external id is a path segment of `GET /vidprov/tasks/{id}`: it must read back."""
    if value in (".", "..") or "/" in value or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(
            "an external task id is fetched as one path segment of /vidprov/tasks/{id}: "
            "no '/', no control characters, not '.' or '..'"
        )
    return value


ExternalId = Annotated[str, Field(min_length=1, max_length=128), AfterValidator(_fetchable)]


class EffectsRequest(RequestBody):
    effect_scene: Annotated[str, Field(min_length=1, max_length=100)]
    image: Image | None = Field(default=None, description="Single-image effects: base64 or URL")
    images: Annotated[list[Image], Field(min_length=1, max_length=2)] | None = Field(
        default=None, description="Dual-image effects: two images, base64 or URLs"
    )
    duration: Annotated[str, Field(pattern="^(5|10)s?$")] = "5"
    external_task_id: ExternalId | None = None
    callback_url: HttpUrl | None = Field(default=None, description="Accepted; never called")


class LipsyncRequest(RequestBody):
    video_url: HttpUrl | None = None
    video_id: Annotated[str, Field(min_length=1, max_length=128)] | None = Field(
        default=None,
        description="One of the account's videos: a generation id or a provider task's id",
    )
    mode: Literal["audio2video", "text2video"] | None = Field(
        default=None,
        description="audio2video (`audio` or `audio_url`) or text2video (`text` and "
        "`voice_id`); inferred from those fields when left out",
    )
    audio_url: HttpUrl | None = None
    audio: Annotated[str, Field(min_length=1, max_length=20_000_000)] | None = Field(
        default=None, description="Base64 of a WAV or MP3 file"
    )
    # Blank words or voice (only spaces or invisible characters) are refused, as prompts are.
    text: (
        Annotated[str, Field(min_length=1, max_length=1000), AfterValidator(says_something)] | None
    ) = None
    voice_id: (
        Annotated[str, Field(min_length=1, max_length=100), AfterValidator(says_something)] | None
    ) = None
    voice_speed: Annotated[float, Field(ge=0.8, le=2.0)] = 1.0
    external_task_id: ExternalId | None = None
    callback_url: HttpUrl | None = None


class MultiElementsRequest(RequestBody):
    video_url: HttpUrl
    edit_mode: Literal["addition", "swap", "removal"]
    prompt: Prompt
    image_list: Annotated[list[Image], Field(max_length=4)] = []
    external_task_id: ExternalId | None = None
    callback_url: HttpUrl | None = None
