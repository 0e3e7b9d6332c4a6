"""Images in responses answers (`gateway.image_output`): OpenRouter's `modalities` with
`image` on `/responses`. The image is an `image_generation_call` output item after the
message (OpenAI's item: `result` the PNG's base64), streamed as OpenAI streams one, its
1,290 tokens output tokens at the route's image price, as on chat."""

from __future__ import annotations

import base64
from typing import Any

import openai
import pytest
from openrouter import OpenRouter

from emulator.gateway.image_output import TOKENS_PER_IMAGE
from emulator.gateway.tokens import IMAGE_TOKENS
from emulator.testing import EmulatorHandle, Tenant
from tests.gateway.test_image_output import IMAGE_MODEL, draw, images_of, png_of
from tests.helpers import assert_error

ASK = {"modalities": ["image", "text"]}


def drawn(response: Any) -> list[Any]:
    return [item for item in response.output if item.type == "image_generation_call"]


def test_a_response_carries_the_image_as_an_image_generation_call(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model=IMAGE_MODEL,
        input="Draw a lighthouse at dusk",
        extra_body={**ASK, "image_config": {"aspect_ratio": "16:9"}},
    )
    assert [item.type for item in response.output] == ["message", "image_generation_call"]
    (image,) = drawn(response)
    assert image.status == "completed" and image.id.startswith("ig_")
    assert image.output_format == "png" and image.size == "1344x768"
    url = "data:image/png;base64," + image.result
    assert png_of(url)[:2] == (1344, 768)
    assert response.output_text  # the text beside it, as asked
    usage = response.usage
    assert usage is not None
    assert (usage.output_tokens_details.model_extra or {})["image_tokens"] == TOKENS_PER_IMAGE
    # The image's tokens at the route's image price (30 USD a million), the text's at
    # the completion price (2.5 USD a million), as on chat.
    text_tokens = usage.output_tokens - TOKENS_PER_IMAGE
    expected = TOKENS_PER_IMAGE * 30_000_000 + text_tokens * 2_500_000
    costs = (usage.model_extra or {})["cost_details"]
    assert round(costs["upstream_inference_output_cost"] * 1e12) == expected


def test_the_same_image_and_text_as_chat(client: openai.OpenAI) -> None:
    """The same prompt gives the same text and the same bytes through either API."""
    chat = client.chat.completions.create(**draw())
    response = client.responses.create(
        model=IMAGE_MODEL, input=[{"role": "user", "content": "Draw a lighthouse at dusk"}],
        extra_body=ASK,
    )  # fmt: skip
    (image,) = drawn(response)
    assert images_of(chat.choices[0].message) == ["data:image/png;base64," + image.result]
    assert response.output_text == chat.choices[0].message.content


def test_image_alone_has_no_message(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model=IMAGE_MODEL, input="A lighthouse", extra_body={"modalities": ["image"]}
    )
    assert [item.type for item in response.output] == ["image_generation_call"]
    assert response.output_text == ""
    assert response.usage is not None and response.usage.output_tokens == TOKENS_PER_IMAGE


def test_the_text_cut_at_max_output_tokens_is_incomplete_the_image_is_not(
    client: openai.OpenAI,
) -> None:
    response = client.responses.create(
        model=IMAGE_MODEL, input="Draw a lighthouse", max_output_tokens=16, extra_body=ASK
    )
    assert response.status == "incomplete"
    message, image = response.output
    assert (message.status, image.status) == ("incomplete", "completed")
    assert response.usage is not None
    assert response.usage.output_tokens == 16 + TOKENS_PER_IMAGE


