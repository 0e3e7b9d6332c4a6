"""Audio parts (`input_audio`) are checked as OpenRouter's SDKs type them (base64
`data` and a `format`) and taken, not heard: the answer and its tokens are those of the
text beside them."""

from __future__ import annotations

import base64
from typing import Any

import openai
import pytest

from emulator.testing import Tenant
from tests.helpers import assert_error

WAV = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt ").decode()
AUDIO = {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}
TEXT = {"type": "text", "text": "What is said in this clip?"}


def chat(parts: list[Any]) -> dict[str, Any]:
    return {"model": "openai/gpt-4o-mini", "messages": [{"role": "user", "content": parts}]}


def responses(parts: list[Any]) -> dict[str, Any]:
    text = {"type": "input_text", "text": TEXT["text"]}
    swapped = [text if part is TEXT else part for part in parts]
    return {"model": "openai/gpt-4o-mini", "input": [{"role": "user", "content": swapped}]}


@pytest.mark.parametrize(("path", "body"), [("/chat/completions", chat), ("/responses", responses)])
@pytest.mark.parametrize(
    ("part", "param"),
    [
        ({"type": "input_audio"}, "content[1]"),
        ({"type": "input_audio", "input_audio": {"data": "not base64!", "format": "wav"}},
         "content[1].input_audio.data"),
        ({"type": "input_audio", "input_audio": {"data": WAV}}, "content[1].input_audio.format"),
        ({"type": "input_audio", "input_audio": {"data": "", "format": "wav"}},
         "content[1].input_audio.data"),
    ],
    ids=["no-audio", "not-base64", "no-format", "empty"],
)  # fmt: skip
def test_a_malformed_audio_part_is_400_naming_it(
    tenant: Tenant, path: str, body: Any, part: dict[str, Any], param: str
) -> None:
    with tenant.client() as http:
        refused = http.post(path, json=body([TEXT, part]))
    assert assert_error(refused, 400, "invalid_request")["param"].endswith(param)


def test_an_audio_part_is_taken_not_heard(client: openai.OpenAI, tenant: Tenant) -> None:
    with_audio = client.chat.completions.create(**chat([TEXT, AUDIO]))
    without = client.chat.completions.create(**chat([TEXT]))
    assert with_audio.choices[0].message.content == without.choices[0].message.content
    assert with_audio.usage is not None and without.usage is not None
    assert with_audio.usage.prompt_tokens == without.usage.prompt_tokens
    with tenant.client() as http:
        answered = http.post("/responses", json=responses([TEXT, AUDIO]))
    assert answered.status_code == 200, answered.text
