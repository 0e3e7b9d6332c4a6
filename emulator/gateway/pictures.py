"""The pictures the image generation tools draw: a gradient between two colours, in the
format, background and compression the tool asks for, named so that the emulator can
serve the same bytes again from the name alone (`/media/images/{name}`: PNG, JPEG and
WebP, the formats of OpenRouter's tool).

PNG is written here (`image_output.gradient_png`, and an RGBA one for a transparent
background: the gradient fills the ellipse the picture's edges touch, the corners are
clear); JPEG and WebP are encoded by Pillow, at `compression` as their quality. OpenAI's
tool also draws an animated GIF (Pillow; frame `k` of `n` has the two colours moved
`k/n` of the way towards each other, so the gradient fades to flat and back as it loops)
and an SVG (written here: a linear gradient filling the picture). A partial image
(OpenAI's `partial_images` while streaming) is the picture with its lower rows not
drawn yet: one flat colour between the two.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal

from emulator.gateway.image_output import gradient_png, png_file

Format = Literal["png", "jpeg", "webp", "gif", "svg"]
MEDIA_TYPES: dict[str, str] = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "webp": "image/webp",
    "gif": "image/gif",
    "svg": "image/svg+xml",
}
SIDES = (16, 4096)  # the smallest and largest side drawn (and served)
_NAME = re.compile(
    r"ig-([1-9][0-9]{1,3})x([1-9][0-9]{1,3})-([0-9a-f]{6})-([0-9a-f]{6})"
    r"(-t)?(?:-q(100|[1-9]?[0-9]))?\.(png|jpeg|webp)"
)
Colour = tuple[int, int, int]


@dataclass(frozen=True)
class Picture:
    """One picture: its size, its two colours (top and bottom), how it is encoded, and
    how much of it is drawn (`drawn` rows of `height`; all of them but in a partial)."""

    width: int
    height: int
    top: Colour
    bottom: Colour
    format: Format = "png"
    transparent: bool = False
    compression: int = 100  # JPEG's and WebP's quality; PNG is lossless
    drawn: int | None = None
    frames: int = 1  # a GIF's, each shown `frame_ms`
    frame_ms: int = 200

    @property
    def name(self) -> str:
        """The media name that stands for the whole picture (`named` reads it back)."""
        colours = bytes(self.top).hex() + "-" + bytes(self.bottom).hex()
        clear = "-t" if self.transparent else ""
        lossy = self.format != "png" and self.compression != 100
        quality = f"-q{self.compression}" if lossy else ""
        return f"ig-{self.width}x{self.height}-{colours}{clear}{quality}.{self.format}"

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[self.format]

    def partial(self, index: int, count: int) -> Picture:
        """The `index`th of `count` partial images (0-based): a share of the rows drawn."""
        return replace(self, drawn=self.height * (index + 1) // (count + 1))


def named(name: str) -> Picture | None:
    """The picture a media name stands for (None for a name no tool could have made)."""
    match = _NAME.fullmatch(name)
    low, high = SIDES
    if match is None or not all(low <= int(side) <= high for side in match.group(1, 2)):
        return None
    top, bottom = (_colour(match[n]) for n in (3, 4))
    fmt: Format = match[7]  # type: ignore[assignment]  # one of the pattern's three
    if match[6] is not None and (fmt == "png" or match[6] == "100"):
        return None  # written otherwise by `name`: one name a picture
    if match[5] and fmt == "jpeg":
        return None  # JPEG has no transparency
    quality = 100 if match[6] is None else int(match[6])
    return Picture(int(match[1]), int(match[2]), top, bottom, fmt, bool(match[5]), quality)


def _colour(hex_: str) -> Colour:
    red, green, blue = bytes.fromhex(hex_)
    return red, green, blue


@lru_cache(maxsize=32)  # a stream's partials, and a test suite asking again and again
def encode(picture: Picture) -> bytes:
    """The picture's bytes in its format."""
    whole = picture.drawn is None
    if picture.format == "png" and not picture.transparent and whole:
        return gradient_png(picture.width, picture.height, picture.top, picture.bottom)
    if picture.format == "png":
        return _png(picture)
    if picture.format == "svg":
        return _svg(picture)
    if picture.format == "gif":
        frames = [_gif_frame(_frame(picture, k)) for k in range(picture.frames)]
        out = io.BytesIO()
        first, *rest = frames
        first.save(out, "GIF", save_all=True, append_images=rest, duration=picture.frame_ms, loop=0)
        return out.getvalue()
    out = io.BytesIO()
    _image(picture).save(out, picture.format.upper(), quality=picture.compression)
    return out.getvalue()


