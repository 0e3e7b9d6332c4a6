"""OpenAI's image generation tool (`{"type": "image_generation"}`) on `/responses`,
through HTTP and the official clients: the model calls it when asked for a picture or
when the tool choice names it, the picture comes in OpenAI's `image_generation_call`
item in the format, size and background asked for, a stream shows its events and
partial images, and the image model's price of the picture is charged."""

from __future__ import annotations

import base64
import io
from typing import Any

import openai
import pytest
from openai.types.responses import ResponseOutputMessage
from openai.types.responses.response_output_item import ImageGenerationCall
from openrouter import OpenRouter
from openrouter.components import OutputImageGenerationCallItem
from PIL import Image

from emulator.billing.pricing import Fees, charge_for
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

MINI = "openai/gpt-4o-mini"  # openai (responses format), 150,000 / 600,000 micros per Mtok
FEES = Fees(5.5, 20)
TOOL: Any = {"type": "image_generation"}
ASK = "Draw a picture of a red fox in the snow"
# One picture of openai/gpt-5-image, which stands for OpenAI's models: 4,160 tokens (quality
# high, the default, 1024x1024: gpt-image-1's count) at 40,000,000 micros a million.
PICTURE_MICROS = 166_400
SAID = "\n\nHere is the image you asked for."


def image_of(b64: str) -> Image.Image:
    image = Image.open(io.BytesIO(base64.b64decode(b64)))
    image.load()
    return image


def mini_charge(usage: Any, picture_micros: int = 0) -> int:
    """What a responses answer of openai/gpt-4o-mini charges for its tokens, and the
    picture its tool drew at `picture_micros`."""
    tokens = usage.input_tokens, usage.output_tokens
    return charge_for(*tokens, 150_000, 600_000, FEES, tool_micros=picture_micros).charge_micros


def ask(tenant: Tenant, **body: Any) -> dict[str, Any]:
    with tenant.client() as http:
        answered = http.post("/responses", json={"model": MINI, "input": ASK, **body})
    assert answered.status_code == 200, answered.text
    result: dict[str, Any] = answered.json()
    return result


def test_the_model_draws_when_asked_and_the_picture_comes_in_the_item(
    client: openai.OpenAI,
) -> None:
    answer = client.responses.create(model=MINI, input=ASK, tools=[TOOL])
    again = client.responses.create(model=MINI, input=ASK, tools=[TOOL])
    call, message = answer.output
    assert isinstance(call, ImageGenerationCall) and isinstance(message, ResponseOutputMessage)
    assert call.status == "completed" and call.id.startswith("ig_")
    assert (call.size, call.output_format, call.background) == ("1024x1024", "png", "opaque")
    assert (call.quality, call.action, call.revised_prompt) == ("high", "generate", ASK)
    assert call.result is not None
    image = image_of(call.result)
    assert (image.format, image.mode, image.size) == ("PNG", "RGB", (1024, 1024))
    assert answer.output_text.endswith(SAID) and "/media/images/" not in answer.output_text
    assert isinstance(again.output[0], ImageGenerationCall)
    assert again.output[0].result == call.result  # the same prompt draws the same picture
    # Charged: the tokens, and the picture at the image model's price.
    assert answer.usage is not None
    extra = answer.usage.model_extra or {}
    assert extra["charge_micros"] == mini_charge(answer.usage, PICTURE_MICROS)
    assert extra["server_tool_use_details"] == {"tool_calls_requested": 1, "tool_calls_executed": 1}
    # The response lists the tool with OpenAI's defaults.
    assert answer.tools[0].model_dump(exclude_none=True) == {
        "type": "image_generation",
        "background": "auto",
        "moderation": "auto",
        "output_compression": 100,
        "output_format": "png",
        "partial_images": 0,
        "quality": "auto",
        "size": "auto",
    }


