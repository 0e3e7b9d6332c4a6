"""POST /responses and /responses/input_tokens through the official openai SDK."""

from __future__ import annotations

import json

import jsonschema
import openai
import pytest
from pydantic import BaseModel

from emulator.testing import Tenant
from tests.helpers import RESPONSES_STREAM_EVENTS, assert_error

TOOL = {
    "type": "function",
    "name": "lookup_order",
    "description": "Find an order",
    "parameters": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "include_items": {"type": "boolean"}},
        "required": ["order_id", "include_items"],
        "additionalProperties": False,
    },
}


@pytest.mark.parametrize("provider", ["emulator-responses", "emulator", "emulator-messages"])
def test_a_response_from_every_provider_format(client: openai.OpenAI, provider: str) -> None:
    response = client.responses.create(
        model="emulator/echo",
        input="hello responses",
        instructions="be kind",
        extra_body={"provider": {"only": [provider]}},
    )
    assert response.object == "response" and response.status == "completed"
    assert response.output_text == "hello responses"
    assert response.output[0].type == "message"
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    assert response.model_extra["provider"] == provider


def test_input_items_and_max_output_tokens(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model="openai/gpt-4o",
        input=[
            {"role": "user", "content": [{"type": "input_text", "text": "Describe tide pools"}]}
        ],
        max_output_tokens=16,
    )
    assert (
        response.status == "incomplete"
        and response.incomplete_details.reason == "max_output_tokens"
    )
    assert response.usage.output_tokens == 16


def test_function_call_round_trip(client: openai.OpenAI) -> None:
    first = client.responses.create(model="openai/gpt-4o", input="Where is order 42?", tools=[TOOL])
    call = next(item for item in first.output if item.type == "function_call")
    jsonschema.validate(json.loads(call.arguments), TOOL["parameters"])
    second = client.responses.create(
        model="openai/gpt-4o",
        input=[
            {"role": "user", "content": "Where is order 42?"},
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
            {
                "type": "function_call_output",
                "call_id": call.call_id,
                "output": '{"status": "shipped"}',
            },
        ],
        tools=[TOOL],
    )
    assert "lookup_order" in second.output_text and "shipped" in second.output_text


class Plan(BaseModel):
    goal: str
    steps: list[str]


def test_structured_output_with_parse(client: openai.OpenAI) -> None:
    parsed = client.responses.parse(model="openai/gpt-4o", input="Plan a picnic", text_format=Plan)
    assert isinstance(parsed.output_parsed, Plan) and parsed.output_parsed.steps


def test_stream_event_sequence(client: openai.OpenAI) -> None:
    events = list(
        client.responses.create(
            model="openai/gpt-4o", input="Tell me about lighthouses", stream=True
        )
    )
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert set(kinds) >= RESPONSES_STREAM_EVENTS
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == events[-1].response.output_text
    usage = events[-1].response.usage
    assert usage is not None and usage.model_extra["charge_micros"] > 0  # as a whole answer's


def test_responses_stream_helper(client: openai.OpenAI) -> None:
    with client.responses.stream(
        model="anthropic/claude-sonnet-4", input="Summarise the history of tea"
    ) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text and final.usage.output_tokens > 0


@pytest.mark.parametrize(
    ("model", "exact"), [("openai/gpt-4o", True), ("anthropic/claude-sonnet-4", False)]
)
def test_input_token_count(client: openai.OpenAI, tenant: Tenant, model: str, exact: bool) -> None:
    kwargs = {
        "model": model,
        "input": "Count these words, please, exactly",
        "instructions": "Be terse.",
    }
    counted = client.responses.input_tokens.count(**kwargs)
    assert counted.object == "response.input_tokens" and counted.input_tokens > 0
    assert counted.model_extra["exact"] is exact
    if exact:  # the responses-format provider's own count is the one it then bills
        assert client.responses.create(**kwargs).usage.input_tokens == counted.input_tokens
    with tenant.client() as http:
        r = http.post(
            "/responses/input_tokens", json={"model": model, "input": "x", "tools": [TOOL]}
        )
        assert r.json()["input_tokens"] > counted.input_tokens / 3


