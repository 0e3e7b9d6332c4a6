"""Image edits (`gateway.image_sources`): an image model given an image redraws it.

The image is the conversation's last: the user's, or an earlier answer's sent back
(chat's `message.images`, the responses API's `image_generation_call`, by its `id`
alone when it was kept). The edit keeps its top colour and, unless a size is asked
for, its shape; images sent back are read again as images of the prompt. Through HTTP
with the openai and openrouter clients."""

from __future__ import annotations

import base64
import io
from typing import Any

import openai
import pytest
from openai.types.responses.response_output_item import ImageGenerationCall
from openrouter import OpenRouter
from PIL import Image

from emulator.gateway.tokens import IMAGE_TOKENS
from emulator.testing import Tenant
from tests.gateway.test_image_output import IMAGE_MODEL, images_of
from tests.helpers import assert_error

MINI = "openai/gpt-4o-mini"
TOOL: Any = {"type": "image_generation"}
GREEN = (10, 200, 30)


def image_of(b64: str) -> Image.Image:
    image = Image.open(io.BytesIO(base64.b64decode(b64)))
    image.load()
    return image


def top_of(b64: str) -> tuple[int, int, int]:
    red, green, blue = image_of(b64).convert("RGB").getpixel((0, 0))  # type: ignore[misc]
    return red, green, blue


def photo(size: tuple[int, int] = (600, 300), kind: str = "jpeg") -> str:
    """A data URL of a flat green picture, as a user would attach a photo."""
    out = io.BytesIO()
    Image.new("RGB", size, GREEN).save(out, kind.upper())
    return f"data:image/{kind};base64," + base64.b64encode(out.getvalue()).decode()


def with_photo(text: str, url: str) -> list[Any]:
    parts = [{"type": "input_text", "text": text}, {"type": "input_image", "image_url": url}]
    return [{"role": "user", "content": parts}]


def picture_call(response: Any) -> ImageGenerationCall:
    (call,) = [item for item in response.output if isinstance(item, ImageGenerationCall)]
    assert call.result is not None
    return call


# OpenAI's image generation tool


def test_the_tool_edits_the_users_image_keeping_its_shape_and_top(client: openai.OpenAI) -> None:
    url = photo()
    edited = picture_call(
        client.responses.create(
            model=MINI, input=with_photo("Add a hat to this picture", url), tools=[TOOL]
        )
    )
    assert (edited.action, edited.size) == ("edit", "600x300")
    assert image_of(edited.result or "").size == (600, 300)
    assert top_of(edited.result or "") == GREEN
    # Another photo, another edit; the same photo, the same bytes.
    again = client.responses.create(
        model=MINI, input=with_photo("Add a hat to this picture", url), tools=[TOOL]
    )
    assert picture_call(again).result == edited.result
    other = client.responses.create(
        model=MINI, input=with_photo("Add a hat to this picture", photo((400, 400))), tools=[TOOL]
    )
    assert picture_call(other).size == "400x400"
    # A size asked for wins over the image's.
    sized = client.responses.create(
        model=MINI,
        input=with_photo("Add a hat to this picture", url),
        tools=[{**TOOL, "size": "1024x1536"}],
    )
    assert picture_call(sized).size == "1024x1536"
    assert top_of(picture_call(sized).result or "") == GREEN


def test_a_multi_turn_edit_keeps_the_first_pictures_top(client: openai.OpenAI) -> None:
    """OpenAI's multi-turn editing: `previous_response_id`, then the image by its id."""
    first = client.responses.create(
        model=MINI, input="Draw a picture of a cat", tools=[{**TOOL, "size": "1536x1024"}]
    )
    drawn = picture_call(first)
    assert drawn.action == "generate"
    second = client.responses.create(
        model=MINI,
        previous_response_id=first.id,
        input="Now make the picture look like a painting",
        tools=[TOOL],
    )
    edited = picture_call(second)
    assert (edited.action, edited.size) == ("edit", "1536x1024")
    assert top_of(edited.result or "") == top_of(drawn.result or "")
    assert edited.result != drawn.result
    by_id = client.responses.create(
        model=MINI,
        input=[
            {"type": "image_generation_call", "id": drawn.id},
            {"role": "user", "content": "Now make the picture look like a painting"},
        ],
        tools=[TOOL],
    )
    assert picture_call(by_id).action == "edit"
    assert top_of(picture_call(by_id).result or "") == top_of(drawn.result or "")


