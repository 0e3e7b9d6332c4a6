"""The pictures the image generation tools draw: each name stands for one picture and
reads back as it, each format decodes to the size and mode asked for, and a partial
image is the picture with its lower rows not drawn yet."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from emulator.gateway.pictures import SIDES, Picture, encode, named

colours = st.tuples(*[st.integers(0, 255)] * 3)
pictures = st.builds(
    Picture,
    width=st.integers(*SIDES),
    height=st.integers(*SIDES),
    top=colours,
    bottom=colours,
    format=st.sampled_from(["png", "jpeg", "webp"]),
    transparent=st.booleans(),
    compression=st.integers(0, 100),
).filter(lambda p: not (p.transparent and p.format == "jpeg"))


@given(pictures)
def test_a_name_reads_back_as_its_picture(picture: Picture) -> None:
    read = named(picture.name)
    assert read is not None
    expected = picture.compression if picture.format != "png" else 100
    assert (read.width, read.height, read.top, read.bottom) == (
        picture.width, picture.height, picture.top, picture.bottom
    )  # fmt: skip
    assert (read.format, read.transparent, read.compression) == (
        picture.format, picture.transparent, expected
    )  # fmt: skip
    assert read.name == picture.name


def decoded(picture: Picture) -> Image.Image:
    image = Image.open(io.BytesIO(encode(picture)))
    image.load()
    return image


def test_each_format_decodes_to_its_size_and_mode() -> None:
    for fmt, transparent, mode in [
        ("png", False, "RGB"),
        ("png", True, "RGBA"),
        ("jpeg", False, "RGB"),
        ("webp", False, "RGB"),
        ("webp", True, "RGBA"),
    ]:
        picture = Picture(40, 30, (255, 0, 0), (0, 0, 255), fmt, transparent, 90)  # type: ignore[arg-type]
        image = decoded(picture)
        assert (image.format, image.mode, image.size) == (fmt.upper(), mode, (40, 30))


def test_the_gradient_runs_from_top_to_bottom_and_a_clear_background_frames_an_ellipse() -> None:
    image = decoded(Picture(64, 64, (255, 0, 0), (0, 0, 255), transparent=True))
    assert image.getpixel((32, 0))[:3] == (255, 0, 0)  # type: ignore[index]
    assert image.getpixel((32, 63))[:3] == (0, 0, 255)  # type: ignore[index]
    corners = [(0, 0), (63, 0), (0, 63), (63, 63)]
    assert all(image.getpixel(xy)[3] == 0 for xy in corners)  # type: ignore[index]
    assert image.getpixel((32, 32))[3] == 255  # type: ignore[index]


def test_a_partial_image_draws_a_share_of_the_rows() -> None:
    picture = Picture(8, 40, (0, 0, 0), (200, 200, 200))
    whole = decoded(picture)
    for index in range(3):
        partial = picture.partial(index, 3)
        assert partial.drawn == 10 * (index + 1)
        image = decoded(partial)
        rows = [image.getpixel((0, y)) for y in range(40)]
        assert rows[: partial.drawn] == [whole.getpixel((0, y)) for y in range(partial.drawn)]
        assert set(rows[partial.drawn :]) == {(100, 100, 100)}  # one flat colour between


def test_a_gif_loops_its_frames_fading_the_gradient_towards_flat() -> None:
    picture = Picture(16, 40, (200, 0, 0), (0, 0, 200), "gif", frames=4, frame_ms=120)
    image = decoded(picture)
    assert (image.format, image.size, image.n_frames) == ("GIF", (16, 40), 4)  # type: ignore[attr-defined]
    assert image.info["duration"] == 120 and image.info["loop"] == 0
    ends = []
    for frame in range(4):
        image.seek(frame)
        rgb = image.convert("RGB")
        ends.append((rgb.getpixel((0, 0)), rgb.getpixel((0, 39))))
    assert ends[0] == ((200, 0, 0), (0, 0, 200))  # the picture itself first
    assert ends[2] == ((100, 0, 100), (100, 0, 100))  # half way: flat


def test_an_svg_is_a_linear_gradient_and_its_partial_a_flat_rest() -> None:
    picture = Picture(30, 20, (255, 0, 0), (0, 0, 255), "svg")
    svg = encode(picture).decode()
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" width="30" height="20"')
    assert '<stop offset="0" stop-color="#ff0000"/>' in svg
    assert '<stop offset="1" stop-color="#0000ff"/>' in svg
    partial = encode(picture.partial(0, 1)).decode()
    assert partial.endswith('<rect y="10" width="30" height="10" fill="#800080"/></svg>')
