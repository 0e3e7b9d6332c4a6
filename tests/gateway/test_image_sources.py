"""What an edit keeps of its image (`gateway.image_sources`): the size and top colour of
an image the emulator can decode, the name alone of one it cannot."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from emulator.gateway.canonical import Message
from emulator.gateway.image_sources import fitted, last_picture, read
from emulator.gateway.pictures import Picture, encode

TOP, BOTTOM = (23, 8, 250), (200, 120, 4)


def data_url(picture: Picture) -> str:
    return f"data:{picture.media_type};base64," + base64.b64encode(encode(picture)).decode()


@pytest.mark.parametrize(
    "picture",
    [
        Picture(300, 200, TOP, BOTTOM),
        Picture(300, 200, TOP, BOTTOM, "png", transparent=True),  # clear corners unread
        Picture(120, 90, TOP, BOTTOM, "webp", transparent=True),
    ],
)
def test_a_decoded_image_gives_its_size_and_the_colour_of_its_top(picture: Picture) -> None:
    source = read(data_url(picture))
    assert source.size == (picture.width, picture.height)
    assert all(abs(a - b) <= 4 for a, b in zip(source.top, TOP, strict=True))  # WebP: lossy


def test_clear_rows_above_the_picture_are_passed_over() -> None:
    image = Image.new("RGBA", (40, 30), (0, 0, 0, 0))
    image.paste((10, 200, 30, 255), (5, 10, 35, 30))  # the first ten rows clear
    out = io.BytesIO()
    image.save(out, "PNG")
    source = read("data:image/png;base64," + base64.b64encode(out.getvalue()).decode())
    assert (source.size, source.top) == ((40, 30), (10, 200, 30))


@pytest.mark.parametrize(
    "given",
    [
        "https://example.com/cat.png",
        "file:file-abc",
        "data:image/png;base64,",
        "data:image/png;base64,bm90IGFuIGltYWdl",  # base64, not an image
    ],
)
def test_an_image_the_emulator_cannot_decode_is_known_by_its_name(given: str) -> None:
    source = read(given)
    assert source.size is None
    assert source.top == tuple(source.digest[:3])
    assert read(given + "x").top != source.top


def test_the_last_picture_of_the_conversation_is_edited() -> None:
    assert last_picture([Message("user", "hi")]) is None
    messages = [
        Message("user", "a", images=2, pictures=("first", "second")),
        Message("assistant", "b"),
        Message("user", "c"),
    ]
    assert last_picture(messages) == "second"


def test_a_size_is_fitted_within_the_sides_drawn() -> None:
    assert fitted((600, 300)) == (600, 300)
    assert fitted((8192, 4096)) == (4096, 2048)
    assert fitted((10, 5)) == (16, 16)


def test_an_svg_the_tool_drew_gives_its_size_and_first_colour() -> None:
    source = read(data_url(Picture(64, 48, TOP, BOTTOM, "svg")))
    assert (source.size, source.top) == ((64, 48), TOP)


def test_a_gif_gives_its_first_frames_top() -> None:
    source = read(data_url(Picture(64, 48, TOP, BOTTOM, "gif", frames=3)))
    assert (source.size, source.top) == ((64, 48), TOP)


def test_an_svg_of_no_size_is_known_by_its_colour_alone() -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0"></svg>'
    source = read("data:image/svg+xml;base64," + base64.b64encode(svg).decode())
    assert source.size is None
