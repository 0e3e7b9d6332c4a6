"""OpenRouter's Anthropic-compatible API (`POST /api/v1/messages`) through Anthropic's own
SDK: whole and streamed answers, tools, thinking, prompt caching, auth, errors, and the
same billing as the other endpoints."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import pytest

from emulator.billing.pricing import CacheBill, Fees, charge_for
from emulator.gateway.tokens import count_text
from emulator.gateway.wire.messages import signature, signed
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

SONNET = "anthropic/claude-sonnet-4"  # anthropic: 3,000,000 / 15,000,000 micros per Mtok
QUESTION: Any = [{"role": "user", "content": "Explain how B-trees stay balanced"}]
FEES = Fees(5.5, 20)


def sonnet_charge(usage: Any) -> int:
    """The charge of a usage in Anthropic's terms (`input_tokens` without the cache's)."""
    read, written = usage.cache_read_input_tokens or 0, usage.cache_creation_input_tokens or 0
    prompt = usage.input_tokens + read + written
    bill = CacheBill(read, written, 0, 300_000, 3_750_000)
    return charge_for(prompt, usage.output_tokens, 3_000_000, 15_000_000, FEES, bill).charge_micros


def test_a_whole_message_is_anthropics_and_billed(
    claude: anthropic.Anthropic, tenant: Tenant
) -> None:
    raw = claude.messages.with_raw_response.create(model=SONNET, max_tokens=300, messages=QUESTION)
    message = raw.parse()
    assert message.id.startswith("msg_") and message.type == "message"
    assert message.role == "assistant" and message.model == SONNET
    assert message.stop_reason == "end_turn" and message.content[0].type == "text"
    extra = message.model_extra or {}
    assert extra["provider"] == "anthropic"
    usage = message.usage.model_dump()
    assert usage["charge_micros"] == sonnet_charge(message.usage)
    generation = raw.headers["x-generation-id"]
    with tenant.client() as http:
        event = http.get(f"/ai-gateway/usage/{generation}").json()
        stats = http.get("/generation", params={"id": message.id}).json()["data"]
    assert event["endpoint"] == "messages" and event["charge_micros"] == usage["charge_micros"]
    assert event["prompt_tokens"] == message.usage.input_tokens
    assert stats["id"] == generation and stats["native_finish_reason"] == "end_turn"


def test_a_streamed_message_sends_anthropics_events(
    claude: anthropic.Anthropic, tenant: Tenant
) -> None:
    with claude.messages.stream(model=SONNET, max_tokens=300, messages=QUESTION) as stream:
        events = list(stream)
        final = stream.get_final_message()
    kinds = [event.type for event in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"  # (the SDK hides pings)
    assert "content_block_delta" in kinds and "message_delta" in kinds
    start = events[0].message  # type: ignore[union-attr]
    assert start.usage.input_tokens == final.usage.input_tokens > 0
    whole = claude.messages.create(model=SONNET, max_tokens=300, messages=QUESTION)
    assert final.content[0].text == whole.content[0].text  # type: ignore[union-attr]
    # The serving provider, as in the whole answer (the SDK's final message keeps it).
    assert (final.model_extra or {})["provider"] == (whole.model_extra or {})["provider"]
    delta = next(event for event in events if event.type == "message_delta")
    charge = (delta.usage.model_extra or {})["charge_micros"]  # type: ignore[union-attr]
    assert charge == sonnet_charge(final.usage)
    with tenant.client() as http:
        streamed = http.get("/ai-gateway/usage", params={"limit": 2}).json()["data"][1]
    assert streamed["charge_micros"] == charge and streamed["metadata"]["stream"] is True


def test_a_tool_named_as_a_mode_can_be_forced(claude: anthropic.Anthropic) -> None:
    tools: Any = [{"name": name, "input_schema": {"type": "object"}} for name in ("lookup", "none")]
    forced = claude.messages.create(
        model=SONNET, max_tokens=300, tools=tools, messages=QUESTION,
        tool_choice={"type": "tool", "name": "none"},
    )  # fmt: skip
    assert forced.stop_reason == "tool_use"
    assert [b.name for b in forced.content if b.type == "tool_use"] == ["none"]
    kept = claude.messages.create(
        model=SONNET, max_tokens=300, tools=tools, messages=QUESTION, tool_choice={"type": "none"}
    )
    assert kept.stop_reason == "end_turn"


def test_a_tool_round_trip(claude: anthropic.Anthropic) -> None:
    tools: Any = [
        {
            "name": "get_weather",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        }
    ]
    asked = claude.messages.create(model=SONNET, max_tokens=300, tools=tools, messages=QUESTION)
    assert asked.stop_reason == "tool_use"
    (call,) = [block for block in asked.content if block.type == "tool_use"]
    assert call.id.startswith("toolu_01") and len(call.id) == 30  # Anthropic's own ids
    assert isinstance(call.input, dict) and isinstance(call.input["city"], str)
    result = {"type": "tool_result", "tool_use_id": call.id, "content": "21 degrees"}
    turns: Any = [*QUESTION, {"role": "assistant", "content": asked.content}]
    answer = claude.messages.create(
        model=SONNET,
        max_tokens=300,
        tools=tools,
        messages=[*turns, {"role": "user", "content": [result]}],
    )
    assert answer.stop_reason == "end_turn" and "21 degrees" in answer.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("model", "provider"),
    [(SONNET, "anthropic"), ("openai/gpt-4o", "openai"), ("openai/gpt-4o", "azure")],
)
def test_a_stop_sequence_is_named_where_the_provider_tells_it(
    claude: anthropic.Anthropic, model: str, provider: str
) -> None:
    """Anthropic's providers say which stop sequence ended the text; the gateway knows it
    when it cuts for a responses-format provider (which takes none); a chat-format one
    says only `stop`, which becomes `end_turn`."""
    routing: Any = {"provider": {"only": [provider]}}
    kwargs: Any = {"model": model, "max_tokens": 300, "messages": QUESTION, "extra_body": routing}
    whole = claude.messages.create(stop_sequences=["zzz", "."], **kwargs)
    text = whole.content[0].text  # type: ignore[union-attr]
    assert text and "." not in text  # a sentence or more would have been written
    named = provider != "azure"
    assert whole.stop_reason == ("stop_sequence" if named else "end_turn")
    assert whole.stop_sequence == ("." if named else None)
    with claude.messages.stream(stop_sequences=["zzz", "."], **kwargs) as stream:
        events = list(stream)
        final = stream.get_final_message()
    delta = next(event for event in events if event.type == "message_delta")
    assert delta.delta.stop_sequence == whole.stop_sequence  # type: ignore[union-attr]
    assert (final.stop_reason, final.stop_sequence) == (whole.stop_reason, whole.stop_sequence)
    assert final.content[0].text == text  # type: ignore[union-attr]
    unmet = claude.messages.create(stop_sequences=["zzz"], **kwargs)
    assert (unmet.stop_reason, unmet.stop_sequence) == ("end_turn", None)


def test_a_stop_sequence_of_whitespace_is_refused(
    claude: anthropic.Anthropic, tenant: Tenant
) -> None:
    for stops in (["zzz", "\n"], [""]):
        with pytest.raises(anthropic.BadRequestError) as raised:
            claude.messages.create(
                model=SONNET, max_tokens=10, messages=QUESTION, stop_sequences=stops
            )
        assert "each stop sequence must contain non-whitespace" in str(raised.value)
    body = {"model": SONNET, "max_tokens": 10, "messages": QUESTION, "stop_sequences": ["a", " "]}
    with tenant.client() as http:
        refused = assert_error(http.post("/messages", json=body), 400, "invalid_request")
    assert refused["param"] == "stop_sequences[1]"
    assert claude.messages.create(
        model=SONNET, max_tokens=10, messages=QUESTION, stop_sequences=["\nHuman:"]
    )


@pytest.mark.parametrize("provider", ["emulator-messages", "emulator-responses"])
def test_a_stop_sequence_stops_only_once_it_is_written_whole(tenant: Tenant, provider: str) -> None:
    """Whether the provider stops (messages format) or the gateway cuts for it (responses):
    the first stop written whole wins, and only within `max_tokens`."""

    def ask(text: str, stops: list[str], max_tokens: int = 300) -> dict[str, Any]:
        body = {
            "model": "emulator/echo",  # says the user's text back
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": text}],
            "stop_sequences": stops,
            "provider": {"only": [provider]},
        }
        with tenant.client() as http:
            answer = http.post("/messages", json=body)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    stopped = ask("alpha beta gamma STOP delta", ["STOP"])
    assert stopped["content"] == [{"type": "text", "text": "alpha beta gamma "}]
    assert (stopped["stop_reason"], stopped["stop_sequence"]) == ("stop_sequence", "STOP")
    # Room for the text before the stop, not for the stop: the limit ends it.
    short = ask("alpha beta gamma STOP delta", ["STOP"], stopped["usage"]["output_tokens"])
    assert (short["stop_reason"], short["stop_sequence"]) == ("max_tokens", None)
    overlapping = ask("xyz qqq", ["yz", "xy"])  # "xy" is written whole first
    assert (overlapping["stop_sequence"], overlapping["content"]) == ("xy", [])


def test_disabled_thinking_switches_off_a_model_that_thinks_unasked(tenant: Tenant) -> None:
    body = {"model": "deepseek/deepseek-r1", "max_tokens": 3000, "messages": QUESTION}
    with tenant.client() as http:
        unasked = http.post("/messages", json=body).json()
        off = http.post("/messages", json={**body, "thinking": {"type": "disabled"}}).json()
    assert [block["type"] for block in unasked["content"]] == ["thinking", "text"]
    assert [block["type"] for block in off["content"]] == ["text"]
    assert off["usage"]["output_tokens"] < unasked["usage"]["output_tokens"]


def test_cache_breakpoints_are_checked_as_anthropic_checks_them(tenant: Tenant) -> None:
    def block(ttl: str = "5m") -> dict[str, Any]:
        return {"type": "text", "text": "note", "cache_control": {"type": "ephemeral", "ttl": ttl}}

    def ask(*blocks: dict[str, Any]) -> httpx.Response:
        body = {
            "model": SONNET,
            "max_tokens": 10,
            "messages": [{"role": "user", "content": blocks}],
        }
        with tenant.client() as http:
            return http.post("/messages", json=body)

    assert ask(block(), block(), block(), block()).status_code == 200
    too_many = assert_error(ask(*[block()] * 5), 400, "too_many_cache_breakpoints")
    assert too_many["param"] == "messages"
    assert_error(ask(block(), block("1h")), 400, "invalid_cache_control")


def test_breakpoints_on_tools_count_with_the_others(tenant: Tenant) -> None:
    def ask(tool_ttl: str, *blocks: dict[str, Any]) -> httpx.Response:
        tool = {"name": "look", "input_schema": {"type": "object"}}
        tool["cache_control"] = {"type": "ephemeral", "ttl": tool_ttl}
        body = {
            "model": SONNET,
            "max_tokens": 10,
            "tools": [tool],
            "messages": [{"role": "user", "content": [*blocks, {"type": "text", "text": "q"}]}],
        }
        with tenant.client() as http:
            return http.post("/messages", json=body)

    def block(ttl: str) -> dict[str, Any]:
        return {"type": "text", "text": "note", "cache_control": {"type": "ephemeral", "ttl": ttl}}

    assert ask("1h", block("5m"), block("5m"), block("5m")).status_code == 200
    assert_error(ask("5m", *[block("5m")] * 4), 400, "too_many_cache_breakpoints")
    # The tools come first in the prompt: an hour's breakpoint after theirs is refused.
    assert_error(ask("5m", block("1h")), 400, "invalid_cache_control")


def test_thinking_comes_first_and_signed(claude: anthropic.Anthropic) -> None:
    message = claude.messages.create(
        model=SONNET,
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 1024},
        messages=QUESTION,
    )
    thinking, text = message.content[0], message.content[1]
    assert thinking.type == "thinking" and text.type == "text"
    assert thinking.signature == signature(thinking.thinking)
    with pytest.raises(anthropic.BadRequestError) as refused:
        claude.messages.create(
            model=SONNET,
            max_tokens=1000,
            thinking={"type": "enabled", "budget_tokens": 1024},
            messages=QUESTION,
        )
    assert "budget_tokens must be less than max_tokens" in str(refused.value)


def test_omitted_thinking_is_an_empty_signed_block_billed_whole(
    claude: anthropic.Anthropic,
) -> None:
    """`display: "omitted"` (Opus 4.7's default upstream): the block keeps its place and
    the signature of the whole thinking, which stays billed, but carries no text; the
    stream has no thinking_delta, only the signature."""
    ask: Any = {"model": SONNET, "max_tokens": 4000, "messages": QUESTION}
    shown = claude.messages.create(
        **ask, thinking={"type": "enabled", "budget_tokens": 1024, "display": "summarized"}
    )
    hidden = claude.messages.create(
        **ask, thinking={"type": "enabled", "budget_tokens": 1024, "display": "omitted"}
    )
    thought = shown.content[0]
    assert thought.type == "thinking" and thought.thinking
    block = hidden.content[0]
    assert block.type == "thinking" and block.thinking == ""
    assert block.signature == signature(thought.thinking, shown="")  # the whole, sealed empty
    assert block.signature[:40] == thought.signature[:40]  # the same thinking's digest
    assert hidden.content[1] == shown.content[1]
    assert hidden.usage.output_tokens == shown.usage.output_tokens
    with claude.messages.stream(
        **ask, thinking={"type": "adaptive", "display": "omitted"}
    ) as stream:
        kinds = [(event.type, getattr(event, "delta", None)) for event in stream]
        final = stream.get_final_message()
    deltas = [delta.type for kind, delta in kinds if kind == "content_block_delta" and delta]
    assert "thinking_delta" not in deltas and deltas.count("signature_delta") == 1
    assert final.content[0].type == "thinking" and final.content[0].thinking == ""
    assert signed("", final.content[0].signature)
    with pytest.raises(anthropic.BadRequestError) as refused:
        claude.messages.create(**ask, thinking={"type": "adaptive", "display": "hidden"})
    assert "display" in str(refused.value)


def test_cache_control_blocks_cache_as_anthropic_counts_them(claude: anthropic.Anthropic) -> None:
    system: Any = [
        {
            "type": "text",
            "text": " ".join(f"rule{i} keeps item{i}" for i in range(600)),
            "cache_control": {"type": "ephemeral"},
        }
    ]
    ask: Any = {"model": SONNET, "max_tokens": 100, "system": system}
    written = claude.messages.create(**ask, messages=QUESTION)
    read = claude.messages.create(**ask, messages=[{"role": "user", "content": "And AVL trees?"}])
    kept = written.usage.cache_creation_input_tokens
    assert kept and kept > 1024 and written.usage.cache_read_input_tokens == 0
    assert read.usage.cache_read_input_tokens == kept
    assert read.usage.input_tokens < 20  # the question alone: the cache's are apart
    for message in (written, read):
        assert (message.usage.model_extra or {})["charge_micros"] == sonnet_charge(message.usage)


def test_a_breakpoint_on_a_tool_caches_the_tools(claude: anthropic.Anthropic) -> None:
    schema = {"type": "object", "properties": {"query": {"type": "string"}}}
    described = " ".join(f"field{i} holds value{i}" for i in range(500))
    tools: Any = [
        {"name": "search", "description": described, "input_schema": schema},
        {"name": "lookup", "description": "Look a word up", "input_schema": schema},
    ]
    tools[-1]["cache_control"] = {"type": "ephemeral"}
    ask: Any = {"model": SONNET, "max_tokens": 100, "tools": tools, "tool_choice": {"type": "none"}}
    written = claude.messages.create(**ask, messages=QUESTION)
    read = claude.messages.create(**ask, messages=[{"role": "user", "content": "And AVL trees?"}])
    text = "".join(json.dumps(schema, sort_keys=True) + t["name"] + t["description"] for t in tools)
    assert written.usage.cache_creation_input_tokens == count_text(text, "messages")
    assert written.usage.cache_read_input_tokens == 0
    assert read.usage.cache_read_input_tokens == count_text(text, "messages")
    assert read.usage.cache_creation_input_tokens == 0
    for message in (written, read):
        assert (message.usage.model_extra or {})["charge_micros"] == sonnet_charge(message.usage)
    counted = claude.messages.count_tokens(model=SONNET, tools=tools, messages=QUESTION)
    assert counted.input_tokens == written.usage.input_tokens + count_text(text, "messages")


def test_the_key_may_come_as_anthropics_x_api_key(emulator: EmulatorHandle, tenant: Tenant) -> None:
    base = emulator.base_url.removesuffix("/v1")
    with anthropic.Anthropic(base_url=base, api_key=tenant.api_key, max_retries=0) as client:
        assert client.messages.create(model=SONNET, max_tokens=20, messages=QUESTION).content
    wrong = anthropic.Anthropic(base_url=base, api_key="sk-emu-wrong", max_retries=0)
    with wrong, pytest.raises(anthropic.AuthenticationError):
        wrong.messages.create(model=SONNET, max_tokens=20, messages=QUESTION)


def test_errors_are_the_sdks_classes(claude: anthropic.Anthropic, emulator: EmulatorHandle) -> None:
    with pytest.raises(anthropic.NotFoundError):
        claude.messages.create(model="nobody/nothing", max_tokens=20, messages=QUESTION)
    with pytest.raises(anthropic.BadRequestError):
        claude.messages.create(model=SONNET, max_tokens=20, messages=[])
    broke = emulator.create_tenant(balance_micros=0)
    base = emulator.base_url.removesuffix("/v1")
    client = anthropic.Anthropic(base_url=base, auth_token=broke.api_key, max_retries=0)
    with client, pytest.raises(anthropic.APIStatusError) as refused:
        client.messages.create(model=SONNET, max_tokens=20, messages=QUESTION)
    assert refused.value.status_code == 402


def test_the_sdk_reads_each_requests_id(claude: anthropic.Anthropic) -> None:
    """Anthropic's SDK takes a request's id from `request-id`: the one `X-Request-Id`
    names, as the journal and logs know it."""
    raw = claude.messages.with_raw_response.create(model=SONNET, max_tokens=20, messages=QUESTION)
    assert raw.headers["request-id"] == raw.headers["x-request-id"]
    assert raw.parse()._request_id == raw.headers["request-id"]
    with pytest.raises(anthropic.NotFoundError) as missing:
        claude.messages.create(model="nobody/nothing", max_tokens=20, messages=QUESTION)
    assert missing.value.request_id == missing.value.response.headers["x-request-id"]
    counted = claude.messages.count_tokens(model=SONNET, messages=QUESTION)
    assert counted._request_id


def test_bad_bodies_are_400_naming_the_field(tenant: Tenant) -> None:
    cases = [
        ({"messages": QUESTION}, "max_tokens"),
        ({"max_tokens": 5, "messages": [{"role": "system", "content": "x"}]}, "messages[0].role"),
        (
            {"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "text"}]}]},
            "messages[0].content",
        ),
        ({"max_tokens": 5, "messages": QUESTION, "tool_choice": {"type": "tool"}}, "tool_choice"),
        (
            {"max_tokens": 5, "messages": QUESTION, "tools": [{"name": "x"}]},
            "tools[0].input_schema",
        ),
    ]
    with tenant.client() as http:
        for body, param in cases:
            refused = http.post("/messages", json={"model": SONNET, **body})
            assert assert_error(refused, 400, "invalid_request")["param"].startswith(param), body


@pytest.mark.parametrize(
    ("messages", "param", "says"),
    [
        (
            [{"role": "user", "content": [{"type": "text", "text": ""}]}],
            "messages[0].content[0]",
            "must be non-empty",
        ),
        (
            [{"role": "user", "content": [{"type": "text", "text": " \n"}]}],
            "messages[0].content[0]",
            "non-whitespace",
        ),
        ([{"role": "user", "content": "  "}], "messages[0].content", "non-whitespace"),
        ([{"role": "user", "content": ""}, *QUESTION], "messages[0].content", "non-empty content"),
        (
            [*QUESTION, {"role": "assistant", "content": "Sure, "}],
            "messages[1].content",
            "trailing whitespace",
        ),
        ([{"role": "user", "content": [{"type": "image"}]}], "messages[0].content[0]", "`source`"),
    ],
)
def test_turns_with_nothing_to_read_are_refused_as_anthropic_refuses_them(
    tenant: Tenant, messages: list[dict[str, Any]], param: str, says: str
) -> None:
    body = {"model": SONNET, "max_tokens": 20, "messages": messages}
    with tenant.client() as http:
        for path in ("/messages", "/messages/count_tokens"):
            error = assert_error(http.post(path, json=body), 400, "invalid_request")
            assert error["param"] == param and says in error["message"], error


CALL = {"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}
OBJECT_TOOL = [{"name": "w", "input_schema": {"type": "object"}}]


def turns(call: dict[str, Any], result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        *QUESTION,
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]


@pytest.mark.parametrize(
    ("fields", "param", "says"),
    [
        ({"messages": turns({**CALL, "id": "a b!"}, RESULT)}, "messages[1].content[0]", "pattern"),
        (
            {
                "messages": [
                    *QUESTION,
                    {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]},
                ]
            },
            "messages[1].content[0]",
            "`signature`",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/bmp",
                                    "data": "Qk0=",
                                },
                            }
                        ],
                    }
                ]
            },
            "messages[0].content[0]",
            "image/webp",
        ),
        (
            {"messages": turns(CALL, {**RESULT, "content": [{"type": "text", "text": ""}]})},
            "messages[2].content[0].content[0]",
            "non-empty",
        ),
        (
            {"tools": [{"name": "w", "input_schema": {"type": "string"}}]},
            "tools[0].input_schema",
            '`type: "string"`',
        ),
        ({"tools": [{"name": "w", "input_schema": {}}]}, "tools[0].input_schema", "no `type`"),
        *[
            (
                {"messages": [{"role": "user", "content": [{"type": "image", "source": source}]}]},
                "messages[0].content[0]",
                says,
            )
            for source, says in [
                ("x", "must be an object"),
                ({"type": "bogus"}, "'base64', 'url' or 'file'"),
                ({"type": "url"}, "http(s) URL"),
                ({"type": "url", "url": "ftp://x"}, "http(s) URL"),
                ({"type": "base64", "media_type": "image/png"}, "base64 string is required"),
                ({"type": "base64", "media_type": "image/png", "data": "!!"}, "not valid base64"),
                (  # "hello", not a PNG
                    {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="},
                    "not an image of type image/png",
                ),
            ]
        ],
        (
            {"messages": turns(CALL, {**RESULT, "is_error": "yes"})},
            "messages[2].content[0].is_error",
            "valid boolean",
        ),
        ({"metadata": {"user_id": 5}}, "metadata.user_id", "valid string"),
    ],
)
def test_blocks_and_tools_anthropic_refuses(
    tenant: Tenant, fields: dict[str, Any], param: str, says: str
) -> None:
    body = {"model": SONNET, "max_tokens": 20, "messages": QUESTION, "tools": OBJECT_TOOL, **fields}
    with tenant.client() as http:
        refused = http.post("/messages", json=body)
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["param"] == param and says in error["message"], error


def test_an_empty_system_block_is_refused_and_an_empty_prefill_is_not(tenant: Tenant) -> None:
    empty = [{"type": "text", "text": ""}]
    body = {"model": SONNET, "max_tokens": 20, "messages": QUESTION, "system": empty}
    prefill = [*QUESTION, {"role": "assistant", "content": ""}]
    with tenant.client() as http:
        refused = assert_error(http.post("/messages", json=body), 400, "invalid_request")
        assert refused["param"] == "system[0]"
        answer = http.post("/messages", json={**body, "system": "Be brief.", "messages": prefill})
    assert answer.status_code == 200, answer.text


def test_a_cut_stream_ends_with_anthropics_error_event(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {"model": SONNET, "max_tokens": 300, "messages": QUESTION, "stream": True}
    fault = emulator.faults.add(account_id=tenant.account_id, cut_stream_after=3, times=1)
    with fault, tenant.client() as http:
        cut = http.post("/messages", json=body)
    assert cut.text.split("\n\n")[1] == 'event: ping\ndata: {"type":"ping"}'  # after the start
    lines = cut.text.strip().splitlines()
    assert lines[-2] == "event: error"
    error = json.loads(lines[-1].removeprefix("data: "))
    assert error["type"] == "error" and error["error"]["type"] == "api_error"


def test_what_a_turn_says_beside_its_tool_results_is_read(tenant: Tenant) -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}
    long = " ".join(f"note{i}" for i in range(1500))

    def turn(*blocks: dict[str, Any]) -> dict[str, Any]:
        messages = [*QUESTION, {"role": "assistant", "content": [call]}]
        messages.append({"role": "user", "content": list(blocks)})
        body = {"model": SONNET, "max_tokens": 50, "messages": messages}
        with tenant.client() as http:
            answer = http.post("/messages", json=body)
        assert answer.status_code == 200, answer.text
        return answer.json()["usage"]

    plain = turn({"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"})
    beside = turn(
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
        {"type": "text", "text": long},
    )
    assert beside["input_tokens"] > plain["input_tokens"] + 1500  # read, and billed
    silent = turn({"type": "tool_result", "tool_use_id": "toolu_1"})  # `content` is optional
    assert silent["input_tokens"] <= plain["input_tokens"]
    marked = {"type": "text", "text": long, "cache_control": {"type": "ephemeral"}}
    inner = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [marked]}
    written = turn(inner)
    assert written["cache_creation_input_tokens"] > 1024  # a breakpoint inside a result
    assert turn(inner)["cache_read_input_tokens"] == written["cache_creation_input_tokens"]


def test_structured_output_adaptive_thinking_and_the_budget_rule(tenant: Tenant) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    body = {"model": SONNET, "max_tokens": 2000, "messages": QUESTION}
    with tenant.client() as http:
        shaped = http.post(
            "/messages", json={**body, "output_format": {"type": "json_schema", "schema": schema}}
        ).json()
        adaptive = http.post("/messages", json={**body, "thinking": {"type": "adaptive"}}).json()
        over = http.post(
            "/messages",
            json={**body, "thinking": {"type": "enabled", "budget_tokens": 4000}},
        )
        bad_format = http.post("/messages", json={**body, "output_format": 5})
    assert isinstance(json.loads(shaped["content"][0]["text"])["a"], int)
    assert [block["type"] for block in adaptive["content"]] == ["thinking", "text"]
    assert assert_error(over, 400, "invalid_request")["param"] == "thinking.budget_tokens"
    assert assert_error(bad_format, 400, "invalid_request")["param"] == "output_format"


def _shaped(field: str, shape: object) -> dict[str, Any]:
    """A structured-output format where `field` carries it: Anthropic's current
    `output_config.format` (which its SDKs send) or the older `output_format`."""
    if field == "output_config.format":
        return {"output_config": {"format": shape, "effort": "high"}}
    return {"output_format": shape}


@pytest.mark.parametrize("field", ["output_format", "output_config.format"])
@pytest.mark.parametrize(
    "model", ["openai/gpt-4o", "meta-llama/llama-3.3-70b-instruct", "emulator/echo", SONNET]
)
def test_structured_output_reaches_every_provider_format(
    tenant: Tenant, model: str, field: str
) -> None:
    """Anthropic's format has no `name`; the other formats' need one."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    shape = {"type": "json_schema", "schema": schema}
    prompt = {"model": model, "messages": QUESTION, **_shaped(field, shape)}
    body = {**prompt, "max_tokens": 300}
    with tenant.client() as http:
        whole = http.post("/messages", json=body)
        counted = http.post("/messages/count_tokens", json=prompt)
        quoted = http.post("/ai-gateway/quote", json={**body, "endpoint": "messages"})
        bad_count = http.post("/messages/count_tokens", json={**prompt, **_shaped(field, 5)})
        bad_schema = http.post(
            "/messages", json={**body, **_shaped(field, {**shape, "schema": {"type": "nope"}})}
        )
    assert whole.status_code == 200, whole.text
    assert isinstance(json.loads(whole.json()["content"][0]["text"])["name"], str)
    assert counted.status_code == 200 and quoted.status_code == 200, (counted.text, quoted.text)
    assert assert_error(bad_count, 400, "invalid_request")["param"] == field
    error = assert_error(bad_schema, 400, "invalid_response_format")
    assert error["param"] == f"{field}.schema"


def test_the_output_format_is_sent_once(tenant: Tenant) -> None:
    shape = {"type": "json_schema", "schema": {"type": "object"}}
    both = {"output_format": shape, "output_config": {"format": shape}}
    body = {"model": SONNET, "max_tokens": 50, "messages": QUESTION, **both}
    with tenant.client() as http:
        error = assert_error(http.post("/messages", json=body), 400, "invalid_request")
        effort_only = http.post("/messages", json={**body, **_shaped("effort", None)})
    assert error["param"] == "output_format" and "once" in error["message"]
    assert effort_only.status_code == 200, effort_only.text


def test_count_tokens_is_what_the_message_is_billed(claude: anthropic.Anthropic) -> None:
    system = "You answer in one paragraph.\nYou cite nothing."
    tools: Any = [{"name": "lookup", "input_schema": {"type": "object"}}]
    ask: Any = {"model": SONNET, "system": system, "tools": tools, "messages": QUESTION}
    counted = claude.messages.count_tokens(**ask)
    billed = claude.messages.create(max_tokens=100, **ask).usage
    assert counted.input_tokens == billed.input_tokens > 0
    assert (counted.model_extra or {})["provider"] == "anthropic"
    online = claude.messages.count_tokens(**{**ask, "model": f"{SONNET}:online"})
    assert online.input_tokens > counted.input_tokens  # the search results are input too
    with pytest.raises(anthropic.BadRequestError):
        claude.messages.count_tokens(model=SONNET, messages=[])


@pytest.mark.parametrize(
    "extra", [{"stop_sequences": -1}, {"stop_sequences": True}, {"metadata": "x"}, {"metadata": 5}]
)
def test_count_tokens_reads_only_its_own_fields(tenant: Tenant, extra: dict[str, Any]) -> None:
    """A field of a message request a count does not take is left out of it (a wrongly
    typed one was a 500)."""
    body = {"model": SONNET, "messages": QUESTION}
    with tenant.client() as http:
        plain = http.post("/messages/count_tokens", json=body)
        other = http.post("/messages/count_tokens", json=body | extra)
    assert other.status_code == 200, other.text
    assert other.json() == plain.json()


def test_a_bad_output_schema_is_named_as_the_messages_format_names_it(tenant: Tenant) -> None:
    body = {
        "model": SONNET,
        "max_tokens": 50,
        "messages": QUESTION,
        "output_format": {"type": "json_schema", "schema": {"type": "nope"}},
    }
    with tenant.client() as http:
        error = assert_error(http.post("/messages", json=body), 400, "invalid_response_format")
    assert error["param"] == "output_format.schema"


def test_a_thread_is_refused_as_anthropic_refuses_one_it_cannot_hold(tenant: Tenant) -> None:
    body = {"model": SONNET, "max_tokens": 50, "messages": QUESTION, "thread": {"type": "create"}}
    with tenant.client() as http:
        error = assert_error(http.post("/messages", json=body), 400, "thread_unsupported_request")
    assert error["param"] == "thread"
    assert error["details"] == {
        "error_code": "thread_unsupported_request",
        "unsupported": ["thread"],
    }


def test_mcp_servers_are_refused_not_ignored(claude: anthropic.Anthropic) -> None:
    """The SDK's beta MCP connector: served without its servers' tools, the answer would
    be one the real service would not give."""
    server = {"type": "url", "url": "https://mcp.example.com/sse", "name": "docs"}
    ask: Any = {"model": SONNET, "messages": QUESTION, "mcp_servers": [server]}
    with pytest.raises(anthropic.BadRequestError) as refused:
        claude.beta.messages.create(max_tokens=50, betas=["mcp-client-2025-04-04"], **ask)
    with pytest.raises(anthropic.BadRequestError) as uncounted:
        claude.beta.messages.count_tokens(betas=["mcp-client-2025-04-04"], **ask)
    for error in (refused.value, uncounted.value):
        assert error.body["error"]["param"] == "mcp_servers"  # type: ignore[index]
        assert "MCP connector" in error.message


def test_anthropics_sdk_pages_through_the_models(
    claude: anthropic.Anthropic, tenant: Tenant
) -> None:
    """Its pages read `last_id` and ask `after_id`: every model once, in order."""
    with tenant.client() as http:
        everything = [m["id"] for m in http.get("/models").json()["data"]]
    paged = [model.id for model in claude.models.list(limit=7)]
    assert paged == everything and len(everything) > 7


def test_anthropics_sdk_reads_its_model_fields(claude: anthropic.Anthropic) -> None:
    """`type`, `display_name`, `created_at`, `lifecycle` and the token limits, as
    Anthropic's Models API gives them."""
    sonnet = claude.models.retrieve("anthropic/claude-sonnet-4")
    assert (sonnet.type, sonnet.display_name) == ("model", "Claude Sonnet 4")
    assert sonnet.created_at.tzinfo is not None and sonnet.created_at.year >= 2024
    assert (sonnet.lifecycle, sonnet.max_input_tokens, sonnet.max_tokens) == (
        "active",
        200_000,
        64_000,
    )
    assert all(m.type == "model" and m.display_name for m in claude.models.list(limit=50))
