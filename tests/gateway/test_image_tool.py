"""OpenRouter's `openrouter:image_generation` server tool through HTTP and the official
clients: the model calls it when asked for a picture, the picture is served by the
emulator, the answer shows it, the responses format shows the call as an output item,
and the image model's price of the picture is charged, held and quoted."""

from __future__ import annotations

import base64
import io
import json
import re
from typing import Any

import anthropic
import httpx
import openai
import pytest
from openrouter import OpenRouter
from openrouter.components import OutputImageGenerationServerToolItem
from PIL import Image

from emulator.billing.pricing import Fees, charge_for
from emulator.testing import EmulatorHandle, Tenant
from tests.gateway.test_image_output import png_of
from tests.helpers import assert_error

MINI = "openai/gpt-4o-mini"  # openai (responses format), 150,000 / 600,000 micros per Mtok
FEES = Fees(5.5, 20)
TOOL = {"type": "openrouter:image_generation"}
ASK = "Draw a picture of a red fox in the snow"
# One picture of the default model, openai/gpt-5-image, at 40,000,000 micros a million
# output tokens: 4,160 tokens at quality high (the default) and 1024x1024, as gpt-image-1.
PICTURE_MICROS = 166_400
SHOWN = re.compile(r"\n\nHere is the image:\n\n!\[([^\]]*)\]\((http://[^)]+\.png)\)$")


def chat(content: str, **body: Any) -> dict[str, Any]:
    return {"model": MINI, "messages": [{"role": "user", "content": content}], **body}


def picture(url: str) -> tuple[int, int, bytes]:
    """(width, height, pixel rows) of the picture at `url`, fetched without a key."""
    fetched = httpx.get(url)
    assert fetched.status_code == 200, fetched.text
    assert fetched.headers["content-type"] == "image/png"
    return png_of("data:image/png;base64," + base64.b64encode(fetched.content).decode())


def shown(text: str) -> tuple[str, str]:
    """The (alt text, URL) of the picture an answer ends with."""
    match = SHOWN.search(text)
    assert match, text
    return match[1], match[2]