def test_without_a_picture_to_make_the_model_does_not_call_it(tenant: Tenant) -> None:
    answer = ask(tenant, input="What is the capital of France?", tools=[TOOL])
    assert [item["type"] for item in answer["output"]] == ["message"]


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"size": "1536x1024"}, ("PNG", "RGB", (1536, 1024))),
        ({"output_format": "jpeg", "output_compression": 40}, ("JPEG", "RGB", (1024, 1024))),
        ({"output_format": "webp", "size": "1024x1536"}, ("WEBP", "RGB", (1024, 1536))),
        ({"background": "transparent"}, ("PNG", "RGBA", (1024, 1024))),
        ({"background": "transparent", "output_format": "webp"}, ("WEBP", "RGBA", (1024, 1024))),
    ],
)
def test_the_settings_make_the_picture(
    tenant: Tenant, settings: dict[str, Any], expected: tuple[str, str, tuple[int, int]]
) -> None:
    call = ask(tenant, tools=[{**TOOL, **settings}])["output"][0]
    image = image_of(call["result"])
    assert (image.format, image.mode, image.size) == expected
    assert call["output_format"] == settings.get("output_format", "png")
    assert call["size"] == "{}x{}".format(*expected[2])
    if expected[1] == "RGBA":  # the corners are clear, the middle is not
        assert call["background"] == "transparent"
        assert image.getpixel((0, 0))[3] == 0  # type: ignore[index]
        assert image.getpixel((image.width // 2, image.height // 2))[3] == 255  # type: ignore[index]


def test_a_jpeg_at_a_lower_compression_is_smaller(tenant: Tenant) -> None:
    sizes = [
        len(ask(tenant, tools=[{**TOOL, "output_format": "jpeg", "output_compression": q}])
            ["output"][0]["result"])
        for q in (10, 95)
    ]  # fmt: skip
    assert sizes[0] < sizes[1]


def test_a_stream_shows_the_calls_events_and_partial_images(client: openai.OpenAI) -> None:
    tools: Any = [{**TOOL, "partial_images": 2, "size": "64x48"}]
    with client.responses.stream(model=MINI, input=ASK, tools=tools) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [event.type for event in events]
    assert kinds[:9] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.image_generation_call.in_progress",
        "response.image_generation_call.generating",
        "response.image_generation_call.partial_image",
        "response.image_generation_call.partial_image",
        "response.image_generation_call.completed",
        "response.output_item.done",
    ]
    assert [event.sequence_number for event in events] == list(range(len(events)))
    added, done = events[2], events[8]
    assert added.item.type == "image_generation_call" and added.item.status == "in_progress"
    assert getattr(added.item, "result", "absent") is None
    call = final.output[0]
    assert isinstance(call, ImageGenerationCall) and call.result is not None
    assert done.item.model_dump() == call.model_dump()
    partials = [e for e in events if e.type == "response.image_generation_call.partial_image"]
    whole = image_of(call.result).convert("RGB")
    for index, event in enumerate(partials):
        assert (event.partial_image_index, event.output_index, event.item_id) == (index, 0, call.id)
        assert (event.size, event.output_format) == ("64x48", "png")
        partial = image_of(event.partial_image_b64).convert("RGB")
        drawn = 48 * (index + 1) // 3  # the rows drawn so far: the whole picture's
        assert partial.getpixel((0, 0)) == whole.getpixel((0, 0))
        assert partial.getpixel((0, drawn - 1)) == whole.getpixel((0, drawn - 1))
        assert partial.getpixel((0, 47)) != whole.getpixel((0, 47))
    # The message follows the call, at the next output index.
    message_events = [e for e in events if getattr(e, "output_index", 0) == 1]
    assert message_events and message_events[0].type == "response.output_item.added"
    assert final.output_text.endswith(SAID)
    whole_answer = client.responses.create(model=MINI, input=ASK, tools=tools)
    assert whole_answer.output[0].model_dump(exclude={"id"}) == call.model_dump(exclude={"id"})


def test_the_tool_choice_makes_the_model_draw_whatever_was_said(client: openai.OpenAI) -> None:
    function: Any = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
    answer = client.responses.create(
        model=MINI,
        input="Tell me about winter in Norway",
        tools=[function, TOOL],
        tool_choice={"type": "image_generation"},
    )
    assert [item.type for item in answer.output] == ["image_generation_call", "message"]
    assert answer.output_text.endswith(SAID)


def test_openrouters_sdk_reads_the_call(router: OpenRouter) -> None:
    answer = router.beta.responses.send(model=MINI, input=ASK, tools=[TOOL])
    call = answer.output[0]
    assert isinstance(call, OutputImageGenerationCallItem)
    assert call.status == "completed" and call.result is not None
    assert image_of(call.result).size == (1024, 1024)


def test_with_the_image_models_providers_down_the_call_fails_and_is_not_charged(
    client: openai.OpenAI, emulator: EmulatorHandle
) -> None:
    with emulator.providers.down("azure"):  # openai/gpt-5-image's only provider
        answer = client.responses.create(model=MINI, input=ASK, tools=[TOOL])
        with client.responses.stream(model=MINI, input=ASK, tools=[TOOL]) as stream:
            kinds = [event.type for event in stream]
    call = answer.output[0]
    assert isinstance(call, ImageGenerationCall)
    assert call.status == "failed" and call.result is None
    assert call.error is not None and "unavailable" in call.error.message
    assert answer.output_text.endswith(" I could not make the image.")
    assert answer.usage is not None
    assert (answer.usage.model_extra or {})["charge_micros"] == mini_charge(answer.usage)
    assert kinds[2:5] == [
        "response.output_item.added",
        "response.image_generation_call.in_progress",
        "response.output_item.done",
    ]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"tools": [{**TOOL, "partial_images": 4}]}, "tools[0].partial_images"),
        ({"tools": [{**TOOL, "output_format": "bmp"}]}, "tools[0].output_format"),
        ({"tools": [{**TOOL, "output_format": "gif", "partial_images": 1}]}, "tools[0]"),
        ({"tools": [{**TOOL, "output_format": "gif", "output_compression": 50}]}, "tools[0]"),
        ({"tools": [{**TOOL, "output_format": "gif", "input_image_mask": {}}]}, "tools[0]"),
        ({"tools": [{**TOOL, "output_format": "gif", "frame_count": 0}]}, "tools[0].frame_count"),
        ({"tools": [{**TOOL, "frame_count": 3}]}, "tools[0]"),
        (
            {"tools": [{**TOOL, "output_format": "gif", "frame_count": 40}]},  # 42M pixels
            "tools[0].frame_count",
        ),
        ({"tools": [{**TOOL, "svg": {"model": "gpt-5"}}]}, "tools[0]"),
        (
            {"tools": [{**TOOL, "background": "transparent", "output_format": "svg"}]},
            "tools[0]",
        ),
        ({"tools": [{**TOOL, "size": "huge"}]}, "tools[0].size"),
        ({"tools": [{**TOOL, "quality": "best"}]}, "tools[0].quality"),
        (
            {"tools": [{**TOOL, "background": "transparent", "output_format": "jpeg"}]},
            "tools[0]",
        ),
        ({"tools": [TOOL, TOOL]}, "tools[1]"),
        ({"tool_choice": {"type": "image_generation"}}, "tool_choice"),
    ],
)
def test_bad_settings_are_refused_naming_them(
    tenant: Tenant, body: dict[str, Any], param: str
) -> None:
    with tenant.client() as http:
        refused = http.post("/responses", json={"model": MINI, "input": ASK, **body})
    assert assert_error(refused, 400, "invalid_request")["param"] == param