def test_a_stream_adds_the_image_as_openai_streams_one(client: openai.OpenAI) -> None:
    whole = client.responses.create(model=IMAGE_MODEL, input="Draw a lighthouse", extra_body=ASK)
    with client.responses.stream(
        model=IMAGE_MODEL, input="Draw a lighthouse", extra_body=ASK
    ) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    at = kinds.index("response.image_generation_call.in_progress")
    assert kinds[at - 1 : at + 4] == [
        "response.output_item.added",
        "response.image_generation_call.in_progress",
        "response.image_generation_call.generating",
        "response.image_generation_call.completed",
        "response.output_item.done",
    ]
    added, done = events[at - 1], events[at + 3]
    assert added.item.status == "in_progress" and added.item.result is None  # type: ignore[union-attr]
    assert done.output_index == 1 and done.item.result == drawn(whole)[0].result  # type: ignore[union-attr]
    # The message, opened before the image, is done after it, at the end.
    assert kinds.index("response.output_text.done") > at + 3
    assert [item.type for item in final.output] == ["message", "image_generation_call"]
    assert drawn(final)[0].result == drawn(whole)[0].result
    assert final.output_text == whole.output_text
    assert final.usage is not None and whole.usage is not None
    assert (final.usage.model_extra or {})["charge_micros"] == (whole.usage.model_extra or {})[
        "charge_micros"
    ]


def test_a_stream_of_the_image_alone_has_no_message(client: openai.OpenAI) -> None:
    with client.responses.stream(
        model=IMAGE_MODEL, input="A lighthouse", extra_body={"modalities": ["image"]}
    ) as stream:
        added = [e.item.type for e in stream if e.type == "response.output_item.added"]
        final = stream.get_final_response()
    assert added == ["image_generation_call"]
    assert [item.type for item in final.output] == ["image_generation_call"]


@pytest.mark.parametrize(("cut", "images"), [(6, 0), (7, 1)])
def test_a_cut_stream_bills_the_image_only_once_it_went_out(
    tenant: Tenant, cut: int, images: int
) -> None:
    """`["image"]` alone: created and in progress, then the image's five events, the
    last (number 6) with the image: cut before it, the image is neither sent nor billed."""
    body = {"model": IMAGE_MODEL, "input": "A lighthouse", "modalities": ["image"]}
    with tenant.client(headers={"X-Emulator-Fault": f"cut={cut}"}) as http:
        served = http.post("/responses", json={**body, "stream": True})
        assert served.status_code == 200
        stats = http.get("/generation", params={"id": served.headers["X-Generation-Id"]})
    data = stats.json()["data"]
    assert served.text.count('"result":"iVBOR') == images  # a PNG's base64
    assert data["tokens_completion"] == images * TOKENS_PER_IMAGE
    assert data["num_media_completion"] == (images or None)


def test_the_image_sent_back_is_seen_again_and_edited(client: openai.OpenAI) -> None:
    first = client.responses.create(model=IMAGE_MODEL, input="Draw a lighthouse", extra_body=ASK)
    turn = [{"role": "user", "content": "Draw a lighthouse"}]
    sent_back = [item.model_dump(exclude_none=True) for item in first.output]
    again = [*turn, *sent_back, {"role": "user", "content": "Now at dawn"}]
    without = [*turn, *sent_back[:1], {"role": "user", "content": "Now at dawn"}]
    second = client.responses.create(model=IMAGE_MODEL, input=again, extra_body=ASK)  # type: ignore[arg-type]
    plain = client.responses.create(model=IMAGE_MODEL, input=without, extra_body=ASK)  # type: ignore[arg-type]
    assert second.usage is not None and plain.usage is not None
    # One image more in the prompt, in the same assistant turn as its text.
    assert second.usage.input_tokens == plain.usage.input_tokens + IMAGE_TOKENS
    # The new image is an edit of it: the first image's top colour kept.
    first_top = png_of("data:image/png;base64," + drawn(first)[0].result)[2][1:4]
    assert png_of("data:image/png;base64," + drawn(second)[0].result)[2][1:4] == first_top
    assert png_of("data:image/png;base64," + drawn(plain)[0].result)[2][1:4] != first_top


def test_a_stored_response_keeps_its_image(client: openai.OpenAI) -> None:
    made = client.responses.create(
        model=IMAGE_MODEL, input="Draw a lighthouse", store=True, extra_body=ASK
    )
    kept = client.responses.retrieve(made.id)
    assert drawn(kept)[0].result == drawn(made)[0].result
    follow = client.responses.create(
        model=IMAGE_MODEL, input="Now at dawn", previous_response_id=made.id, extra_body=ASK
    )
    assert len(drawn(follow)) == 1