def test_bad_responses_requests(tenant: Tenant) -> None:
    with tenant.client() as http:
        assert (
            assert_error(
                http.post("/responses", json={"model": "openai/gpt-4o"}), 400, "invalid_request"
            )["param"]
            == "input"
        )
        assert (
            assert_error(
                http.post("/responses", json={"model": "openai/gpt-4o", "input": ""}),
                400,
                "invalid_request",
            )["param"]
            == "input"
        )
        assert_error(
            http.post("/responses", json={"model": "nope/nope", "input": "x"}),
            404,
            "model_not_found",
        )
        bad = {
            "model": "openai/gpt-4o",
            "input": "x",
            "tools": [{**TOOL, "parameters": {"type": 5}}],
        }
        assert_error(http.post("/responses", json=bad), 400, "invalid_tool_schema")
        r = http.post("/responses", json={"model": "emulator/fail-503", "input": "x"})
        assert assert_error(r, 503, "upstream_failed")["metadata"]["route_attempts"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("store", 0),
        ("store", "false"),
        ("previous_response_id", 5),
        ("background", 1),
        ("truncation", "sometimes"),
        ("user", 5),
    ],
)
def test_fields_the_emulator_does_not_act_on_are_still_typed(
    tenant: Tenant, field: str, value: object
) -> None:
    """`store: 0` was read as true and the answer kept: JSON types are strict here too."""
    with tenant.client() as http:
        body = {"model": "openai/gpt-4o", "input": "x", field: value}
        assert (
            assert_error(http.post("/responses", json=body), 400, "invalid_request")["param"]
            == field
        )
        chat = {
            "model": "openai/gpt-4o",
            "messages": [{"role": "user", "content": "x"}],
            field: value,
        }
        if field in ("store", "user"):
            assert (
                assert_error(http.post("/chat/completions", json=chat), 400, "invalid_request")[
                    "param"
                ]
                == field
            )
        assert http.get("/ai-gateway/usage").json()["data"] == []


@pytest.mark.parametrize(
    "item",
    [
        {},
        {"content": "no role"},
        {"type": "function_call", "name": "f"},
        {"type": "reasoning"},
        {"role": "user"},
    ],
)
def test_incomplete_input_items_are_400(tenant: Tenant, item: dict) -> None:
    with tenant.client() as http:
        for path in ("/responses", "/responses/input_tokens"):
            error = assert_error(
                http.post(path, json={"model": "openai/gpt-4o", "input": [item]}),
                400,
                "invalid_request",
            )
            assert error["param"].startswith("input")


RESPONSE_CASES = {
    "text": {"input": "Tell me about tea", "instructions": "Be brief", "temperature": 0.5},
    "tool call": {"input": "Find order 7", "tools": [TOOL], "tool_choice": "required"},
    "empty": {"input": "[emulator:tokens=0]"},
    "cut text": {"input": "Tell me about tea", "max_output_tokens": 3},
    "cut tool call": {"input": "Find order 7", "tools": [TOOL], "tool_choice": "required",
                      "max_output_tokens": 2},
}  # fmt: skip


@pytest.mark.parametrize("case", RESPONSE_CASES, ids=list(RESPONSE_CASES))
def test_responses_match_the_sdk_types_whole_and_streamed(tenant: Tenant, case: str) -> None:
    from openai.types.responses import Response, ResponseStreamEvent
    from pydantic import TypeAdapter

    body = {"model": "openai/gpt-4o", **RESPONSE_CASES[case]}
    with tenant.client() as http:
        whole = http.post("/responses", json=body).json()
        text = http.post("/responses", json={**body, "stream": True}).text
    required = [name for name, f in Response.model_fields.items() if f.is_required()]
    assert [name for name in required if name not in whole] == []
    Response.model_validate(whole)
    assert whole["tools"] == [{**TOOL, "strict": True}] if "tools" in body else whole["tools"] == []
    assert whole["instructions"] == body.get("instructions")
    assert whole["max_output_tokens"] == body.get("max_output_tokens")
    events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    adapter = TypeAdapter(ResponseStreamEvent)
    for event in events:
        adapter.validate_python(event)
        if event["type"] in ("response.output_text.delta", "response.output_text.done"):
            assert event["logprobs"] == []
    final = events[-1]["response"]
    # Every item of the final output was announced and closed, with the final status.
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert done == final["output"]
    assert [i["type"] for i in done] == [i["type"] for i in whole["output"]]
    assert {item["status"] for item in done} == (
        {"incomplete"} if whole["status"] == "incomplete" else {"completed"}
    )


def test_a_tool_named_auto_can_be_forced(client: openai.OpenAI) -> None:
    auto = {"type": "function", "name": "auto", "parameters": {"type": "object"}}
    answer = client.responses.create(
        model="openai/gpt-4o", input="Hello", tools=[TOOL, auto],  # type: ignore[list-item]
        tool_choice={"type": "function", "name": "auto"},
    )  # fmt: skip
    assert [(item.type, getattr(item, "name", None)) for item in answer.output] == [
        ("function_call", "auto")
    ]


def test_a_tool_call_is_cut_at_max_output_tokens_and_charged_no_more(tenant: Tenant) -> None:
    body = {"model": "openai/gpt-4o", "input": "Find order 7", "tools": [TOOL]}
    with tenant.client() as http:
        cut = http.post(
            "/responses", json={**body, "tool_choice": "required", "max_output_tokens": 2}
        )
        answer = cut.json()
        held = http.get("/ai-gateway/reservations", params={"limit": 1}).json()["data"][0]
    assert answer["status"] == "incomplete" and answer["usage"]["output_tokens"] == 2
    assert answer["output"][0]["type"] == "function_call"
    assert held["charge_micros"] <= held["amount_micros"]  # settled within its hold


