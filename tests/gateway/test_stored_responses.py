"""Stored responses (`store`, the default): fetched again, listed, deleted, continued by
`previous_response_id`, their output items named by `item_reference` in a later input,
by the account that was given them."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

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
    (_, _, result) = client.responses.input_items.list(answer.id, order="asc").data
    # OpenAI's ResponseFunctionToolCallOutputItem: "populated when returned via API"
    assert (result.type, result.status, result.id.startswith("fco_")) == (
        "function_call_output",
        "completed",
        True,
    )


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
        assert assert_error(missing, 400, "invalid_request")["param"] == "input[0]"


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


def test_a_stored_response_is_fetched_again_as_it_was_given(client: openai.OpenAI) -> None:
    made = client.responses.create(model="openai/gpt-4o", input="Explain vector clocks")
    again = client.responses.retrieve(made.id)
    assert again.model_dump() == made.model_dump()
    with client.responses.stream(model="openai/gpt-4o", input=[QUESTION]) as stream:  # type: ignore[arg-type]
        streamed = stream.get_final_response()
    again = client.responses.retrieve(streamed.id)
    assert again.model_dump(exclude_none=True) == streamed.model_dump(exclude_none=True)


def test_only_what_was_kept_by_this_account_is_found(
    tenant: Tenant, emulator: EmulatorHandle
) -> None:
    other = emulator.create_tenant()
    with tenant.client() as http, other.client() as stranger:
        unstored = respond(http, input="hi", store=False).json()["id"]
        kept = respond(http, input="hi").json()["id"]
        for who, response_id in ((http, unstored), (stranger, kept), (http, "resp_nope")):
            for method, path in (
                ("GET", ""),
                ("DELETE", ""),
                ("GET", "/input_items"),
                ("POST", "/cancel"),
            ):
                answer = who.request(method, f"/responses/{response_id}{path}")
                error = assert_error(answer, 404, "not_found", "not_found_error")
                assert error["param"] == "response_id" and response_id in error["message"]
            refused = respond(who, input="more", previous_response_id=response_id)
            error = assert_error(refused, 400, "previous_response_not_found")
            assert error["param"] == "previous_response_id"
        assert http.get(f"/responses/{kept}").status_code == 200


def test_a_call_item_is_its_responses_own_when_the_request_repeats(
    client: openai.OpenAI,
) -> None:
    """The same request twice makes the same call (`call_id`) but two items: deleting the
    second response leaves the first one's item to be named (its id was the call's, so
    the second took it over, and its deletion took it away)."""
    tool = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
    body: Any = {"model": "openai/gpt-4o", "input": [QUESTION], "tools": [tool],
                 "tool_choice": "required"}  # fmt: skip
    first, second = client.responses.create(**body), client.responses.create(**body)
    call, again = first.output[0], second.output[0]
    assert call.call_id == again.call_id and call.id != again.id  # type: ignore[union-attr]
    streamed = list(client.responses.create(**body, stream=True))
    done = streamed[-1].response  # type: ignore[union-attr]
    added = next(e for e in streamed if e.type == "response.output_item.added")
    assert added.item.id == done.output[0].id != call.id  # type: ignore[union-attr]
    client.responses.delete(second.id)
    answer = client.responses.create(
        model="openai/gpt-4o",
        input=[  # type: ignore[list-item]
            QUESTION,
            {"type": "item_reference", "id": call.id},
            {"type": "function_call_output", "call_id": call.call_id, "output": "42"},  # type: ignore[union-attr]
        ],
    )
    assert "42" in answer.output_text


def test_a_deleted_response_is_gone_with_its_items(client: openai.OpenAI) -> None:
    made = client.responses.create(model="openai/gpt-4o", input=[QUESTION])  # type: ignore[list-item]
    raw = client.responses.with_raw_response.delete(made.id)
    assert raw.http_response.json() == {"id": made.id, "object": "response", "deleted": True}
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(made.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(made.id)
    for body in (
        {"input": [QUESTION, {"type": "item_reference", "id": made.output[0].id}]},
        {"input": "more", "previous_response_id": made.id},
    ):
        with pytest.raises(openai.BadRequestError):
            client.responses.create(model="openai/gpt-4o", **body)  # type: ignore[call-overload]


def test_input_items_list_what_the_response_read(client: openai.OpenAI) -> None:
    """A response's own input; continued by `previous_response_id`, the earlier turns'
    input and output first, as OpenAI lists them."""
    first = client.responses.create(model="openai/gpt-4o", input="Explain vector clocks")
    (item,) = client.responses.input_items.list(first.id).data
    assert item.type == "message" and item.role == "user" and item.id.startswith("msg_")
    assert [part.model_dump(exclude_none=True) for part in item.content] == [
        {"type": "input_text", "text": "Explain vector clocks"}
    ]
    turns = [{"role": "user", "content": f"question {n}"} for n in range(5)]
    second = client.responses.create(
        model="openai/gpt-4o",
        input=turns,
        previous_response_id=first.id,  # type: ignore[arg-type]
    )
    newest_first = [
        (i.role, i.content[0].text)  # type: ignore[union-attr]
        for i in client.responses.input_items.list(second.id, limit=2)
    ]  # paged by 2
    assert newest_first == [
        *(("user", f"question {n}") for n in range(4, -1, -1)),
        ("assistant", first.output_text),
        ("user", "Explain vector clocks"),
    ]
    oldest_first = client.responses.input_items.list(second.id, order="asc", limit=100)
    assert len(oldest_first.data) == 7  # the first turn's two items, then five
    assert [i.id for i in oldest_first.data[:2]] == [item.id, first.output[0].id]
    assert oldest_first.data[1].content[0].type == "output_text"  # type: ignore[union-attr]
    assert oldest_first.has_more is False


def test_input_items_paging_is_checked(tenant: Tenant) -> None:
    with tenant.client() as http:
        made = respond(http, input=[QUESTION, FOLLOW_UP]).json()["id"]
        page = http.get(f"/responses/{made}/input_items", params={"limit": 1}).json()
        assert page["has_more"] is True and page["next_cursor"] == page["last_id"]
        rest = http.get(
            f"/responses/{made}/input_items", params={"cursor": page["next_cursor"]}
        ).json()
        assert [i["content"][0]["text"] for i in rest["data"]] == [QUESTION["content"]]
        assert rest["has_more"] is False and rest["next_cursor"] is None
        for params, param in (
            ({"after": "msg_unknown"}, "after"),
            ({"limit": 0}, "limit"),
            ({"order": "sideways"}, "order"),
        ):
            answer = http.get(f"/responses/{made}/input_items", params=params)
            error = assert_error(answer, 400, "invalid_request")
            assert param in (error["param"] or "") + error["message"]


def test_previous_response_id_reads_the_earlier_turns(client: openai.OpenAI) -> None:
    first = client.responses.create(
        model="openai/gpt-4o",
        input=[QUESTION],
        instructions="Answer in French",  # type: ignore[arg-type]
    )
    second = client.responses.create(
        model="openai/gpt-4o",
        input=[FOLLOW_UP],
        previous_response_id=first.id,  # type: ignore[arg-type]
    )
    assert second.previous_response_id == first.id
    # What the model read: the first turn's input and output, then its own input (not
    # the first turn's instructions, which only apply to it).
    history: Any = [QUESTION, *(i.model_dump(exclude_none=True) for i in first.output), FOLLOW_UP]
    inline = client.responses.create(model="openai/gpt-4o", input=history)
    assert second.output_text == inline.output_text
    assert second.usage == inline.usage
    assert second.usage is not None and first.usage is not None
    assert second.usage.input_tokens > first.usage.input_tokens  # the history is billed
    counted = client.responses.input_tokens.count(
        model="openai/gpt-4o",
        input=[FOLLOW_UP],
        previous_response_id=first.id,  # type: ignore[list-item]
    )
    assert counted.input_tokens == second.usage.input_tokens
    third = client.responses.create(
        model="openai/gpt-4o", input="And hash indexes?", previous_response_id=second.id
    )
    history += [*(i.model_dump(exclude_none=True) for i in second.output)]
    history.append({"role": "user", "content": "And hash indexes?"})
    assert third.usage == client.responses.create(model="openai/gpt-4o", input=history).usage


def test_the_quote_reads_the_earlier_turns_too(tenant: Tenant) -> None:
    with tenant.client() as http:
        first = respond(http, input=[QUESTION]).json()
        body = {"model": "openai/gpt-4o", "input": [FOLLOW_UP]}
        alone = http.post("/ai-gateway/quote", json=body).json()
        quoted = http.post(
            "/ai-gateway/quote", json={**body, "previous_response_id": first["id"]}
        ).json()
        assert quoted["estimated_input_tokens"] > alone["estimated_input_tokens"]
        made = respond(http, input=[FOLLOW_UP], previous_response_id=first["id"]).json()
        assert quoted["estimated_input_tokens"] == made["usage"]["input_tokens"]


def test_a_response_not_made_in_the_background_cannot_be_cancelled(tenant: Tenant) -> None:
    with tenant.client() as http:
        made = respond(http, input="hi").json()
        assert made["background"] is False and made["status"] == "completed"
        error = assert_error(http.post(f"/responses/{made['id']}/cancel"), 400, "invalid_request")
        assert error["param"] == "response_id" and "not made in the background" in error["message"]


def test_a_response_id_is_openais_and_names_its_usage_event(tenant: Tenant) -> None:
    with tenant.client() as http:
        answer = respond(http, input="hi")
        made = answer.json()
        generation = answer.headers["x-generation-id"]
        assert made["id"] == "resp_" + generation.removeprefix("gen_")
        assert made["output"][0]["id"] == "msg_" + generation.removeprefix("gen_")
        for named in (made["id"], generation):
            event = http.get(f"/ai-gateway/usage/{named}").json()
            assert event["id"] == generation and event["endpoint"] == "responses"


def test_a_very_long_id_is_not_echoed_whole(tenant: Tenant) -> None:
    with tenant.client() as http:
        refused = http.get(f"/responses/resp_{'x' * 5000}")
    error = assert_error(refused, 404, "not_found")
    assert "(5,005 characters)" in error["message"] and len(error["message"]) < 600


@pytest.mark.parametrize("empty", ["", []])
def test_an_empty_input_says_what_input_takes(tenant: Tenant, empty: object) -> None:
    with tenant.client() as http:
        answer = http.post("/responses", json={"model": "openai/gpt-4o", "input": empty})
    error = assert_error(answer, 400, "invalid_request")
    assert error["param"] == "input" and "non-empty string or a non-empty list" in error["message"]


@pytest.mark.parametrize("param", ["after", "cursor"])
def test_an_unknown_input_item_cursor_names_the_parameter_sent(tenant: Tenant, param: str) -> None:
    with tenant.client() as http:
        made = http.post("/responses", json={"model": "openai/gpt-4o", "input": "hi"}).json()
        answer = http.get(f"/responses/{made['id']}/input_items", params={param: "zzz"})
    assert assert_error(answer, 400, "invalid_request")["param"] == param


def test_compaction_is_a_clear_404_and_compact_no_stored_response(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        client.responses.compact(model="openai/gpt-4o", input="Summarise our talk so far")
    assert "not emulated" in raised.value.message and "previous_response_id" in raised.value.message
    with pytest.raises(openai.NotFoundError) as fetched:
        client.responses.retrieve("compact")
    assert "'compact' not found" in fetched.value.message
    with tenant.client() as http:
        assert http.delete("/responses/compact").status_code == 404
        assert http.post("/responses/compact", headers={"authorization": ""}).status_code == 401
