"""Images in answers (`gateway.image_output`): OpenRouter's image generation through chat,
`modalities` with `image` to a model whose `output_modalities` have it. Each answer
carries one PNG in `message.images` (streamed in `delta.images`), sized by
`image_config`, whose 1,290 tokens are output tokens at the route's image price."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

import openai
import pytest
from openrouter import OpenRouter

from emulator.gateway.image_output import TOKENS_PER_IMAGE
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

IMAGE_MODEL = "google/gemini-2.5-flash-image"
DRAW = [{"role": "user", "content": "Draw a lighthouse at dusk"}]


def draw(**extra: Any) -> dict[str, Any]:
    body = {"model": IMAGE_MODEL, "messages": DRAW, "modalities": ["image", "text"]}
    return {**body, **extra}


def png_of(url: str) -> tuple[int, int, bytes]:
    """(width, height, pixel rows) of a PNG data URL, checked as a decoder checks it."""
    head, _, data = url.partition(",")
    assert head == "data:image/png;base64"
    png = base64.b64decode(data, validate=True)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = {}, 8
    while at < len(png):
        (size,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + size]
        (crc,) = struct.unpack(">I", png[at + 8 + size : at + 12 + size])
        assert crc == zlib.crc32(kind + body)
        chunks[kind] = body
        at += 12 + size
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (8, 2)  # 8-bit RGB
    rows = zlib.decompress(chunks[b"IDAT"])
    assert len(rows) == height * (1 + 3 * width)
    assert set(chunks) == {b"IHDR", b"IDAT", b"IEND"}
    return width, height, rows


def images_of(message: Any) -> list[str]:
    extra = message.model_extra or {}
    return [image["image_url"]["url"] for image in extra.get("images") or ()]


def test_an_image_model_answers_with_a_png_and_its_tokens(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(**draw())
    message = answer.choices[0].message
    (url,) = images_of(message)
    assert png_of(url)[:2] == (1024, 1024)  # `aspect_ratio` 1:1 by default
    assert message.content  # text beside it, as asked
    usage = answer.usage
    assert usage is not None and usage.completion_tokens_details is not None
    details = usage.completion_tokens_details.model_extra or {}
    assert details["image_tokens"] == TOKENS_PER_IMAGE
    # The image's tokens at the route's image price (30 USD a million), the text's at
    # the completion price (2.5 USD a million).
    text_tokens = usage.completion_tokens - TOKENS_PER_IMAGE
    expected = TOKENS_PER_IMAGE * 30_000_000 + text_tokens * 2_500_000
    extra = usage.model_extra or {}
    assert round(extra["cost_details"]["upstream_inference_completions_cost"] * 1e12) == expected


def test_the_same_request_draws_the_same_image_and_the_text_is_unchanged(
    client: openai.OpenAI,
) -> None:
    first = client.chat.completions.create(**draw())
    again = client.chat.completions.create(**draw())
    other = client.chat.completions.create(**draw(messages=[{"role": "user", "content": "A fox"}]))
    plain = client.chat.completions.create(model=IMAGE_MODEL, messages=DRAW)  # type: ignore[arg-type]
    assert images_of(first.choices[0].message) == images_of(again.choices[0].message)
    assert images_of(other.choices[0].message) != images_of(first.choices[0].message)
    assert images_of(plain.choices[0].message) == []  # no `modalities`: text only
    assert first.choices[0].message.content == plain.choices[0].message.content


@pytest.mark.parametrize(
    ("config", "size"),
    [
        ({"aspect_ratio": "16:9"}, (1344, 768)),
        ({"aspect_ratio": "2:3"}, (832, 1248)),
        ({"aspect_ratio": "21:9", "image_size": "1K"}, (1536, 672)),
        ({"aspect_ratio": "1:1", "image_size": "2K"}, (2048, 2048)),
    ],
)
def test_image_config_sizes_the_image(
    client: openai.OpenAI, config: dict[str, str], size: tuple[int, int]
) -> None:
    answer = client.chat.completions.create(**draw(), extra_body={"image_config": config})
    (url,) = images_of(answer.choices[0].message)
    width, height, rows = png_of(url)
    assert (width, height) == size
    # A gradient: each row one colour, the top and the bottom rows apart.
    stride = 1 + 3 * width
    assert rows[1:4] != rows[(height - 1) * stride + 1 : (height - 1) * stride + 4]


def test_image_alone_has_no_text(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(**{**draw(), "modalities": ["image"]})
    assert answer.choices[0].message.content is None
    assert len(images_of(answer.choices[0].message)) == 1
    assert answer.usage is not None and answer.usage.completion_tokens == TOKENS_PER_IMAGE


def test_n_answers_carry_an_image_each(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(**draw(n=2))
    assert [len(images_of(c.message)) for c in answer.choices] == [1, 1]
    assert answer.usage is not None and answer.usage.completion_tokens_details is not None
    details = answer.usage.completion_tokens_details.model_extra or {}
    assert details["image_tokens"] == 2 * TOKENS_PER_IMAGE


def test_a_stream_carries_the_image_in_a_delta_and_bills_it_as_whole(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    stream = client.chat.completions.create(
        **draw(), stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    streamed = [
        image["image_url"]["url"]
        for chunk in chunks
        for choice in chunk.choices
        for image in (choice.delta.model_extra or {}).get("images") or ()
    ]
    whole = client.chat.completions.create(**draw())
    assert streamed == images_of(whole.choices[0].message)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    usage = chunks[-1].usage
    assert usage is not None and whole.usage is not None
    assert usage.completion_tokens == whole.usage.completion_tokens
    streamed_charge = (usage.model_extra or {})["charge_micros"]
    assert streamed_charge == (whole.usage.model_extra or {})["charge_micros"]
    with tenant.client() as http:
        stats = http.get("/generation", params={"id": chunks[0].id}).json()["data"]
        plain = client.chat.completions.create(model=IMAGE_MODEL, messages=DRAW)  # type: ignore[arg-type]
        unasked = http.get("/generation", params={"id": plain.id}).json()["data"]
    assert stats["num_media_completion"] == 1
    assert stats["native_tokens_completion_images"] == TOKENS_PER_IMAGE
    assert stats["total_cost"] * 1e6 == pytest.approx(streamed_charge)
    assert unasked["num_media_completion"] is None


@pytest.mark.parametrize(("cut", "images"), [(1, 0), (2, 1)])
def test_a_cut_stream_bills_the_image_only_once_it_went_out(
    tenant: Tenant, cut: int, images: int
) -> None:
    """The stream of `["image"]` alone: its role chunk, then the image's, then the end."""
    body = {**draw(), "modalities": ["image"], "stream": True}
    with tenant.client(headers={"X-Emulator-Fault": f"cut={cut}"}) as http:
        served = http.post("/chat/completions", json=body)
        assert served.status_code == 200
        sent = served.text.count('"images"')
        stats = http.get("/generation", params={"id": served.headers["X-Generation-Id"]})
    data = stats.json()["data"]
    assert sent == images
    assert data["tokens_completion"] == images * TOKENS_PER_IMAGE
    assert data["num_media_completion"] == (images or None)


