"""Images in chat and responses prompts: an http(s) URL or a base64 data URL of an
image, checked as OpenAI checks them; anything else is a 400 naming the part, unbilled."""

from __future__ import annotations

import base64
from typing import Any

import openai
import pytest

from emulator.testing import Tenant

PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(8)).decode()
GIF = "data:image/gif;base64," + base64.b64encode(b"GIF89a").decode()
BAD_URLS = [
    ("file:///etc/passwd", "Invalid image URL"),
    ("cat.png", "Invalid image URL"),
    ("https:///cat.png", "Invalid image URL"),  # no host
    ("https://x.test/a cat.png", "Invalid image URL"),
    ("data:text/plain;base64,aGVsbG8=", "unsupported MIME type 'text/plain'"),
    ("data:image/png,rawbytes", "Invalid base64 image_url"),
    ("data:image/png;base64,!!!", "Invalid base64 image_url"),
    ("data:image/png;base64,aGVsbG8=", "not an image of type image/png"),  # "hello"
    (GIF.replace("gif", "png", 1), "not an image of type image/png"),
]


def chat_with(image: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": image}]
    return {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": content}]}


def responses_with(image: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "input_text", "text": "What is this?"}, {"type": "input_image", **image}]
    return {"model": "openai/gpt-4o", "input": [{"role": "user", "content": content}]}


def refused(tenant: Tenant, body: dict[str, Any]) -> dict[str, Any]:
    """The 400's error for a chat (`messages`) or responses body."""
    path = "/chat/completions" if "messages" in body else "/responses"
    with tenant.client() as http:
        response = http.post(path, json=body)
    assert response.status_code == 400, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


def spent(tenant: Tenant) -> int:
    """The account's usage so far, in micros."""
    with tenant.client() as http:
        return round(http.get("/credits").json()["data"]["total_usage"] * 1_000_000)


@pytest.mark.parametrize("url", ["https://example.com/cat.png", "http://x.test/a", PNG, GIF])
def test_urls_and_image_data_are_read(client: openai.OpenAI, tenant: Tenant, url: str) -> None:
    before = spent(tenant)
    chat = client.chat.completions.create(**chat_with({"url": url, "detail": "low"}))
    answer = client.responses.create(**responses_with({"image_url": url, "detail": "auto"}))
    assert chat.usage and chat.usage.prompt_tokens > 85  # the image's tokens
    assert answer.usage and answer.usage.input_tokens > 85
    assert spent(tenant) > before  # so the refusals below, unbilled, are measured


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize(("url", "says"), BAD_URLS)
def test_what_is_not_an_image_is_refused_unbilled(
    client: openai.OpenAI, tenant: Tenant, api: str, url: str, says: str
) -> None:
    before = spent(tenant)
    with pytest.raises(openai.BadRequestError) as refused:
        if api == "chat":
            client.chat.completions.create(**chat_with({"url": url}))
        else:
            client.responses.create(**responses_with({"image_url": url}))
    error = refused.value.body
    assert isinstance(error, dict) and says in error["message"], error
    where = "messages[0].content[1].image_url.url" if api == "chat" else "input[0].content[1]"
    assert error["param"] == where
    assert spent(tenant) == before


@pytest.mark.parametrize(
    ("body", "param", "says"),
    [
        (chat_with({"url": PNG, "detail": "medium"}), "image_url.detail", "'auto', 'low'"),
        (responses_with({"image_url": PNG, "detail": "x"}), "[1].detail", "'auto', 'low'"),
        (responses_with({}), "input[0].content[1]", "needs `image_url` or `file_id`"),
    ],
)
def test_detail_is_one_of_three_and_an_image_has_a_source(
    tenant: Tenant, body: dict[str, Any], param: str, says: str
) -> None:
    error = refused(tenant, body)
    assert error["param"].endswith(param) and says in error["message"], error


def test_a_file_id_stands_for_an_image(client: openai.OpenAI, tenant: Tenant) -> None:
    """A `file_id` is never looked up: it counts and is billed as any image is."""
    before = spent(tenant)
    answer = client.responses.create(**responses_with({"file_id": "file-abc", "detail": "auto"}))
    by_url = client.responses.create(**responses_with({"image_url": "https://example.com/a.png"}))
    assert answer.status == "completed" and answer.output_text
    assert answer.usage and by_url.usage
    assert answer.usage.input_tokens == by_url.usage.input_tokens > 85  # the image's tokens
    charges = [a.usage.model_extra["charge_micros"] for a in (answer, by_url) if a.usage]
    assert min(charges) > 0 and spent(tenant) == before + sum(charges)
