"""POST /ai-gateway/quote: the real request's numbers, without holding or charging."""

from __future__ import annotations

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.billing.test_charges import EXACT
from tests.helpers import assert_error, bearer


def test_a_quote_matches_the_real_charge_and_holds_nothing(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    quote_body = {"endpoint": "chat.completions", **EXACT}
    with tenant.client() as http:
        before = http.get("/ai-gateway/balance").json()
        quote = http.post("/ai-gateway/quote", json=quote_body).json()
        after = http.get("/ai-gateway/balance").json()
        assert after == before
        assert http.get("/ai-gateway/reservations").json()["data"] == []
        assert http.get("/ai-gateway/usage").json()["data"] == []
        real = http.post("/chat/completions", json=EXACT).json()["usage"]
    assert quote["object"] == "quote" and quote["provider"] == "emulator"
    assert quote["estimated_input_tokens"] == real["prompt_tokens"]
    assert quote["estimated_output_tokens"] == real["completion_tokens"] == 5
    assert quote["estimated_charge_micros"] == real["charge_micros"] == quote["hold_micros"]
    assert quote["available_micros"] == 25_000_000 and quote["sufficient_balance"] is True
    assert (
        quote["spend_limit"]["decision"] == "allow" and quote["spend_limit"]["limit_micros"] is None
    )


def test_a_responses_quote_with_a_fallback(tenant: Tenant) -> None:
    body = {
        "endpoint": "responses",
        "model": "openai/gpt-4o",
        "input": "Plan a trip",
        "max_output_tokens": 100,
    }
    with tenant.client() as http:
        quote = http.post("/ai-gateway/quote", json=body).json()
    assert quote["provider"] == "openai" and quote["estimated_output_tokens"] == 100
    assert quote["fallback_charge_micros"] is not None  # azure serves it too
    assert (
        quote["estimated_provider_cost_micros"] + quote["estimated_platform_fee_micros"]
        == quote["estimated_charge_micros"]
    )


def test_a_quote_reports_the_spend_limit_decision(demo: EmulatorHandle) -> None:
    body = {"model": "openai/gpt-4o", "input": "long essay", "max_output_tokens": 5000}
    with httpx.Client(base_url=demo.base_url, headers=bearer("sk-emu-demo-limited")) as http:
        quote = http.post("/ai-gateway/quote", json=body).json()
    limit = quote["spend_limit"]
    assert limit["limit_micros"] == 2000 and limit["reset_interval"] == "monthly"
    assert limit["decision"] == "deny" and limit["remaining_micros"] == 2000
    assert limit["resets_at"] == "2026-02-01T00:00:00.000Z"


def test_a_broke_account_is_quoted_insufficient(demo: EmulatorHandle) -> None:
    with httpx.Client(base_url=demo.base_url, headers=bearer("sk-emu-broke")) as http:
        quote = http.post(
            "/ai-gateway/quote", json={"model": "openai/gpt-4o", "input": "hi"}
        ).json()
        assert quote["sufficient_balance"] is False and quote["available_micros"] == 0
        assert_error(
            http.post("/ai-gateway/quote", json={"model": "openai/gpt-4o"}), 400, "invalid_request"
        )
        assert_error(
            http.post("/ai-gateway/quote", json={"model": "no/such", "input": "x"}),
            404,
            "model_not_found",
        )


def test_a_quote_says_when_the_request_needs_premium_approval(tenant: Tenant) -> None:
    body = {"model": "emulator/premium", "input": "hi"}
    with tenant.client() as http:
        quote = http.post("/ai-gateway/quote", json=body).json()
        real = http.post("/responses", json=body)
        plain = http.post("/ai-gateway/quote", json={**body, "model": "emulator/echo"}).json()
    assert quote["premium_approval_required"] is True
    assert_error(real, 402, "premium_approval_required")
    assert plain["premium_approval_required"] is False


def test_a_quote_routes_as_the_request_would(tenant: Tenant) -> None:
    tool = {"type": "function", "name": "f", "parameters": {"type": "object"}}
    body = {"model": "deepseek/deepseek-r1", "input": "hi", "tools": [tool]}
    with tenant.client() as http:
        refused = http.post("/ai-gateway/quote", json=body)
        served = http.post("/ai-gateway/quote", json={**body, "models": ["openai/gpt-4o"]})
    assert assert_error(refused, 503, "no_route_available")["param"] == "tools"
    assert served.json()["model"] == "openai/gpt-4o"  # the capable fallback


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"messages": [{"role": "user", "content": "hi"}], "n": "x"}, "n"),
        ({"messages": [{"role": "user", "content": "hi"}], "n": -1}, "n"),
        ({"messages": [{}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": "hi"}], "tools": [{}]}, "tools[0].type"),
        (
            {"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]},
            "tools[0].function",
        ),
        ({"messages": [{"role": "user", "content": "hi"}], "stop": 5}, "stop"),
        ({"input": [{"type": "function_call"}]}, "input[0]"),
        ({"input": "hi", "text": {"format": "x"}}, "text.format"),
        ({"input": "hi", "tools": [{"type": "function"}]}, "tools[0].name"),
        (  # a null the request drops was a 500
            {
                "messages": [{"role": "user", "content": "hi"}],
                "response_format": {"type": "json_schema", "json_schema": None},
            },
            "response_format.json_schema.schema",
        ),
        (
            {
                "messages": [{"role": "user", "content": "hi"}],
                "response_format": {"type": "json_schema"},
            },
            "response_format.json_schema.schema",
        ),
        ({"messages": [{"role": "user", "content": "hi"}], "top_logprobs": 2}, "top_logprobs"),
    ],
)
def test_a_quote_checks_the_body_as_the_request_would(
    tenant: Tenant, extra: dict, param: str
) -> None:
    # A string `n` once made the quote multiply a token count into a 10 GB string.
    with tenant.client() as http:
        refused = http.post("/ai-gateway/quote", json={"model": "openai/gpt-4o-mini", **extra})
    assert assert_error(refused, 400, "invalid_request")["param"] == param
    if "messages" in extra:  # and the request itself says the same
        with tenant.client() as http:
            sent = http.post("/chat/completions", json={"model": "openai/gpt-4o-mini", **extra})
        assert assert_error(sent, 400, "invalid_request")["param"] == param


def test_a_null_the_request_drops_is_dropped_by_its_quote(tenant: Tenant) -> None:
    body = {
        "model": "openai/gpt-4o-mini",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "description": None}}],
    }
    with tenant.client() as http:
        quoted = http.post("/ai-gateway/quote", json=body)
        assert quoted.status_code == 200, quoted.text
        assert http.post("/chat/completions", json=body).status_code == 200


