"""The body of POST /generate/video (the interface's fields, spelled as it spells them)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt

from emulator.bodies import HttpUrl, Prompt, RequestBody

Text = Annotated[str, Field(min_length=1, max_length=200)]


class ImageItem(RequestBody):
    image: Annotated[str, Field(min_length=1, max_length=15_000_000)] | None = Field(
        default=None, description="Base64 of a PNG, JPEG or WebP image (or a data URL)"
    )
    image_url: HttpUrl | None = None


class GenerateVideoRequest(RequestBody):
    model: Text
    task_type: Text = Field(description="text2video, image2video or multi-image2video")
    prompt: Prompt
    negative_prompt: Annotated[str, Field(max_length=2500)] | None = None
    aspect_ratio: Text = "16:9"
    duration: Annotated[str, Field(pattern=r"^[0-9]{1,3}s?$")] = Field(
        default="5s", description="Seconds, as `5s` or `5`"
    )
    mode: Text = "standard"
    sound: Annotated[str, Field(pattern="^(on|off)$")] = "off"
    image_list: Annotated[list[ImageItem], Field(max_length=10)] | None = None
    image_url: HttpUrl | None = None
    seed: Annotated[StrictInt, Field(ge=0, le=2**31 - 1)] | None = None
