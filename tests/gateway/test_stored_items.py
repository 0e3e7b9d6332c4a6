"""Stored responses (`store`, the default): their output items can be named by
`item_reference` in a later input, by the account that was given them."""

from __future__ import annotations

from typing import Any

import httpx
import openai

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

QUESTION = {"role": "user", "content": "Explain how database indexes speed up queries"}
FOLLOW_UP = {"role": "user", "content": "And B-trees?"}


def respond(http: httpx.Client, **body: Any) -> httpx.Response:
    return http.post("/responses", json={"model": "openai/gpt-4o", **body})


def test_a_reference_reads_as_the_item_it_names(client: openai.OpenAI) -> None:
    first = client.responses.create(model="openai/gpt-4o", input=[QUESTION])  # type: ignore[list-item]
    assert first.store is True
    message = first.output[0]
    referenced = client.responses.create(
        model="openai/gpt-4o",
        input=[QUESTION, {"type": "item_reference", "id": message.id}, FOLLOW_UP],  # type: ignore[list-item]
    )
    inline = client.responses.create(
        model="openai/gpt-4o",
        input=[QUESTION, message.model_dump(exclude_none=True), FOLLOW_UP],  # type: ignore[list-item]
    )
    assert referenced.output_text == inline.output_text
    assert referenced.usage == inline.usage


def test_streamed_and_tool_call_items_are_kept(client: openai.OpenAI) -> None:
    tool = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
    events = list(
        client.responses.create(
            model="openai/gpt-4o",
            input=[QUESTION],  # type: ignore[list-item]
            tools=[tool],  # type: ignore[list-item]
            tool_choice="required",
            stream=True,
        )
    )
    done = events[-1].response  # type: ignore[union-attr]
    call = done.output[0]
    assert call.type == "function_call"
    answer = client.responses.create(
        model="openai/gpt-4o",
        input=[  # type: ignore[list-item]
            QUESTION,
            {"type": "item_reference", "id": call.id},
            {"type": "function_call_output", "call_id": call.call_id, "output": "42"},
        ],
    )
    assert "42" in answer.output_text  # the call was read back: the result is answered


def test_what_was_not_kept_cannot_be_named(tenant: Tenant, emulator: EmulatorHandle) -> None:
    other = emulator.create_tenant()
    with tenant.client() as http, other.client() as stranger:
        unstored = respond(http, input=[QUESTION], store=False).json()
        assert unstored["store"] is False
        kept = respond(http, input=[QUESTION]).json()
        for who, item_id in (
            (http, unstored["output"][0]["id"]),
            (stranger, kept["output"][0]["id"]),
        ):
            refused = respond(who, input=[QUESTION, {"type": "item_reference", "id": item_id}])
            error = assert_error(refused, 400, "item_not_found")
            assert error["param"] == "input[1].id" and item_id in error["message"]
        missing = respond(http, input=[{"type": "item_reference"}])
        assert assert_error(missing, 422, "invalid_request")["param"] == "input[0]"


def test_counting_and_quoting_read_references_too(tenant: Tenant) -> None:
    with tenant.client() as http:
        kept = respond(http, input=[QUESTION]).json()
        reference = {"type": "item_reference", "id": kept["output"][0]["id"]}
        inline = {"type": "message", "role": "assistant", "content": kept["output_text"]}
        for path in ("/responses/input_tokens", "/ai-gateway/quote"):
            counted = [
                http.post(path, json={"model": "openai/gpt-4o", "input": [QUESTION, item]})
                for item in (reference, inline)
            ]
            assert counted[0].status_code == 200, counted[0].text
            assert counted[0].json() == counted[1].json()
