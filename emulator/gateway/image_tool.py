"""The image generation tools the gateway runs for the model: OpenRouter's server tool
(`openrouter:image_generation`, on every route) and OpenAI's hosted tool
(`image_generation`, on `/responses`). The model asks for a picture, the gateway draws it
with an image model, and the model shows it.

The model calls one once when the user has just spoken, the tool choice lets it call
tools, and the last user message asks for a picture (one of `PICTURE_WORDS`), or a tool
must be called and the gateway's are the only ones, or OpenAI's tool choice names it
(`server_tools.called`); the prompt is that message. OpenRouter's tool draws with
`parameters.model` (a catalog model with `image` among its output modalities; OpenRouter's
default, `openai/gpt-5-image`, when unset); OpenAI's names OpenAI's own image models,
which the catalog's `openai/gpt-5-image` stands for unless its `model` is a catalog image
model. The picture (`pictures.Picture`: a gradient between two colours from the prompt's
digest) is drawn at `size` (`WxH`), else at OpenRouter's `aspect_ratio`'s size, else
1024x1024, in the `output_format`, `background` and `output_compression` asked for.
OpenAI's tool edits the conversation's last image when there is one (`action` `auto`,
the default, or `edit`; `image_sources`): the edit keeps its top colour and its size.
OpenRouter's tool serves it under `/media/images/` (no key needed, as a storage link) and
the model reads `{"status": "ok", "model", "prompt", "imageUrl"}` and shows it in
markdown; OpenAI's hands it over in its `image_generation_call` output item, with partial
images while streaming (`partial_images`), and also draws an animated GIF or an SVG. The
picture costs what one image costs on the image model (its output tokens at its image
output price, else its completion price: an OpenAI model's tokens by quality and size,
`image_output.picture_tokens`), added to the provider's cost as web
fetches are. With every provider
of the image model down the call fails (nothing charged) and the model says so.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, PrivateAttr, model_validator

from emulator.billing.pricing import provider_cost
from emulator.bodies import OpenWireModel
from emulator.errors import NotFound, ValidationFailed
from emulator.gateway import image_sources
from emulator.gateway.canonical import Message
from emulator.gateway.image_output import SIZES_1K, AspectRatio, picture_tokens
from emulator.gateway.image_sources import Source
from emulator.gateway.pictures import SIDES, Picture, encode, named
from emulator.gateway.web_search import query_of

if TYPE_CHECKING:
    from emulator.gateway.catalog import CatalogView

IMAGE_GENERATION = "openrouter:image_generation"
OPENAI_IMAGE_GENERATION = "image_generation"  # OpenAI's hosted tool, on /responses
IMAGE_CALL = "image_generation_call"  # its output item
DEFAULT_MODEL = "openai/gpt-5-image"  # OpenRouter's
DEFAULT_SIZE = (1024, 1024)
PROMPT_CHARS = 1000  # of the user's message, as the prompt the model writes
PARTIAL_IMAGES = 3  # the most OpenAI's tool streams
GIF_FRAMES = 100  # the most frames of a GIF drawn (ours: OpenAI documents no bound)
GIF_FRAME_MS = 200  # OpenAI's default frame duration (9 frames by default)
GIF_PIXELS = 40_000_000  # a GIF's frames' pixels in all: drawn in about 0.4 s
PICTURE_WORDS = re.compile(
    r"\b(draw|drawing|image|picture|photo|photograph|illustration|illustrate|sketch|"
    r"painting|logo|icon|poster|wallpaper|artwork)s?\b",
    re.IGNORECASE,
)


def _drawable(size: str) -> str:
    if size == "auto":
        return size
    width, _, height = size.partition("x")
    if not (width.isdigit() and height.isdigit()):
        raise ValueError(f"a size is written WIDTHxHEIGHT (such as '1024x1024'), not {size!r}")
    low, high = SIDES
    if not all(low <= int(side) <= high for side in (width, height)):
        raise ValueError(f"each side of {size!r} must be {low} to {high} pixels")
    return size


class ImageGenerationConfig(OpenWireModel):
    """OpenRouter's tool's `parameters`: the image model, and the image settings passed
    to it (those not read here are taken and not used, as a model that ignores them)."""

    model: Annotated[str, Field(min_length=1)] | None = None
    size: Annotated[str, AfterValidator(_drawable)] | None = None
    aspect_ratio: AspectRatio | None = None
    quality: Literal["auto", "low", "medium", "high"] | None = None
    background: Literal["auto", "transparent", "opaque"] | None = None
    output_format: Literal["png", "jpeg", "webp"] | None = None
    output_compression: Annotated[int, Field(ge=0, le=100)] | None = None
    moderation: Literal["auto", "low"] | None = None
    _index: int = PrivateAttr(default=0)  # the tool's place in `tools`, for errors

    @model_validator(mode="after")
    def _clear_needs_alpha(self) -> ImageGenerationConfig:
        if self.background == "transparent" and self.output_format not in (None, "png", "webp"):
            raise ValueError(
                "a transparent background needs an output_format that has one: png or webp"
            )
        return self

    def at(self, index: int) -> ImageGenerationConfig:
        self._index = index
        return self


class OpenAIImageConfig(ImageGenerationConfig):
    """OpenAI's tool, its settings beside its `type`: OpenAI's image model names, more
    qualities, the partial images a stream shows, whether to edit, and an animated GIF
    or an SVG besides the three formats (their settings need them, as OpenAI's API says)."""

    type: Literal["image_generation"] = "image_generation"
    quality: Literal["auto", "low", "medium", "high", "xhigh", "max"] | None = None  # type: ignore[assignment]
    output_format: Literal["png", "jpeg", "webp", "gif", "svg"] | None = None  # type: ignore[assignment]
    action: Literal["generate", "edit", "auto"] | None = None
    partial_images: Annotated[int, Field(ge=0, le=PARTIAL_IMAGES)] | None = None
    frame_count: Annotated[int, Field(ge=1, le=GIF_FRAMES)] | None = None
    frame_duration_ms: Annotated[int, Field(ge=10, le=60_000)] | None = None
    svg: dict[str, Any] | None = None  # the SVG author's settings: taken, not used
    input_image_mask: dict[str, Any] | None = None  # taken, not used: the whole is redrawn

    @model_validator(mode="after")
    def _format_settings_need_their_format(self) -> OpenAIImageConfig:
        gif = self.output_format == "gif"
        for name in ("frame_count", "frame_duration_ms"):
            if getattr(self, name) is not None and not gif:
                raise ValueError(f"`{name}` needs output_format gif")
        if self.svg is not None and self.output_format != "svg":
            raise ValueError("`svg` needs output_format svg")
        if gif and self.partial_images:
            raise ValueError("GIF output has no partial images: leave partial_images at 0")
        if gif and self.input_image_mask is not None:
            raise ValueError("GIF output takes no input_image_mask")
        if gif and self.output_compression is not None:
            raise ValueError("GIF output takes no output_compression")
        return self


@dataclass(frozen=True)
class Drawing:
    """A call that drew: the picture, the output item's settings (OpenAI's), and how many
    partial images a stream shows before it."""

    picture: Picture
    shown: dict[str, Any] = field(default_factory=dict)
    partials: int = 0


def asks_for_picture(messages: tuple[Message, ...]) -> bool:
    """Whether the last user message asks for a picture."""
    return PICTURE_WORDS.search(query_of(messages)) is not None


def draw(
    config: ImageGenerationConfig, messages: tuple[Message, ...], view: CatalogView, origin: str
) -> tuple[dict[str, Any], str | None, int, Drawing | None]:
    """The call: what the model reads, why it failed (None), what it costs (micros) and
    the picture drawn."""
    openai = isinstance(config, OpenAIImageConfig)
    model_id = config.model or DEFAULT_MODEL
    where = f"tools[{config._index}]" + ("" if openai else ".parameters")
    model = (_openai_image_model if openai else _image_model)(view, model_id, where + ".model")
    prompt = " ".join(query_of(messages).split())[:PROMPT_CHARS]
    source = _edited(config, messages, where)
    if all(view.providers[p["name"]].status == "down" for p in model["providers"]):
        error = f"The image model {model_id} is unavailable: its providers are down."
        return {"status": "error", "model": model_id}, error, 0, None
    width, height = _size(config, source)
    key = f"{model_id}\n{width}x{height}\n{prompt}".encode()
    digest = hashlib.sha256(key + (source.digest if source else b"")).digest()
    picture = Picture(
        width,
        height,
        source.top if source else (digest[0], digest[1], digest[2]),
        (digest[3], digest[4], digest[5]),
        config.output_format or "png",
        config.background == "transparent",
        100 if config.output_compression is None else config.output_compression,
        **_frames(config, width, height),
    )
    result = {"status": "ok", "model": model_id, "prompt": prompt}
    if not openai:
        result["imageUrl"] = f"{origin}/media/images/{picture.name}"
    pricing = model["pricing"]
    price = pricing.get("image_output_micros_per_mtok") or pricing["completion_micros_per_mtok"]
    cost = provider_cost(0, picture_tokens(model["id"], config.quality, width, height), 0, price)
    return result, None, cost, _drawing(config, picture, prompt, source is not None)


def _frames(config: ImageGenerationConfig, width: int, height: int) -> dict[str, int]:
    """A GIF's frames and their duration (OpenAI's defaults: 9 of 200 ms; the duration
    rounded to 10 ms, as OpenAI rounds it), within the pixels the emulator draws."""
    if not isinstance(config, OpenAIImageConfig) or config.output_format != "gif":
        return {}
    frames = config.frame_count or 9
    if frames * width * height > GIF_PIXELS:
        raise ValidationFailed(
            f"A GIF of {frames} frames of {width}x{height} is more than the emulator draws "
            f"({GIF_PIXELS:,} pixels in all, about 9 frames of 2048x2048): ask for fewer "
            "frames or a smaller size.",
            param=f"tools[{config._index}].frame_count",
        )
    duration = config.frame_duration_ms or GIF_FRAME_MS
    return {"frames": frames, "frame_ms": (duration + 5) // 10 * 10}


def _edited(
    config: ImageGenerationConfig, messages: tuple[Message, ...], where: str
) -> Source | None:
    """The image OpenAI's tool edits: the conversation's last, unless `action` is
    `generate` (`edit` needs one; `auto`, the default, edits when there is one)."""
    if not isinstance(config, OpenAIImageConfig) or config.action == "generate":
        return None
    source = image_sources.last_source(messages)
    if source is None and config.action == "edit":
        raise ValidationFailed(
            "The image generation tool's `action` is `edit`, and the input has no image to "
            "edit: send one (an `input_image` part, or an earlier answer's "
            "image_generation_call), or leave `action` to `auto`.",
            param=where + ".action",
        )
    return source


def _drawing(config: ImageGenerationConfig, picture: Picture, prompt: str, edit: bool) -> Drawing:
    if not isinstance(config, OpenAIImageConfig):
        return Drawing(picture)
    shown = {
        "action": "edit" if edit else "generate",
        "background": "transparent" if picture.transparent else "opaque",
        "output_format": picture.format,
        "quality": "high" if config.quality in (None, "auto") else config.quality,
        "size": f"{picture.width}x{picture.height}",
        "revised_prompt": prompt,
    }
    return Drawing(picture, shown, config.partial_images or 0)


def _image_model(view: CatalogView, model_id: str, param: str) -> Any:
    model = view.by_id.get(model_id)
    if model is None or "image" not in model["architecture"]["output_modalities"]:
        makers = [m["id"] for m in view.models if "image" in m["architecture"]["output_modalities"]]
        choice = f"use one of {', '.join(makers)}" if makers else "the fixtures have none"
        raise ValidationFailed(
            f"The image generation tool's model {model_id!r} is not an image model of the "
            f"catalog; {choice}.",
            param=param,
        )
    return model


def _openai_image_model(view: CatalogView, model_id: str, param: str) -> Any:
    """The catalog's image model a name of OpenAI's stands for: itself if the catalog
    has it, else the default one."""
    model = view.by_id.get(model_id)
    if model is not None and "image" in model["architecture"]["output_modalities"]:
        return model
    return _image_model(view, DEFAULT_MODEL, param)


def _size(config: ImageGenerationConfig, source: Source | None) -> tuple[int, int]:
    """The size asked for, else an edit's source's (when it was read), else 1024x1024."""
    if config.size is not None and config.size != "auto":
        width, _, height = config.size.partition("x")
        return int(width), int(height)
    if config.aspect_ratio is not None:
        return SIZES_1K[config.aspect_ratio]
    if source is not None and source.size is not None:
        return image_sources.fitted(source.size)
    return DEFAULT_SIZE


def picture_named(name: str) -> Picture:
    """The picture a media name (`ig-WxH-top-bottom.png`, ...) stands for: the same bytes
    for the same name, whoever asks (404 for a name no call could have made)."""
    picture = named(name)
    if picture is None:
        raise NotFound(f"No image {name!r}.")
    return picture


def base64_of(picture: Picture) -> str:
    return base64.b64encode(encode(picture)).decode("ascii")


def item_fields(result: dict[str, Any], drawing: Drawing) -> dict[str, Any]:
    """The output item's fields of a call that drew: OpenRouter's (the prompt, the link,
    and the picture in base64), or OpenAI's `image_generation_call` (its settings)."""
    picture = base64_of(drawing.picture)
    if drawing.shown:
        return {"type": IMAGE_CALL, **drawing.shown, "result": picture}
    return {"prompt": result["prompt"], "imageUrl": result["imageUrl"], "result": picture}


def sentence(result: dict[str, Any], error: str | None) -> str:
    """What the model says after reading the call's result."""
    if error is not None or result.get("status") != "ok":
        return " I could not make the image."
    if "imageUrl" not in result:  # OpenAI's tool: the picture is in its output item
        return "\n\nHere is the image you asked for."
    words = " ".join(str(result.get("prompt", "")).split()[:8]) or "image"
    return f"\n\nHere is the image:\n\n![{words.replace(']', '')}]({result.get('imageUrl')})"