def test_the_quote_says_which_endpoint_it_quoted(tenant: Tenant) -> None:
    ask = [{"role": "user", "content": "Plan a trip"}]
    with tenant.client() as http:
        chat = http.post("/ai-gateway/quote", json={"model": "openai/gpt-4o", "messages": ask})
        assert chat.json()["endpoint"] == "chat.completions"
        given = {"model": "openai/gpt-4o", "input": "Plan a trip", "endpoint": "responses"}
        assert http.post("/ai-gateway/quote", json=given).json()["endpoint"] == "responses"
        cases = [
            ({"model": "openai/gpt-4o"}, "input"),
            ({"model": "openai/gpt-4o", "input": "x", "messages": ask}, "input"),
            ({"model": "openai/gpt-4o", "input": "x", "endpoint": "chat.completions"}, "endpoint"),
            ({"model": "openai/gpt-4o", "messages": ask, "endpoint": "responses"}, "endpoint"),
        ]
        for body, param in cases:
            error = assert_error(http.post("/ai-gateway/quote", json=body), 400, "invalid_request")
            assert error["param"] == param and error["message"][0].isupper(), error


CALLS = [
    {"id": f"c{i}", "type": "function", "function": {"name": "lookup", "arguments": '{"q":1}'}}
    for i in range(3)
]
TURNS = {
    "parallel calls": [
        {"role": "user", "content": "look it up"},
        {"role": "assistant", "content": None, "tool_calls": CALLS},
        *[{"role": "tool", "tool_call_id": f"c{i}", "content": "found"} for i in range(3)],
    ],
    "text and calls": [
        {"role": "user", "content": "look it up"},
        {"role": "assistant", "content": "Looking.", "tool_calls": CALLS[:2]},
        *[{"role": "tool", "tool_call_id": f"c{i}", "content": "found"} for i in range(2)],
    ],
    "two system messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "hello"},
    ],
}


@pytest.mark.parametrize("provider", ["emulator", "emulator-responses", "emulator-messages"])
@pytest.mark.parametrize("turns", list(TURNS), ids=list(TURNS))
def test_the_hold_covers_what_each_provider_format_bills(
    tenant: Tenant, provider: str, turns: str
) -> None:
    """The prompt counted for the hold (and the quote) is never under what the provider
    bills once the request is in its own format: parallel tool calls travel as one item
    each in the responses format, and were billed a few tokens over the hold."""
    tool = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
    body = {
        "model": "emulator/echo",
        "messages": TURNS[turns],
        "tools": [tool],
        "provider": {"only": [provider]},
        "max_tokens": 5,
    }
    with tenant.client() as http:
        quote = http.post("/ai-gateway/quote", json=body).json()
        answer = http.post("/chat/completions", json=body)
        held = http.get("/ai-gateway/reservations").json()["data"][0]
    usage = answer.json()["usage"]
    assert usage["prompt_tokens"] <= quote["estimated_input_tokens"]
    assert usage["charge_micros"] <= held["amount_micros"] == quote["hold_micros"]