@pytest.mark.parametrize("path", ["/responses", "/responses/input_tokens"])
@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": [{"role": "user", "content": [{"type": "input_text"}]}]}, "input[0].content[0]"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_text", "text": 5}]}]},
            "input[0].content[0].text",
        ),
        ({"input": [{"role": "user", "content": [{"type": "bogus"}]}]}, "input[0].content[0].type"),
        ({"input": "hi", "text": "x"}, "text"),
        ({"input": "hi", "tool_choice": [1]}, "tool_choice"),
        ({"input": [{"type": "function_call_output", "call_id": "c", "output": ["21C"]}]},
         "input[0].output[0]"),
        ({"input": [{"type": "function_call_output", "call_id": "c", "output": 5}]},
         "input[0].output"),
        ({"input": "hi", "reasoning": {"max_tokens": "many"}}, "reasoning.max_tokens"),
        ({"input": "hi", "reasoning": {"max_tokens": 0}}, "reasoning.max_tokens"),
        ({"input": "hi", "models": [5]}, "models[0]"),
        ({"input": "hi", "plugins": "web"}, "plugins"),
        ({"input": "hi", "include": 5}, "include"),
        ({"input": "hi", "metadata": {"a": 1}}, "metadata.a"),
        ({"input": "hi", "metadata": {f"k{i}": "v" for i in range(17)}}, "metadata"),
        ({"input": "hi", "text": {"format": {"type": "json_schema", "schema": {}}}},
         "text.format.name"),
        ({"input": "hi", "text": {"format": {"type": "json_schema", "name": "x"}}},
         "text.format.schema"),
        ({"input": "hi", "text": {"format": {"type": "json_schema", "name": "a b",
                                             "schema": {}}}}, "text.format.name"),
    ],
)  # fmt: skip
def test_malformed_input_parts_and_settings_are_400(
    tenant: Tenant, path: str, body: dict, param: str
) -> None:
    with tenant.client() as http:
        refused = http.post(path, json={"model": "openai/gpt-4o-mini", **body})
    assert assert_error(refused, 400, "invalid_request")["param"] == param


def test_the_exact_count_frames_system_messages_once_as_the_provider_does(
    tenant: Tenant,
) -> None:
    body = {
        "model": "openai/gpt-4o-mini",
        "instructions": "be brief",
        "input": [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "what is up"},
        ],
    }
    with tenant.client() as http:
        counted = http.post("/responses/input_tokens", json=body).json()
        quoted = http.post("/ai-gateway/quote", json=body).json()
        answered = http.post("/responses", json=body).json()
    assert counted["exact"] is True
    assert counted["input_tokens"] == answered["usage"]["input_tokens"]
    assert quoted["estimated_input_tokens"] == answered["usage"]["input_tokens"]


@pytest.mark.parametrize("path", ["/responses", "/chat/completions"])
@pytest.mark.parametrize("model", ["openai/gpt-4o", "anthropic/claude-sonnet-4", "emulator/echo"])
def test_a_system_prompt_alone_is_answered(tenant: Tenant, path: str, model: str) -> None:
    """An empty system message is all the conversation: the provider takes it as its
    own instructions and answers a conversation with no turns."""
    message = {"role": "system", "content": ""}
    body = {"model": model, "input" if path == "/responses" else "messages": [message]}
    with tenant.client() as http:
        start = http.get("/ai-gateway/balance").json()["balance_micros"]
        quoted = http.post("/ai-gateway/quote", json=body).json()
        answered = http.post(path, json=body)
        assert answered.status_code == 200, answered.text
        event = http.get(f"/ai-gateway/usage/{answered.headers['x-generation-id']}").json()
        spent = start - http.get("/ai-gateway/balance").json()["balance_micros"]
    answer = answered.json()
    usage = answer["usage"]
    if path == "/responses":
        assert answer["status"] == "completed"
        (item,) = answer["output"]
        assert (item["type"], item["role"], item["status"]) == ("message", "assistant", "completed")
        text = answer["output_text"]
        assert [part["text"] for part in item["content"]] == [text]
        prompt, completion = usage["input_tokens"], usage["output_tokens"]
    else:
        (choice,) = answer["choices"]
        assert choice["message"]["role"] == "assistant" and choice["finish_reason"] == "stop"
        text = choice["message"]["content"]
        prompt, completion = usage["prompt_tokens"], usage["completion_tokens"]
    if model == "emulator/echo":  # it says back the last user text, and there is none
        assert text == "" and completion == 0
    else:  # a model that writes its own text writes some, about nothing in particular
        assert text.strip() and completion > 0
    # The prompt is the system message's framing alone: 3 tokens as a chat-format
    # provider's message (the echo's), none as a responses- or messages-format
    # provider's instructions (whose text is empty); as quoted.
    assert prompt == (3 if model == "emulator/echo" else 0) == quoted["estimated_input_tokens"]
    assert usage["total_tokens"] == prompt + completion
    assert event["status"] == "succeeded" and event["model"] == model
    assert (event["prompt_tokens"], event["completion_tokens"]) == (prompt, completion)
    assert event["charge_micros"] == usage["charge_micros"] == spent > 0


