"""Images in answers: OpenRouter's image generation through chat completions and
responses (`wire/responses_items.image_item`: OpenAI's image generation call item).

A request with `image` among its `modalities` is served only by a model with
`image` among its `output_modalities` (fixtures), on a provider of the chat
format (the only one routed images here; the responses format renders and reads
them for its clients, Anthropic's messages format has none). Each answer (each
of `n`) then carries one image in `message.images` (streamed in `delta.images`),
a PNG data URL of the size `image_config` asks for (`aspect_ratio`, `image_size`)
as Gemini's image models make them: a gradient between two colours drawn from the
request's seed, so the same request gives the same bytes; given an image (the prompt's
last, `image_sources`), the model edits it: its top colour, and its shape when no
`aspect_ratio` is asked for (the nearest Gemini makes). An image costs
`TOKENS_PER_IMAGE` output tokens (Gemini's 1,290 a picture), priced at the route's
`image_output_micros_per_mtok`. With `modalities: ["image"]` alone the answer has
no text (`content` null).
"""

from __future__ import annotations

import base64
import math
import struct
import zlib
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from emulator.gateway.canonical import Completion, ImageOutput, Request
from emulator.ids import LazyRng

if TYPE_CHECKING:
    from emulator.gateway.image_sources import Source

TOKENS_PER_IMAGE = 1290
# gpt-image-1's output tokens for a 1024x1024 picture, by quality (OpenAI's table).
OPENAI_SQUARE_TOKENS = {"low": 272, "medium": 1056, "high": 4160}

# Gemini's sizes at `image_size` 1K, by `aspect_ratio`; 2K and 4K double and quadruple them.
SIZES_1K = {
    "1:1": (1024, 1024),
    "2:3": (832, 1248),
    "3:2": (1248, 832),
    "3:4": (864, 1184),
    "4:3": (1184, 864),
    "4:5": (896, 1152),
    "5:4": (1152, 896),
    "9:16": (768, 1344),
    "16:9": (1344, 768),
    "21:9": (1536, 672),
}
SCALES = {"1K": 1, "2K": 2, "4K": 4}
# The aspect ratios a request may ask for: those of `SIZES_1K`.
AspectRatio = Literal["1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"]


def asked(body: dict[str, Any]) -> ImageOutput | None:
    """The images a chat or responses body asks for: `image` among its `modalities`
    (values checked by the body's schema)."""
    modalities = body.get("modalities") or ()
    if "image" not in modalities:
        return None
    config = body.get("image_config") or {}
    return ImageOutput(
        config.get("aspect_ratio"),
        config.get("image_size") or "1K",
        text="text" in modalities,
    )


def tokens_asked(request: Request, model_id: str) -> int:
    """The output tokens of the images a request asks of a model: one image an answer, at
    the size asked for (none: square, the largest of Gemini's shapes, which an edit's
    may be)."""
    if request.images_out is None:
        return 0
    return picture_tokens(model_id, None, *size_of(request.images_out)) * request.n


def picture_tokens(model_id: str, quality: str | None, width: int, height: int) -> int:
    """The output tokens of one picture: an OpenAI image model's by quality (`auto`, as
    shown, and `xhigh` and `max`, whose counts OpenAI has not published: `high`), as
    gpt-image-1 counts a 1024x1024 picture, scaled by area; other models' as Gemini's."""
    if not model_id.startswith("openai/"):
        return TOKENS_PER_IMAGE
    square = OPENAI_SQUARE_TOKENS.get(quality or "high", OPENAI_SQUARE_TOKENS["high"])
    return round(square * width * height / (1024 * 1024))


def wire_fields(wanted: ImageOutput) -> dict[str, Any]:
    """The chat body's fields that ask for `wanted` (to a chat provider)."""
    modalities = ["image", "text"] if wanted.text else ["image"]
    config = {"image_size": wanted.image_size}
    if wanted.aspect_ratio is not None:
        config["aspect_ratio"] = wanted.aspect_ratio
    return {"modalities": modalities, "image_config": config}


def attach(
    completion: Completion,
    wanted: ImageOutput,
    lazy: LazyRng,
    source: Source | None,
    model_id: str,
) -> None:
    """The answer's image, and its tokens among the output's. Drawn from a generator of
    its own, keyed by the answer's text too (each of `n` its own): the text is the same
    with or without it. An edit of `source` (the prompt's last image) keeps its top
    colour, and its shape unless `aspect_ratio` is given, as Gemini does."""
    rng = lazy.fork(f"image:{completion.text}")
    top = tuple(rng.randrange(256) for _ in range(3))
    bottom = tuple(rng.randrange(256) for _ in range(3))
    if source is not None:
        top = source.top
    width, height = size_of(wanted, source)
    completion.images = (data_url(gradient_png(width, height, top, bottom)),)
    completion.image_tokens = picture_tokens(model_id, None, width, height)
    completion.output_tokens += completion.image_tokens


def size_of(wanted: ImageOutput, source: Source | None = None) -> tuple[int, int]:
    """Gemini's size for the aspect ratio asked for, else the one nearest an edited
    image's shape, else square."""
    ratio = wanted.aspect_ratio
    if ratio is None:
        shape = source.size if source is not None else None
        ratio = "1:1" if shape is None else _nearest_ratio(*shape)
    width, height = SIZES_1K[ratio]
    scale = SCALES[wanted.image_size]
    return width * scale, height * scale


def _nearest_ratio(width: int, height: int) -> str:
    shape = math.log(width / height)
    return min(SIZES_1K, key=lambda r: abs(math.log(SIZES_1K[r][0] / SIZES_1K[r][1]) - shape))


def part(url: str) -> dict[str, Any]:
    """An image of `message.images` (and of `delta.images`)."""
    return {"type": "image_url", "image_url": {"url": url}}


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


@lru_cache(maxsize=32)  # a test suite asks for the same few images again and again
def gradient_png(width: int, height: int, top: tuple[int, ...], bottom: tuple[int, ...]) -> bytes:
    """An RGB PNG fading from `top` to `bottom`. Each row is one colour, written with
    PNG's `Sub` filter (a pixel as the difference from its left neighbour: zeros after
    the first), so a 1K image compresses to a few KB in about 10 ms."""
    rest = bytes(3 * (width - 1))
    rows = []
    for y in range(height):
        t = y / (height - 1) if height > 1 else 0.0
        colour = bytes(round(a + (b - a) * t) for a, b in zip(top, bottom, strict=True))
        rows.append(b"\x01" + colour + rest)
    return png_file(width, height, 2, b"".join(rows))


def png_file(width: int, height: int, colour_type: int, scanlines: bytes) -> bytes:
    """A PNG of 8-bit samples (colour type 2: RGB, 6: RGBA) from its filtered rows."""
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(scanlines, 6))
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