def test_a_responses_quote_reads_the_output_cap_as_the_request_does(tenant: Tenant) -> None:
    """`/responses` caps its output with `max_output_tokens` only; a `max_tokens` in the
    body is ignored there, so the quote ignores it too (it quoted a hold of a few micros
    for a request that held thousands)."""
    body = {"model": "openai/gpt-4o-mini", "input": "hi [emulator:tokens=3000]", "max_tokens": 5}
    with tenant.client() as http:
        quote = http.post("/ai-gateway/quote", json=body).json()
        answer = http.post("/responses", json=body)
        held = http.get("/ai-gateway/reservations").json()["data"][0]
        capped = http.post("/ai-gateway/quote", json={**body, "max_output_tokens": 5}).json()
    assert quote["hold_micros"] == held["amount_micros"] >= answer.json()["usage"]["charge_micros"]
    assert capped["estimated_output_tokens"] == 5 < quote["estimated_output_tokens"]


def test_an_anthropic_message_is_quoted_as_the_messages_route_bills_it(tenant: Tenant) -> None:
    message = {
        "model": "anthropic/claude-sonnet-4",
        "system": "Answer briefly.",
        "messages": [{"role": "user", "content": "Explain how B-trees stay balanced"}],
        "max_tokens": 5,
    }
    with tenant.client() as http:
        quote = http.post("/ai-gateway/quote", json={"endpoint": "messages", **message}).json()
        assert http.get("/ai-gateway/reservations").json()["data"] == []
        real = http.post("/messages", json=message).json()
        # Without `endpoint`, the same body is a chat completion's: its system is ignored.
        as_chat = http.post("/ai-gateway/quote", json=message).json()
        missing = http.post(
            "/ai-gateway/quote", json={"endpoint": "messages", **message, "max_tokens": None}
        )
    usage = real["usage"]
    assert quote["endpoint"] == "messages" and quote["provider"] == real["provider"]
    assert quote["estimated_input_tokens"] == usage["input_tokens"]
    assert quote["estimated_output_tokens"] == usage["output_tokens"] == 5
    assert quote["estimated_charge_micros"] == usage["charge_micros"] == quote["hold_micros"]
    assert as_chat["endpoint"] == "chat.completions"
    assert as_chat["estimated_input_tokens"] < quote["estimated_input_tokens"]
    assert assert_error(missing, 400, "invalid_request")["param"] == "max_tokens"


def test_a_message_quote_is_checked_as_the_messages_route_checks_it(tenant: Tenant) -> None:
    message = {
        "endpoint": "messages",
        "model": "anthropic/claude-sonnet-4",
        "messages": [{"role": "user", "content": "Explain how B-trees stay balanced"}],
        "max_tokens": 5,
    }
    ignored = {"instructions": 5, "max_output_tokens": 0, "input": "hi"}  # /messages reads none
    refused = {  # each a 400 from both, naming the same field
        "messages": {"messages": None},
        "max_tokens": {"max_tokens": 0},
        "messages[0].role": {"messages": [{"role": "system", "content": "hi"}]},
    }
    with tenant.client() as http:
        for field, value in ignored.items():
            quoted = http.post("/ai-gateway/quote", json={**message, field: value})
            assert quoted.status_code == 200, quoted.text
        prompt = {k: v for k, v in message.items() if k != "messages"} | {"prompt": "hi"}
        assert_error(http.post("/ai-gateway/quote", json=prompt), 400, "invalid_request")
        for param, change in refused.items():
            for path, body in [("/ai-gateway/quote", message), ("/messages", message)]:
                error = assert_error(
                    http.post(path, json={**body, **change}), 400, "invalid_request"
                )
                assert error["param"] == param, (path, error)


def test_a_quote_counts_the_refund_of_a_job_failed_by_now(emulator: EmulatorHandle) -> None:
    """The request's hold refunds the failed job first; the quote must see the same."""
    from tests.video.test_generate_video import BODY

    tenant = emulator.create_tenant(balance_micros=175_000)
    with tenant.client() as http:
        failing = {**BODY, "prompt": "a fox [emulator:fail]"}
        assert http.post("/generate/video", json=failing).status_code == 200
        emulator.advance(120)
        quote = http.post("/ai-gateway/quote", json={"endpoint": "chat.completions", **EXACT})
    assert quote.json()["available_micros"] == 175_000
    assert quote.json()["sufficient_balance"] is True