def test_the_picture_sent_back_counts_as_an_image_of_the_prompt(client: openai.OpenAI) -> None:
    first = client.responses.create(model=MINI, input="Draw a picture of a cat", tools=[TOOL])
    turn: list[Any] = [{"role": "user", "content": "Draw a picture of a cat"}]
    sent_back = [item.model_dump(exclude_none=True) for item in first.output]
    question = {"role": "user", "content": "What breed is it?"}
    seen = client.responses.create(model=MINI, input=[*turn, *sent_back, question])
    unseen = client.responses.create(model=MINI, input=[*turn, sent_back[1], question])
    assert seen.usage is not None and unseen.usage is not None
    # The image, read in the assistant's turn beside its text (no message more).
    assert seen.usage.input_tokens == unseen.usage.input_tokens + IMAGE_TOKENS
    counted = client.responses.input_tokens.count(model=MINI, input=[*turn, *sent_back, question])
    assert counted.input_tokens == seen.usage.input_tokens


def test_action_generate_draws_anew_and_edit_needs_an_image(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    ask = "Add a hat to this picture"
    fresh = client.responses.create(model=MINI, input=ask, tools=[TOOL])
    generated = client.responses.create(
        model=MINI, input=with_photo(ask, photo()), tools=[{**TOOL, "action": "generate"}]
    )
    assert picture_call(generated).action == "generate"
    assert picture_call(generated).result == picture_call(fresh).result  # the photo unread
    with tenant.client() as http:
        before = http.get("/ai-gateway/balance").json()
        refused = http.post(
            "/responses",
            json={"model": MINI, "input": ask, "tools": [{**TOOL, "action": "edit"}]},
        )
        after = http.get("/ai-gateway/balance").json()
    assert_error(refused, 400, "invalid_request")
    assert refused.json()["error"]["param"] == "tools[0].action"
    assert "no image to edit" in refused.json()["error"]["message"]
    assert after == before and after["object"] == "balance"  # nothing held or charged


def test_an_image_the_emulator_cannot_read_is_edited_by_its_name(client: openai.OpenAI) -> None:
    """A URL is never fetched: the edit has the default size, and a top of its own."""
    ask = "Add a hat to this picture"
    one, two = (
        picture_call(
            client.responses.create(
                model=MINI, input=with_photo(ask, f"https://example.com/{name}.png"), tools=[TOOL]
            )
        )
        for name in ("a", "b")
    )
    assert (one.action, one.size) == ("edit", "1024x1024")
    assert top_of(one.result or "") != top_of(two.result or "")


def test_a_streamed_edit_shows_it_in_every_partial(client: openai.OpenAI) -> None:
    with client.responses.stream(
        model=MINI,
        input=with_photo("Add a hat to this picture", photo()),
        tools=[{**TOOL, "partial_images": 2}],
    ) as stream:
        partials = [e.partial_image_b64 for e in stream if e.type.endswith("partial_image")]
        final = stream.get_final_response()
    assert picture_call(final).action == "edit"
    assert [top_of(p) for p in partials] == [GREEN, GREEN]


def test_an_svg_sent_back_is_edited_as_an_svg(client: openai.OpenAI) -> None:
    """An SVG the tool drew, sent back as the SDK gives it, keeps its size and top."""
    svg_tool = {**TOOL, "output_format": "svg", "size": "320x160"}
    first = client.responses.create(model=MINI, input="Draw a picture of a cat", tools=[svg_tool])
    sent_back = [item.model_dump(exclude_none=True) for item in first.output]
    again = [*sent_back, {"role": "user", "content": "Now make the picture blue"}]
    edited = picture_call(client.responses.create(model=MINI, input=again, tools=[TOOL]))
    assert (edited.action, edited.size) == ("edit", "320x160")
    first_svg = base64.b64decode(picture_call(first).result or "").decode()
    top = first_svg.split('stop-color="#', 1)[1][:6]
    assert top_of(edited.result or "") == tuple(bytes.fromhex(top))


def test_bad_images_sent_back_are_400_naming_them(tenant: Tenant) -> None:
    item = {"type": "image_generation_call", "id": "ig_1", "result": "bm90IGFuIGltYWdl"}
    with tenant.client() as http:
        bad = http.post("/responses", json={"model": MINI, "input": [item]})
        unknown = http.post(
            "/responses",
            json={"model": MINI, "input": [{"type": "image_generation_call", "id": "ig_nope"}]},
        )
    assert_error(bad, 400, "invalid_request")
    assert bad.json()["error"]["param"].startswith("input[0]")
    assert "image in base64" in bad.json()["error"]["message"]
    assert_error(unknown, 400, "item_not_found")
    assert unknown.json()["error"]["param"] == "input[0].id"


# OpenRouter's image models on chat (Gemini's "nano banana" edits)


def test_an_image_model_edits_the_users_image(client: openai.OpenAI) -> None:
    content: Any = [
        {"type": "text", "text": "Add a hat"},
        {"type": "image_url", "image_url": {"url": photo()}},
    ]
    answer = client.chat.completions.create(
        model=IMAGE_MODEL,
        messages=[{"role": "user", "content": content}],
        extra_body={"modalities": ["image", "text"]},
    )
    (url,) = images_of(answer.choices[0].message)
    edited = url.partition(",")[2]
    # 2:1 is nearest Gemini's 16:9; the top is the photo's.
    assert image_of(edited).size == (1344, 768) and top_of(edited) == GREEN
    asked = client.chat.completions.create(
        model=IMAGE_MODEL,
        messages=[{"role": "user", "content": content}],
        extra_body={"modalities": ["image", "text"], "image_config": {"aspect_ratio": "1:1"}},
    )
    (square,) = images_of(asked.choices[0].message)
    assert image_of(square.partition(",")[2]).size == (1024, 1024)


def test_an_image_only_answer_sent_back_is_taken_and_edited(router: OpenRouter) -> None:
    """The answer with `modalities: ["image"]` has no content: sent back as the SDK gives
    it, it is a turn of its image alone (it was a 400 needing `content`)."""
    ask: Any = {"role": "user", "content": "Draw a lighthouse"}
    first = router.chat.send(model=IMAGE_MODEL, messages=[ask], modalities=["image"])
    said = first.choices[0].message
    assert said.content is None and said.images
    follow: Any = {"role": "user", "content": "Now at dawn"}
    second = router.chat.send(
        model=IMAGE_MODEL, messages=[ask, said, follow], modalities=["image", "text"]
    )
    without = router.chat.send(model=IMAGE_MODEL, messages=[ask, follow], modalities=["image"])
    assert second.usage is not None and without.usage is not None
    framing = 3  # the assistant's turn: a message of no text and one image
    assert second.usage.prompt_tokens == without.usage.prompt_tokens + framing + IMAGE_TOKENS
    first_top = top_of(said.images[0].image_url.url.partition(",")[2])
    (image,) = second.choices[0].message.images or ()
    assert top_of(image.image_url.url.partition(",")[2]) == first_top


@pytest.mark.parametrize(
    ("message", "param"),
    [
        ({"role": "user", "content": "Hi", "images": []}, "messages[0]"),
        (
            {"role": "assistant", "images": [{"type": "image_url", "image_url": {"url": "x"}}]},
            "messages[0].images[0].image_url.url",
        ),
        (
            {"role": "assistant", "images": [{"type": "image_url"}]},
            "messages[0].images[0].image_url",
        ),
    ],
)
def test_bad_images_on_a_chat_message_are_400_naming_them(
    tenant: Tenant, message: dict[str, Any], param: str
) -> None:
    body = {"model": IMAGE_MODEL, "messages": [message, {"role": "user", "content": "Hi"}]}
    with tenant.client() as http:
        refused = http.post("/chat/completions", json=body)
    assert_error(refused, 400, "invalid_request")
    assert refused.json()["error"]["param"] == param