@pytest.mark.parametrize("choice", ["required", {"type": "function", "name": "lookup_order"}])
def test_a_forced_tool_is_called_with_a_response_format_which_shapes_the_answer_after(
    client: openai.OpenAI, choice: object
) -> None:
    schema = {
        "type": "object",
        "properties": {"status": {"type": "string"}},
        "required": ["status"],
        "additionalProperties": False,
    }
    text = {"format": {"type": "json_schema", "name": "order", "schema": schema, "strict": True}}
    first = client.responses.create(
        model="openai/gpt-4o", input="Where is order 7?", tools=[TOOL], tool_choice=choice,
        text=text,
    )  # fmt: skip
    (call,) = first.output
    assert call.type == "function_call" and call.name == "lookup_order"
    after = client.responses.create(
        model="openai/gpt-4o",
        input=[
            {"role": "user", "content": "Where is order 7?"},
            {"type": "function_call", "call_id": call.call_id, "name": call.name,
             "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": "shipped"},
        ],
        tools=[TOOL],
        text=text,
    )  # fmt: skip
    jsonschema.validate(json.loads(after.output_text), schema)


def test_a_seed_in_metadata_is_a_string_of_digits_and_seeds_the_content(tenant: Tenant) -> None:
    body = {"model": "openai/gpt-4o", "input": "Tell me about tea"}
    with tenant.client() as http:
        seeded = [
            http.post("/responses", json={**body, "metadata": {"seed": seed}}).json()
            for seed in ("1", "1", "2")
        ]
    texts = [answer["output_text"] for answer in seeded]
    assert texts[0] == texts[1] != texts[2]
    assert seeded[0]["metadata"] == {"seed": "1"}


@pytest.mark.parametrize("seed", ["--5", "\u00b2", "9" * 40, "x"])
def test_a_seed_that_is_no_number_seeds_nothing(tenant: Tenant, seed: str) -> None:
    """A `metadata.seed` that is no string of ASCII digits (at most 20) is metadata
    like any other: kept and shown back, and the answer, its tokens and its charge are
    those of the same request without it."""
    plain = {"model": "openai/gpt-4o", "input": "Tell me about tea"}
    body = {**plain, "metadata": {"seed": seed}}
    with tenant.client() as http:
        unseeded = http.post("/responses", json=plain).json()
        seeded = http.post("/responses", json={**plain, "metadata": {"seed": "1"}}).json()
        answered = http.post("/responses", json=body)
        counted = http.post("/responses/input_tokens", json=body)
        counted_plain = http.post("/responses/input_tokens", json=plain).json()
    assert answered.status_code == 200, answered.text
    answer = answered.json()
    assert answer["metadata"] == {"seed": seed}  # as sent
    # A seed changes the text (this one, "1", does): this one does not.
    assert answer["output_text"] == unseeded["output_text"] != seeded["output_text"]
    assert answer["usage"] == unseeded["usage"]  # the same tokens, the same charge
    assert counted.status_code == 200, counted.text
    assert counted.json() == counted_plain
    assert counted_plain["input_tokens"] == answer["usage"]["input_tokens"]


def test_the_stream_helper_takes_a_debug_stream(client: openai.OpenAI) -> None:
    """OpenRouter's `response.debug` comes after `response.created`, which the helper
    needs first."""
    with client.responses.stream(
        model="emulator/echo", input="hi", extra_body={"debug": {"echo_upstream_body": True}}
    ) as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()
    assert types[:2] == ["response.created", "response.debug"]
    assert final.output_text == "hi"


@pytest.mark.parametrize("seed", [0, -7, 2**63 - 1, 2**64 - 1])
def test_a_chat_seed_reaches_a_responses_provider_whole(seed: int) -> None:
    """The responses format carries it as `metadata.seed`, a string of digits."""
    from emulator.gateway.wire import chat, responses

    asked = chat.parse_request(
        {"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": seed}
    )
    sent = responses.render_request(asked, "m")
    assert sent["metadata"] == {"seed": str(seed)}
    assert responses.parse_request(sent).seed == seed