def test_a_model_without_image_output_has_no_route(tenant: Tenant) -> None:
    with tenant.client() as http:
        refused = http.post("/chat/completions", json=draw(model="openai/gpt-4o-mini"))
        error = assert_error(refused, 503, "no_route_available")
        assert error["param"] == "modalities" and "output_modalities" in error["message"]
        listed = http.get("/models", params={"output_modalities": "image"}).json()["data"]
    assert IMAGE_MODEL in {m["id"] for m in listed}
    assert "openai/gpt-4o-mini" not in {m["id"] for m in listed}


def test_images_come_only_from_chat_format_providers(tenant: Tenant) -> None:
    with tenant.client() as http:
        passed_over = http.post(
            "/chat/completions",
            json=draw(model="emulator/echo", provider={"order": ["emulator-messages"]}),
        )
        refused = http.post(
            "/chat/completions",
            json=draw(model="emulator/echo", provider={"only": ["emulator-responses"]}),
        )
    assert passed_over.status_code == 200, passed_over.text
    assert passed_over.json()["provider"] == "emulator"
    assert len(passed_over.json()["choices"][0]["message"]["images"]) == 1
    assert "chat format" in assert_error(refused, 503, "no_route_available")["message"]


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"image_config": {"aspect_ratio": "9:9"}}, "image_config.aspect_ratio"),
        ({"image_config": {"image_size": "8K"}}, "image_config.image_size"),
        ({"modalities": ["image", "video"]}, "modalities[1]"),
    ],
)
def test_bad_image_settings_are_400_naming_them(
    tenant: Tenant, extra: dict[str, Any], param: str
) -> None:
    with tenant.client() as http:
        refused = http.post("/chat/completions", json={**draw(), **extra})
    assert assert_error(refused, 400, "invalid_request")["param"] == param