def _image(picture: Picture) -> Any:
    from PIL import Image  # only for the formats it writes: Pillow is slow to import

    mode = "RGBA" if picture.transparent else "RGB"
    return Image.frombytes(mode, (picture.width, picture.height), b"".join(_rows(picture)))


def _gif_frame(picture: Picture) -> Any:
    """A frame in GIF's 256 colours: one pixel a row quantized, then widened (each row is
    one colour, so this is the whole frame at a fraction of quantizing it)."""
    from PIL import Image

    column = Image.frombytes("RGB", (1, picture.height), b"".join(_colours(picture)))
    return column.quantize(256).resize((picture.width, picture.height), Image.Resampling.NEAREST)


def _frame(picture: Picture, k: int) -> Picture:
    """Frame `k` of a GIF: its colours `k/frames` of the way towards each other."""
    share = k / picture.frames
    top, bottom = picture.top, picture.bottom
    return replace(picture, top=_mix(top, bottom, share), bottom=_mix(bottom, top, share))


def _svg(picture: Picture) -> bytes:
    """An SVG of the gradient (its lower rows one flat colour in a partial image)."""
    width, height = picture.width, picture.height
    drawn = height if picture.drawn is None else picture.drawn
    top, bottom = (f"#{bytes(c).hex()}" for c in (picture.top, picture.bottom))
    middle = f"#{bytes(_mix(picture.top, picture.bottom, 0.5)).hex()}"
    rest = (
        ""
        if drawn == height
        else (f'<rect y="{drawn}" width="{width}" height="{height - drawn}" fill="{middle}"/>')
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}"><defs><linearGradient id="g" '
        f'gradientUnits="userSpaceOnUse" x1="0" y1="0" x2="0" y2="{height}">'
        f'<stop offset="0" stop-color="{top}"/><stop offset="1" stop-color="{bottom}"/>'
        f'</linearGradient></defs><rect width="{width}" height="{height}" fill="url(#g)"/>'
        f"{rest}</svg>"
    ).encode()


def _colours(picture: Picture) -> list[bytes]:
    """Each row's colour (RGB): the gradient down to the rows drawn, then flat."""
    height = picture.height
    drawn = height if picture.drawn is None else picture.drawn
    middle = bytes(_mix(picture.top, picture.bottom, 0.5))
    colours = []
    for y in range(height):
        t = y / (height - 1) if height > 1 else 0.0
        colours.append(bytes(_mix(picture.top, picture.bottom, t)) if y < drawn else middle)
    return colours


def _rows(picture: Picture) -> list[bytes]:
    """Each row's pixels: RGB, or RGBA with the ellipse's outside clear."""
    width, height = picture.width, picture.height
    rows = []
    for y, colour in enumerate(_colours(picture)):
        if not picture.transparent:
            rows.append(colour * width)
            continue
        inside = _inside(width, height, y)
        left = (width - inside) // 2
        clear = bytes(4)
        rows.append(clear * left + (colour + b"\xff") * inside + clear * (width - inside - left))
    return rows


def _inside(width: int, height: int, y: int) -> int:
    """How many pixels of row `y` the ellipse touching the picture's edges covers."""
    offset = (y + 0.5) / height * 2 - 1  # -1 at the top edge, 1 at the bottom
    return round(width * math.sqrt(max(0.0, 1 - offset * offset)))


def _mix(a: Colour, b: Colour, t: float) -> Colour:
    red, green, blue = (round(x + (y - x) * t) for x, y in zip(a, b, strict=True))
    return red, green, blue


def _png(picture: Picture) -> bytes:
    """A PNG of unfiltered rows (zlib finds their runs): RGB, or RGBA (colour type 6)."""
    colour_type = 6 if picture.transparent else 2
    scanlines = b"".join(b"\x00" + row for row in _rows(picture))
    return png_file(picture.width, picture.height, colour_type, scanlines)