def test_the_hold_and_the_quote_count_the_image(tenant: Tenant) -> None:
    body = {"model": IMAGE_MODEL, "input": "Draw a lighthouse", "max_output_tokens": 10}
    with tenant.client() as http:
        with_image = http.post("/ai-gateway/quote", json={**body, **ASK, "endpoint": "responses"})
        text_only = http.post("/ai-gateway/quote", json={**body, "endpoint": "responses"})
    assert with_image.status_code == 200, with_image.text
    difference = with_image.json()["hold_micros"] - text_only.json()["hold_micros"]
    assert difference >= TOKENS_PER_IMAGE * 30  # 1,290 tokens at 30 micros at least


def test_a_model_without_image_output_has_no_route(tenant: Tenant) -> None:
    body = {"model": "openai/gpt-4o-mini", "input": "Draw", **ASK}
    with tenant.client() as http:
        refused = http.post("/responses", json=body)
    error = assert_error(refused, 503, "no_route_available")
    assert error["param"] == "modalities" and "output_modalities" in error["message"]


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"image_config": {"aspect_ratio": "9:9"}}, "image_config.aspect_ratio"),
        ({"modalities": ["image", "video"]}, "modalities[1]"),
    ],
)
def test_bad_image_settings_are_400_naming_them(
    tenant: Tenant, extra: dict[str, Any], param: str
) -> None:
    body = {"model": IMAGE_MODEL, "input": "Draw", **ASK, **extra}
    with tenant.client() as http:
        refused = http.post("/responses", json=body)
    assert assert_error(refused, 400, "invalid_request")["param"] == param


def test_base64_result_decodes_to_a_png(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model=IMAGE_MODEL, input="A lighthouse", extra_body={"modalities": ["image"]}
    )
    png = base64.b64decode(drawn(response)[0].result, validate=True)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_the_responses_format_carries_images_both_ways() -> None:
    """Rendered and parsed back, whole and streamed: the translation loses nothing."""
    from emulator.gateway.canonical import Completion, Finish, ImageDelta, TextDelta
    from emulator.gateway.image_output import data_url, gradient_png
    from emulator.gateway.wire import responses, responses_events

    url = data_url(gradient_png(4, 2, (0, 0, 0), (255, 255, 255)))
    output = 3 + TOKENS_PER_IMAGE
    completion = Completion("Here it is", (), "stop", 5, output)
    completion.images, completion.image_tokens = (url,), TOKENS_PER_IMAGE
    body = responses.render_response(completion, id="resp_x", model="m", created=0)
    assert body["output"][1]["size"] == "4x2"
    (back,) = responses.parse_response(body)
    assert (back.text, back.images, back.image_tokens) == ("Here it is", (url,), TOKENS_PER_IMAGE)
    end = Finish("stop", 5, output, image_tokens=TOKENS_PER_IMAGE)
    sent = [TextDelta("Here it is"), ImageDelta(url), end]
    events = responses_events.render_events(iter(sent), id="resp_x", model="m", created=0)
    parsed = list(responses_events.parse_events(events))
    assert parsed == sent


def test_the_openrouter_sdk_reads_the_image_item(router: OpenRouter) -> None:
    result = router.beta.responses.send(
        model=IMAGE_MODEL,
        input="A lighthouse",
        modalities=["image", "text"],
        image_config={"aspect_ratio": "4:3"},
    )
    images = [item for item in result.output if item.type == "image_generation_call"]
    assert len(images) == 1 and images[0].status == "completed"
    assert png_of("data:image/png;base64," + images[0].result)[:2] == (1184, 864)


def test_a_background_response_carries_the_image_when_done(
    emulator: EmulatorHandle, client: openai.OpenAI
) -> None:
    """Made at once, shown once done: the same image as a foreground request, and its
    stream read again has the image's events."""
    made = client.responses.create(
        model=IMAGE_MODEL, input="A lighthouse", background=True, extra_body=ASK
    )
    foreground = client.responses.create(model=IMAGE_MODEL, input="A lighthouse", extra_body=ASK)
    emulator.advance(60)
    done = client.responses.retrieve(made.id)
    assert done.status == "completed"
    assert drawn(done)[0].result == drawn(foreground)[0].result
    assert done.usage is not None and foreground.usage is not None
    assert done.usage.output_tokens == foreground.usage.output_tokens
    replayed = [e.type for e in client.responses.retrieve(made.id, stream=True)]
    assert "response.image_generation_call.completed" in replayed
