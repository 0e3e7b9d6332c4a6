"""OpenRouter's image generation server tool (`openrouter:image_generation`): the model
asks for a picture, the gateway draws it with an image model, and the model shows it.

The model calls it once when the user has just spoken, the tool choice lets it call
tools, and the last user message asks for a picture (one of `PICTURE_WORDS`), or a tool
must be called and the gateway's are the only ones (`server_tools.called`); the prompt
is that message. The image model is
`parameters.model` (a catalog model with `image` among its output modalities; OpenRouter's
default, `openai/gpt-5-image`, when unset). The picture is drawn as answers' images are
(`image_output.gradient_png`, two colours from the prompt's digest) at `parameters.size`
(`WxH`), else at `parameters.aspect_ratio`'s size, else 1024x1024, and served by the
emulator itself under `/media/images/` (no key needed, as a storage link). The model reads
`{"status": "ok", "model", "prompt", "imageUrl"}` and shows the image in markdown. The
picture costs what one image costs on the image model (`TOKENS_PER_IMAGE` output tokens
at its image output price, else its completion price), added to the provider's cost as
web fetches are. With every provider of the image model down the call fails (nothing
charged) and the model says so.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, PrivateAttr

from emulator.billing.pricing import provider_cost
from emulator.bodies import OpenWireModel
from emulator.errors import NotFound, ValidationFailed
from emulator.gateway.canonical import Message
from emulator.gateway.image_output import (
    SIZES_1K,
    TOKENS_PER_IMAGE,
    AspectRatio,
    gradient_png,
)
from emulator.gateway.web_search import query_of

if TYPE_CHECKING:
    from emulator.gateway.catalog import CatalogView

IMAGE_GENERATION = "openrouter:image_generation"
DEFAULT_MODEL = "openai/gpt-5-image"  # OpenRouter's
DEFAULT_SIZE = (1024, 1024)
SIDES = (16, 4096)  # the smallest and largest side drawn (and served)
PROMPT_CHARS = 1000  # of the user's message, as the prompt the model writes
PICTURE_WORDS = re.compile(
    r"\b(draw|drawing|image|picture|photo|photograph|illustration|illustrate|sketch|"
    r"painting|logo|icon|poster|wallpaper|artwork)s?\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"ig-([1-9][0-9]{1,3})x([1-9][0-9]{1,3})-([0-9a-f]{6})-([0-9a-f]{6})\.png")


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
    """The tool's `parameters`: the image model, and the image settings passed to it
    (those not read here are taken and not used, as a model that ignores them)."""

    model: Annotated[str, Field(min_length=1)] | None = None
    size: Annotated[str, AfterValidator(_drawable)] | None = None
    aspect_ratio: AspectRatio | None = None
    quality: Literal["auto", "low", "medium", "high"] | None = None
    background: Literal["auto", "transparent", "opaque"] | None = None
    output_format: Literal["png", "jpeg", "webp"] | None = None
    output_compression: Annotated[int, Field(ge=0, le=100)] | None = None
    moderation: Literal["auto", "low"] | None = None
    _index: int = PrivateAttr(default=0)  # the tool's place in `tools`, for errors

    def at(self, index: int) -> ImageGenerationConfig:
        self._index = index
        return self


def asks_for_picture(messages: tuple[Message, ...]) -> bool:
    """Whether the last user message asks for a picture."""
    return PICTURE_WORDS.search(query_of(messages)) is not None


def draw(
    config: ImageGenerationConfig, messages: tuple[Message, ...], view: CatalogView, origin: str
) -> tuple[dict[str, Any], str | None, int]:
    """The call: what the model reads, why it failed (None) and what it costs (micros)."""
    model_id = config.model or DEFAULT_MODEL
    model = _image_model(view, model_id, config)
    prompt = " ".join(query_of(messages).split())[:PROMPT_CHARS]
    if all(view.providers[p["name"]].status == "down" for p in model["providers"]):
        error = f"The image model {model_id} is unavailable: its providers are down."
        return {"status": "error", "model": model_id}, error, 0
    width, height = _size(config)
    digest = hashlib.sha256(f"{model_id}\n{width}x{height}\n{prompt}".encode()).hexdigest()
    url = f"{origin}/media/images/ig-{width}x{height}-{digest[:6]}-{digest[6:12]}.png"
    result = {"status": "ok", "model": model_id, "prompt": prompt, "imageUrl": url}
    pricing = model["pricing"]
    price = pricing.get("image_output_micros_per_mtok") or pricing["completion_micros_per_mtok"]
    return result, None, provider_cost(0, TOKENS_PER_IMAGE, 0, price)  # one image's output


def _image_model(view: CatalogView, model_id: str, config: ImageGenerationConfig) -> Any:
    param = f"tools[{config._index}].parameters.model"
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


def _size(config: ImageGenerationConfig) -> tuple[int, int]:
    if config.size is not None and config.size != "auto":
        width, _, height = config.size.partition("x")
        return int(width), int(height)
    if config.aspect_ratio is not None:
        return SIZES_1K[config.aspect_ratio]
    return DEFAULT_SIZE


def png_named(name: str) -> bytes:
    """The picture a media name (`ig-WxH-top-bottom.png`) stands for: the same bytes for
    the same name, whoever asks (404 for a name no call could have made)."""
    match = _NAME.fullmatch(name)
    low, high = SIDES
    if match is None or not all(low <= int(side) <= high for side in match.group(1, 2)):
        raise NotFound(f"No image {name!r}.")
    top, bottom = (tuple(bytes.fromhex(colour)) for colour in match.group(3, 4))
    return gradient_png(int(match[1]), int(match[2]), top, bottom)


def item_fields(result: dict[str, Any]) -> dict[str, Any]:
    """The output item's fields of a call that drew (OpenRouter's responses item: the
    prompt, the link, and the picture in base64 as OpenAI's `image_generation_call`)."""
    url = result["imageUrl"]
    png = png_named(url.rpartition("/")[2])
    picture = base64.b64encode(png).decode("ascii")
    return {"prompt": result["prompt"], "imageUrl": url, "result": picture}


def sentence(result: dict[str, Any], error: str | None) -> str:
    """What the model says after reading the call's result."""
    if error is not None or result.get("status") != "ok":
        return " I could not make the image."
    words = " ".join(str(result.get("prompt", "")).split()[:8]) or "image"
    return f"\n\nHere is the image:\n\n![{words.replace(']', '')}]({result.get('imageUrl')})"