def test_the_model_draws_when_asked_and_the_picture_is_served_and_charged(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    answer = client.chat.completions.create(**chat(ASK, tools=[TOOL]))
    again = client.chat.completions.create(**chat(ASK, tools=[TOOL]))
    plain = client.chat.completions.create(**chat(ASK))
    text = answer.choices[0].message.content or ""
    alt, url = shown(text)
    assert alt == "Draw a picture of a red fox in"
    assert url.startswith(client.base_url.scheme + "://" + client.base_url.host)
    assert "/media/images/" in url and (again.choices[0].message.content or "") == text
    assert picture(url)[:2] == (1024, 1024)
    assert answer.choices[0].finish_reason == "stop" and not answer.choices[0].message.tool_calls
    assert "Here is the image" not in (plain.choices[0].message.content or "")
    usage = answer.usage
    assert usage is not None and plain.usage is not None
    assert usage.prompt_tokens > plain.usage.prompt_tokens + 10  # what the tool said
    extra = usage.model_extra or {}
    assert extra["server_tool_use_details"] == {"tool_calls_requested": 1, "tool_calls_executed": 1}
    tokens = usage.prompt_tokens, usage.completion_tokens
    charged = charge_for(*tokens, 150_000, 600_000, FEES, tool_micros=PICTURE_MICROS)
    assert extra["charge_micros"] == charged.charge_micros
    assert charged.provider_cost_micros > PICTURE_MICROS
    with tenant.client() as http:
        event = http.get(f"/ai-gateway/usage/{answer.id}").json()
        quote = http.post("/ai-gateway/quote", json=chat(ASK, tools=[TOOL])).json()
    assert event["charge_micros"] == charged.charge_micros
    assert event["provider_cost_micros"] == charged.provider_cost_micros
    assert event["metadata"]["image_generation_micros"] == PICTURE_MICROS
    assert quote["estimated_input_tokens"] == usage.prompt_tokens
    assert quote["estimated_provider_cost_micros"] > PICTURE_MICROS
    assert quote["hold_micros"] >= charged.charge_micros


@pytest.mark.parametrize(
    ("content", "extra"),
    [
        ("What is the capital of France?", {}),  # nothing to draw
        (ASK, {"tool_choice": "none"}),
    ],
)
def test_the_model_does_not_call_it_without_a_picture_to_make(
    client: openai.OpenAI, content: str, extra: dict[str, Any]
) -> None:
    answer = client.chat.completions.create(**chat(content, tools=[TOOL], **extra))
    assert "/media/images/" not in (answer.choices[0].message.content or "")
    assert answer.usage is not None
    assert "server_tool_use_details" not in (answer.usage.model_extra or {})


def test_a_required_tool_choice_draws_whatever_was_said(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(
        **chat("A quiet harbour at dawn", tools=[TOOL], tool_choice="required")
    )
    assert shown(answer.choices[0].message.content or "")[0] == "A quiet harbour at dawn"
    # With a function tool too, `required` is the function's call: nothing is drawn.
    function = {"type": "function", "function": {"name": "log", "parameters": {"type": "object"}}}
    called = client.chat.completions.create(
        **chat("A quiet harbour at dawn", tools=[TOOL, function], tool_choice="required")
    )
    assert called.choices[0].finish_reason == "tool_calls"
    assert called.usage is not None
    assert "server_tool_use_details" not in (called.usage.model_extra or {})


def test_anthropics_any_tool_choice_draws_too(claude: anthropic.Anthropic) -> None:
    answer = claude.messages.create(
        model="anthropic/claude-sonnet-4",
        max_tokens=400,
        messages=[{"role": "user", "content": "A quiet harbour at dawn"}],
        tools=[TOOL],  # type: ignore[list-item]
        tool_choice={"type": "any"},
    )
    text = "".join(block.text for block in answer.content if block.type == "text")
    assert shown(text)[0] == "A quiet harbour at dawn"


@pytest.mark.parametrize(
    ("parameters", "size", "micros"),
    [
        # OpenAI's tokens scale with the area: an eighth of 4,160 is 520 tokens.
        ({"size": "512x256"}, (512, 256), 20_800),
        ({"aspect_ratio": "16:9"}, (1344, 768), 163_800),  # 4,095 tokens
        ({"size": "auto", "aspect_ratio": "9:16"}, (768, 1344), 163_800),
        # ... and with the quality: 272 tokens low, 1,056 medium (a 1024x1024 picture).
        ({"quality": "low"}, (1024, 1024), 10_880),
        ({"quality": "medium", "size": "1536x1024"}, (1536, 1024), 63_360),  # 1,584 tokens
        # Gemini's image model: 1,290 tokens at 30,000,000 micros; other settings taken.
        (
            {"model": "google/gemini-2.5-flash-image", "quality": "high", "moderation": "low"},
            (1024, 1024),
            38_700,
        ),
    ],
)
def test_the_tools_parameters_size_and_price_the_picture(
    client: openai.OpenAI, parameters: dict[str, Any], size: tuple[int, int], micros: int
) -> None:
    tool = {**TOOL, "parameters": parameters}
    answer = client.chat.completions.create(**chat(ASK, tools=[tool]))
    assert picture(shown(answer.choices[0].message.content or "")[1])[:2] == size
    assert answer.usage is not None
    tokens = answer.usage.prompt_tokens, answer.usage.completion_tokens
    charged = charge_for(*tokens, 150_000, 600_000, FEES, tool_micros=micros)
    assert (answer.usage.model_extra or {})["charge_micros"] == charged.charge_micros


@pytest.mark.parametrize(
    ("tools", "param"),
    [
        ([{**TOOL, "parameters": {"model": "openai/gpt-4o"}}], "tools[0].parameters.model"),
        ([{**TOOL, "parameters": {"model": "no/such-model"}}], "tools[0].parameters.model"),
        ([{**TOOL, "parameters": {"size": "large"}}], "tools[0].parameters.size"),
        ([{**TOOL, "parameters": {"size": "8192x8192"}}], "tools[0].parameters.size"),
        ([{**TOOL, "parameters": {"aspect_ratio": "7:3"}}], "tools[0].parameters.aspect_ratio"),
        (
            [{**TOOL, "parameters": {"output_compression": 101}}],
            "tools[0].parameters.output_compression",
        ),
        ([TOOL, TOOL], "tools[1]"),
    ],
)
def test_bad_parameters_are_refused_naming_them(
    tenant: Tenant, tools: list[Any], param: str
) -> None:
    with tenant.client() as http:
        refused = http.post("/chat/completions", json=chat(ASK, tools=tools))
    assert assert_error(refused, 400, "invalid_request")["param"] == param


def test_with_the_image_models_providers_down_the_call_fails_and_nothing_is_charged(
    client: openai.OpenAI, emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with emulator.providers.down("azure"):  # openai/gpt-5-image's only provider
        answer = client.chat.completions.create(**chat(ASK, tools=[TOOL]))
        with tenant.client() as http:
            item = http.post("/responses", json={"model": MINI, "input": ASK, "tools": [TOOL]})
    assert (answer.choices[0].message.content or "").endswith(" I could not make the image.")
    assert answer.usage is not None
    extra = answer.usage.model_extra or {}
    assert extra["server_tool_use_details"] == {"tool_calls_requested": 1, "tool_calls_executed": 0}
    tokens = answer.usage.prompt_tokens, answer.usage.completion_tokens
    assert extra["charge_micros"] == charge_for(*tokens, 150_000, 600_000, FEES).charge_micros
    failed = item.json()["output"][0]
    assert failed["type"] == "openrouter:image_generation" and failed["status"] == "failed"
    assert "unavailable" in failed["error"] and "imageUrl" not in failed


# The openai SDK's stream helper dumps the response with its own types, which know
# neither OpenRouter's tools nor its items: pydantic warns (as against OpenRouter).
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
def test_responses_show_the_call_as_an_output_item(
    client: openai.OpenAI, router: OpenRouter, tenant: Tenant
) -> None:
    tools: Any = [{**TOOL, "parameters": {"size": "256x128"}}]
    with tenant.client() as http:
        whole = http.post("/responses", json={"model": MINI, "input": ASK, "tools": tools})
    output = whole.json()["output"]
    assert [item["type"] for item in output] == ["openrouter:image_generation", "message"]
    call = output[0]
    assert call["status"] == "completed" and call["id"].startswith("ig_")
    assert call["prompt"] == ASK
    assert base64.b64decode(call["result"]) == httpx.get(call["imageUrl"]).content
    assert picture(call["imageUrl"])[:2] == (256, 128)
    assert shown(output[1]["content"][0]["text"])[1] == call["imageUrl"]
    # Streamed: the call added and done before the message.
    with client.responses.stream(model=MINI, input=ASK, tools=tools) as stream:
        kinds = [(e.type, getattr(e, "output_index", None)) for e in stream]
        final = stream.get_final_response()
    assert kinds[2:5] == [
        ("response.output_item.added", 0),
        ("response.output_item.done", 0),
        ("response.output_item.added", 1),
    ]
    assert final.output_text == output[1]["content"][0]["text"]
    # OpenRouter's SDK reads it as its own type.
    typed = router.beta.responses.send(model=MINI, input=ASK, tools=tools)
    item = typed.output[0]
    assert isinstance(item, OutputImageGenerationServerToolItem)
    assert item.image_url == call["imageUrl"] and item.status == "completed"


def test_the_call_sent_back_is_accepted_and_the_next_turn_draws_nothing(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    with tenant.client() as http:
        first = http.post("/responses", json={"model": MINI, "input": ASK, "tools": [TOOL]})
        items = [{"role": "user", "content": ASK}, *first.json()["output"]]
        items.append({"role": "user", "content": "Thanks, what breed is it?"})
        follow = http.post("/responses", json={"model": MINI, "input": items, "tools": [TOOL]})
    assert follow.status_code == 200, follow.text
    assert [item["type"] for item in follow.json()["output"]] == ["message"]


def test_a_streamed_chat_answer_shows_the_picture(tenant: Tenant) -> None:
    with tenant.client() as http:
        whole = http.post("/chat/completions", json=chat(ASK, tools=[TOOL])).json()
        streamed = chat(ASK, tools=[TOOL], stream=True)
        with http.stream("POST", "/chat/completions", json=streamed) as s:
            lines = [line for line in s.iter_lines() if line.startswith("data: {")]
    chunks = [json.loads(line.removeprefix("data: ")) for line in lines]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == whole["choices"][0]["message"]["content"]
    assert chunks[-1]["usage"]["charge_micros"] == whole["usage"]["charge_micros"]


def test_messages_draw_too(claude: anthropic.Anthropic) -> None:
    answer = claude.messages.create(
        model="anthropic/claude-sonnet-4",
        max_tokens=400,
        messages=[{"role": "user", "content": "Sketch a logo for my bakery"}],
        tools=[{**TOOL, "parameters": {"aspect_ratio": "3:2"}}],  # type: ignore[list-item]
    )
    text = "".join(block.text for block in answer.content if block.type == "text")
    assert picture(shown(text)[1])[:2] == (1248, 832)


def test_the_hold_covers_the_picture(emulator: EmulatorHandle, tenant: Tenant) -> None:
    """An account that can pay for the text but not the picture is refused before it."""
    with tenant.client() as http:
        quoted = http.post("/ai-gateway/quote", json=chat(ASK, tools=[TOOL], max_tokens=10))
    hold = quoted.json()["hold_micros"]
    assert hold > PICTURE_MICROS
    short = emulator.create_tenant(balance_micros=hold - 1)
    with short.client() as http:
        refused = http.post("/chat/completions", json=chat(ASK, tools=[TOOL], max_tokens=10))
        plain = http.post("/chat/completions", json=chat(ASK, max_tokens=10))
    assert_error(refused, 402, "insufficient_credits")
    assert plain.status_code == 200, plain.text


@pytest.mark.parametrize(
    ("parameters", "ending", "media_type", "mode"),
    [
        ({"output_format": "jpeg"}, "-q80.jpeg", "image/jpeg", "RGB"),
        (
            {"output_format": "webp", "background": "transparent"},
            "-t-q80.webp",
            "image/webp",
            "RGBA",
        ),
        ({"background": "transparent"}, "-t.png", "image/png", "RGBA"),
    ],
)
def test_the_format_and_background_asked_for_are_served(
    tenant: Tenant, parameters: dict[str, Any], ending: str, media_type: str, mode: str
) -> None:
    tool = {**TOOL, "parameters": {"output_compression": 80, **parameters}}
    with tenant.client() as http:
        answer = http.post("/responses", json={"model": MINI, "input": ASK, "tools": [tool]})
    call = answer.json()["output"][0]
    assert call["imageUrl"].endswith(ending)
    fetched = httpx.get(call["imageUrl"])
    assert fetched.headers["content-type"] == media_type
    assert base64.b64decode(call["result"]) == fetched.content
    image = Image.open(io.BytesIO(fetched.content))
    assert (image.mode, image.size) == (mode, (1024, 1024))


def test_a_transparent_jpeg_is_refused(tenant: Tenant) -> None:
    tool = {**TOOL, "parameters": {"output_format": "jpeg", "background": "transparent"}}
    with tenant.client() as http:
        refused = http.post("/chat/completions", json=chat(ASK, tools=[tool]))
    assert assert_error(refused, 400, "invalid_request")["param"] == "tools[0].parameters"


def test_the_picture_is_served_like_a_file(http: httpx.Client) -> None:
    name = "/media/images/ig-64x32-102030-a0b0c0.png"
    whole = http.get(name)
    assert whole.status_code == 200 and whole.headers["content-type"] == "image/png"
    assert png_of("data:image/png;base64," + base64.b64encode(whole.content).decode())[:2] == (
        64,
        32,
    )
    head = http.head(name)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(whole.content))
    part = http.get(name, headers={"Range": "bytes=0-7"})
    assert part.status_code == 206 and part.content == whole.content[:8]
    again = http.get(name, headers={"If-None-Match": whole.headers["etag"]})
    assert again.status_code == 304
    bad_names = (
        "ig-64x32-102030.png",
        "ig-9999x32-102030-a0b0c0.png",
        "ig-8x8-102030-a0b0c0.png",
        "ig-64x32-102030-a0b0c0-q50.png",  # PNG has no quality
        "ig-64x32-102030-a0b0c0-q100.jpeg",  # the best quality is named without it
        "ig-64x32-102030-a0b0c0-t.jpeg",  # JPEG has no transparency
        "ig-64x32-102030-a0b0c0.gif",
    )
    for bad in bad_names:
        assert_error(http.get(f"/media/images/{bad}"), 404, "not_found")


def test_the_link_follows_the_address_the_client_reached(tenant: Tenant) -> None:
    """A client on another machine (`--host 0.0.0.0`, reached as http://devbox:4010) is
    given links it can follow, as the video service's media links are."""
    with tenant.client() as http:
        answer = http.post(
            "/chat/completions", json=chat(ASK, tools=[TOOL]), headers={"Host": "devbox:4010"}
        )
        url = shown(answer.json()["choices"][0]["message"]["content"])[1]
        assert url.startswith("http://devbox:4010/media/images/ig-")
        direct = http.get(url.replace("http://devbox:4010", str(http.base_url).split("/api")[0]))
    assert direct.status_code == 200 and direct.headers["content-type"] == "image/png"