def test_an_animated_gif_and_an_svg_are_drawn(client: openai.OpenAI) -> None:
    """GIF: 9 frames of 200 ms by default, the duration rounded to 10 ms. SVG: the
    gradient as vector text, its partial images SVGs too."""
    gif = picture_call(
        client.responses.create(
            model=MINI, input=ASK, tools=[{**TOOL, "output_format": "gif", "size": "64x48"}]
        )
    )
    image = image_of(gif.result or "")
    assert (gif.output_format, image.format, image.size) == ("gif", "GIF", (64, 48))
    assert (image.n_frames, image.info["duration"]) == (9, 200)  # type: ignore[attr-defined]
    timed = {**TOOL, "output_format": "gif", "frame_count": 3, "frame_duration_ms": 125}
    image = image_of(
        picture_call(client.responses.create(model=MINI, input=ASK, tools=[timed])).result or ""
    )
    assert (image.n_frames, image.info["duration"]) == (3, 130)  # type: ignore[attr-defined]
    vector = {**TOOL, "output_format": "svg", "size": "64x48", "partial_images": 1}
    with client.responses.stream(model=MINI, input=ASK, tools=[vector]) as stream:
        partials = [e.partial_image_b64 for e in stream if e.type.endswith("partial_image")]
        svg = picture_call(stream.get_final_response())
    assert svg.output_format == "svg"
    text = base64.b64decode(svg.result or "").decode()
    assert text.startswith("<svg ") and 'width="64" height="48"' in text
    assert [base64.b64decode(p)[:5] for p in partials] == [b"<svg "]