def test_the_hold_covers_the_image(emulator: EmulatorHandle, tenant: Tenant) -> None:
    """An account that can pay for the text but not the image is refused before it."""
    with tenant.client() as http:
        quoted = http.post("/ai-gateway/quote", json=draw(max_tokens=10))
    assert quoted.status_code == 200, quoted.text
    hold, estimate = quoted.json()["hold_micros"], quoted.json()["estimated_charge_micros"]
    assert estimate > TOKENS_PER_IMAGE * 30  # the image alone: 1,290 tokens at 30 micros
    assert hold >= estimate
    short = emulator.create_tenant(balance_micros=hold - 1)
    with short.client() as http:
        assert_error(
            http.post("/chat/completions", json=draw(max_tokens=10)), 402, "insufficient_credits"
        )
        text_only = http.post(
            "/chat/completions", json={**draw(max_tokens=10), "modalities": ["text"]}
        )
    assert text_only.status_code == 200, text_only.text


def test_the_openrouter_sdk_reads_the_images(router: OpenRouter) -> None:
    result = router.chat.send(
        model=IMAGE_MODEL,
        messages=[{"role": "user", "content": "A lighthouse"}],
        modalities=["image", "text"],
        image_config={"aspect_ratio": "4:3"},
    )
    images = result.choices[0].message.images
    assert images is not None and len(images) == 1
    assert png_of(images[0].image_url.url)[:2] == (1184, 864)


def test_the_auto_router_picks_a_model_that_draws(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(**draw(model="openrouter/auto"))
    assert answer.model in (IMAGE_MODEL, "openai/gpt-5-image")  # the catalog's two that draw
    assert len(images_of(answer.choices[0].message)) == 1


def test_the_catalog_prices_image_output(tenant: Tenant) -> None:
    with tenant.client() as http:
        model = http.get(f"/models/{IMAGE_MODEL}").json()
    assert model["architecture"]["output_modalities"] == ["image", "text"]
    assert model["pricing"]["image_output"] == "0.00003"
    assert model["pricing"]["image_output_micros_per_mtok"] == 30_000_000


OPENAI_IMAGE_MODEL = "openai/gpt-5-image"  # 10,000,000 micros a million tokens, images 40M


@pytest.mark.parametrize(
    ("config", "size", "tokens"),
    [
        ({}, (1024, 1024), 4160),  # gpt-image-1's count at quality high, 1024x1024
        ({"aspect_ratio": "16:9"}, (1344, 768), 4095),  # scaled by the area
        ({"image_size": "2K"}, (2048, 2048), 16_640),
    ],
)
def test_an_openai_image_model_counts_its_pictures_tokens_by_size(
    client: openai.OpenAI, config: dict[str, Any], size: tuple[int, int], tokens: int
) -> None:
    answer = client.chat.completions.create(
        **draw(model=OPENAI_IMAGE_MODEL), extra_body={"image_config": config}
    )
    (url,) = images_of(answer.choices[0].message)
    assert png_of(url)[:2] == size
    usage = answer.usage
    assert usage is not None and usage.completion_tokens_details is not None
    assert (usage.completion_tokens_details.model_extra or {})["image_tokens"] == tokens
    text = usage.completion_tokens - tokens
    cost = (usage.prompt_tokens * 10_000_000 + text * 10_000_000 + tokens * 40_000_000) / 1e12
    details = (usage.model_extra or {})["cost_details"]
    assert details["upstream_inference_completions_cost"] + details[
        "upstream_inference_prompt_cost"
    ] == pytest.approx(cost)


def test_an_openai_image_models_hold_quote_and_cut_stream_count_its_tokens(
    tenant: Tenant,
) -> None:
    body = {**draw(model=OPENAI_IMAGE_MODEL), "modalities": ["image"]}
    with tenant.client() as http:
        quoted = http.post("/ai-gateway/quote", json=body).json()
        text = http.post("/ai-gateway/quote", json={**body, "modalities": ["text"]}).json()
        served = http.post("/chat/completions", json={**body, "stream": True})
        whole = http.get("/generation", params={"id": served.headers["X-Generation-Id"]})
        with tenant.client(headers={"X-Emulator-Fault": "cut=2"}) as cut_http:
            cut = cut_http.post("/chat/completions", json={**body, "stream": True})
        after_cut = http.get("/generation", params={"id": cut.headers["X-Generation-Id"]})
    assert quoted["estimated_output_tokens"] == text["estimated_output_tokens"] + 4160
    extra = quoted["estimated_provider_cost_micros"] - text["estimated_provider_cost_micros"]
    assert extra == 4160 * 40  # the picture at the image price
    assert quoted["hold_micros"] >= quoted["estimated_charge_micros"]
    assert whole.json()["data"]["tokens_completion"] == 4160
    assert cut.text.count('"images"') == 1
    assert after_cut.json()["data"]["tokens_completion"] == 4160