def picture_call(response: Any) -> ImageGenerationCall:
    call = response.output[0]
    assert isinstance(call, ImageGenerationCall) and call.status == "completed"
    return call


def test_chat_has_no_such_tool(tenant: Tenant) -> None:
    body = {"model": MINI, "messages": [{"role": "user", "content": ASK}], "tools": [TOOL]}
    with tenant.client() as http:
        refused = http.post("/chat/completions", json=body)
    assert refused.status_code == 400 and "image_generation" in refused.text


def test_the_call_sent_back_is_accepted_and_the_next_turn_draws_nothing(
    tenant: Tenant,
) -> None:
    first = ask(tenant, tools=[TOOL])
    items = [{"role": "user", "content": ASK}, *first["output"]]
    items.append({"role": "user", "content": "Thanks, what breed is it?"})
    follow = ask(tenant, input=items, tools=[TOOL])
    assert [item["type"] for item in follow["output"]] == ["message"]


def test_the_quote_and_the_hold_cover_the_picture(tenant: Tenant) -> None:
    body = {"endpoint": "responses", "model": MINI, "input": ASK, "max_output_tokens": 10}
    with tenant.client() as http:
        plain = http.post("/ai-gateway/quote", json=body).json()
        drawn = http.post("/ai-gateway/quote", json={**body, "tools": [TOOL]}).json()
    assert drawn["hold_micros"] - plain["hold_micros"] >= PICTURE_MICROS


@pytest.mark.parametrize(
    ("settings", "micros"),
    [
        ({"quality": "low"}, 10_880),  # 272 tokens
        ({"quality": "medium"}, 42_240),  # 1,056
        ({"quality": "auto", "size": "1024x1536"}, 249_600),  # high: 6,240
        ({"quality": "xhigh"}, PICTURE_MICROS),  # as high: OpenAI has not published its count
        # OpenAI's name: openai/gpt-5-image stands for it.
        ({"model": "gpt-image-1.5", "quality": "high"}, PICTURE_MICROS),
        # A catalog image model: its own price, and Gemini's 1,290 tokens whatever the quality.
        ({"model": "google/gemini-2.5-flash-image", "quality": "high"}, 38_700),
    ],
)
def test_the_model_quality_and_size_price_the_picture(
    client: openai.OpenAI, settings: dict[str, Any], micros: int
) -> None:
    answer = client.responses.create(model=MINI, input=ASK, tools=[{**TOOL, **settings}])
    assert isinstance(answer.output[0], ImageGenerationCall)
    assert answer.output[0].status == "completed"
    assert answer.usage is not None
    assert (answer.usage.model_extra or {})["charge_micros"] == mini_charge(answer.usage, micros)
