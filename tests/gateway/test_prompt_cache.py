"""Prompt caching through HTTP: providers that cache by themselves (chat and responses
formats) and at the client's `cache_control` breakpoints (messages format), the cache's
tokens in every answer and usage event, and the charge at the cache's prices."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest

from emulator.billing.pricing import CacheBill, Fees, charge_for
from emulator.gateway.tokens import count_text
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

MODEL = "emulator/echo"  # its three providers, one per format, all cache (fixtures)
PRICES = {  # micros per million tokens: prompt, completion, cache read, cache write
    "emulator": (1_000_000, 2_000_000, 500_000, None),
    "emulator-responses": (1_000_000, 2_000_000, 500_000, None),
    "emulator-messages": (1_000_000, 2_000_000, 100_000, 1_250_000),
}
FEES = Fees(5.5, 20)  # the demo pricing's
SYSTEM = " ".join(f"rule{i} keeps item{i} apart" for i in range(400))  # ~2,000 tokens
SYSTEM_TOKENS = count_text(SYSTEM, "chat")


def chat(
    http: httpx.Client, question: str, provider: str = "emulator", system: Any = SYSTEM, **body: Any
) -> dict[str, Any]:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    answer = http.post(
        "/chat/completions",
        json={"model": MODEL, "messages": messages, "provider": {"only": [provider]}, **body},
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def marked(text: str, ttl: str | None = None) -> list[dict[str, Any]]:
    control = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return [{"type": "text", "text": text, "cache_control": control}]


def expected_charge(usage: dict[str, Any], provider: str, written_1h: int = 0) -> int:
    prompt, completion, read, write = PRICES[provider]
    details = usage.get("prompt_tokens_details") or usage["input_tokens_details"]
    bill = CacheBill(
        details["cached_tokens"], details["cache_write_tokens"], written_1h, read, write or 0
    )
    tokens = usage.get("prompt_tokens", usage.get("input_tokens"))
    output = usage.get("completion_tokens", usage.get("output_tokens"))
    return charge_for(tokens, output, prompt, completion, FEES, bill).charge_micros


def test_a_repeated_prefix_is_read_from_the_cache_in_blocks_of_128(tenant: Tenant) -> None:
    with tenant.client() as http:
        first = chat(http, "first question")["usage"]
        second = chat(http, "second question")["usage"]
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    # The same system message and the user's framing, then the questions differ.
    common = 3 + SYSTEM_TOKENS + 3
    cached = second["prompt_tokens_details"]["cached_tokens"]
    assert cached == common // 128 * 128 and cached >= 1024
    assert second["prompt_tokens"] == first["prompt_tokens"]  # cached tokens are prompt tokens
    assert second["prompt_tokens_details"]["cache_write_tokens"] == 0  # keeping is free here
    assert first["charge_micros"] == expected_charge(first, "emulator")
    assert second["charge_micros"] == expected_charge(second, "emulator")
    assert second["charge_micros"] < first["charge_micros"]


def test_prompts_under_1024_tokens_are_never_cached(tenant: Tenant) -> None:
    system = " ".join(f"rule{i} keeps item{i} apart" for i in range(126))  # 1,008 tokens
    with tenant.client() as http:
        for _ in range(2):  # seven whole blocks of 128, but under the minimum
            usage = chat(http, "again", system=system)["usage"]
            assert 896 < usage["prompt_tokens"] < 1024
            assert usage["prompt_tokens_details"]["cached_tokens"] == 0


def test_a_kept_prefix_lives_five_minutes_renewed_by_each_read(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as http:
        chat(http, "one")
        emulator.advance(290)
        assert chat(http, "two")["usage"]["prompt_tokens_details"]["cached_tokens"] > 0
        emulator.advance(290)  # 580 s after it was written, 290 after it was read
        assert chat(http, "three")["usage"]["prompt_tokens_details"]["cached_tokens"] > 0
        emulator.advance(301)
        assert chat(http, "four")["usage"]["prompt_tokens_details"]["cached_tokens"] == 0


def test_the_cache_is_each_accounts_and_each_routes_own(emulator: EmulatorHandle) -> None:
    one, other = emulator.create_tenant(), emulator.create_tenant()
    with one.client() as http:
        chat(http, "warm it")
    with other.client() as http:
        assert chat(http, "cold")["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    with one.client() as http:
        other_route = chat(http, "cold", provider="emulator-responses")["usage"]
        assert other_route["prompt_tokens_details"]["cached_tokens"] == 0


def test_a_responses_provider_caches_for_the_responses_endpoint(client: openai.OpenAI) -> None:
    def ask(question: str) -> Any:
        return client.responses.create(
            model=MODEL,
            instructions=SYSTEM,
            input=question,
            extra_body={"provider": {"only": ["emulator-responses"]}},
        )

    ask("first")
    answer = ask("second")
    assert answer.usage is not None
    cached = answer.usage.input_tokens_details.cached_tokens
    assert cached >= 1024 and cached % 128 == 0
    usage = answer.usage.model_dump()
    assert usage["charge_micros"] == expected_charge(usage, "emulator-responses")


def test_a_messages_provider_caches_only_at_breakpoints(tenant: Tenant) -> None:
    provider = "emulator-messages"
    with tenant.client() as http:
        for question in ("one", "two"):  # no breakpoint: nothing kept
            usage = chat(http, question, provider)["usage"]
            assert usage["prompt_tokens_details"]["cached_tokens"] == 0
        written = chat(http, "one", provider, system=marked(SYSTEM))["usage"]
        read = chat(http, "two", provider, system=marked(SYSTEM))["usage"]
    prefix = 5 + count_text(SYSTEM, "messages")  # the system message, framing and text
    assert written["prompt_tokens_details"] == {
        "cached_tokens": 0,
        "cache_write_tokens": prefix,
        "audio_tokens": 0,
    }
    assert read["prompt_tokens_details"]["cached_tokens"] == prefix
    assert read["prompt_tokens_details"]["cache_write_tokens"] == 0
    assert written["charge_micros"] == expected_charge(written, provider)
    assert read["charge_micros"] == expected_charge(read, provider)
    # A write costs more than the prompt price, a read much less.
    plain = chat_plain_charge(written, provider)
    assert read["charge_micros"] < plain < written["charge_micros"]


def chat_plain_charge(usage: dict[str, Any], provider: str) -> int:
    prompt, completion, _, _ = PRICES[provider]
    tokens = usage["prompt_tokens"], usage["completion_tokens"]
    return charge_for(*tokens, prompt, completion, FEES).charge_micros


def test_an_hours_write_costs_twice_the_prompt_price_and_lasts_an_hour(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    provider = "emulator-messages"
    with tenant.client() as http:
        quote = http.post(
            "/ai-gateway/quote",
            json={
                "model": MODEL,
                "messages": [{"role": "system", "content": marked(SYSTEM, "1h")}],
                "provider": {"only": [provider]},
            },
        ).json()
        usage = chat(http, "one", provider, system=marked(SYSTEM, "1h"))["usage"]
        emulator.advance(3000)
        later = chat(http, "two", provider, system=marked(SYSTEM, "1h"))["usage"]
    written = usage["prompt_tokens_details"]["cache_write_tokens"]
    assert usage["charge_micros"] == expected_charge(usage, provider, written_1h=written)
    assert later["prompt_tokens_details"]["cached_tokens"] == written
    assert quote["hold_micros"] >= usage["charge_micros"]  # the hold prices the hour's write


def test_a_conversation_moving_its_breakpoint_reads_the_turns_before(tenant: Tenant) -> None:
    provider = "emulator-messages"
    turns = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": marked("first turn")},
    ]
    body = {"model": MODEL, "provider": {"only": [provider]}}
    with tenant.client() as http:
        first = http.post("/chat/completions", json={**body, "messages": turns}).json()
        turns[1] = {"role": "user", "content": "first turn"}
        turns += [
            {"role": "assistant", "content": first["choices"][0]["message"]["content"]},
            {"role": "user", "content": marked("second turn")},
        ]
        second = http.post("/chat/completions", json={**body, "messages": turns}).json()
    kept = first["usage"]["prompt_tokens_details"]["cache_write_tokens"]
    assert kept == first["usage"]["prompt_tokens"]  # the breakpoint ends the prompt
    details = second["usage"]["prompt_tokens_details"]
    assert details["cached_tokens"] == kept  # found at the first turn's end
    assert details["cache_write_tokens"] == second["usage"]["prompt_tokens"] - kept


def test_openrouters_top_level_cache_control_marks_the_last_message(tenant: Tenant) -> None:
    with tenant.client() as http:
        control = {"type": "ephemeral"}
        first = chat(http, "same", "emulator-messages", cache_control=control)["usage"]
        second = chat(http, "same", "emulator-messages", cache_control=control)["usage"]
    assert first["prompt_tokens_details"]["cache_write_tokens"] == first["prompt_tokens"]
    assert second["prompt_tokens_details"]["cached_tokens"] == first["prompt_tokens"]


def test_a_streamed_answer_reports_and_bills_the_cache(tenant: Tenant) -> None:
    with tenant.client() as http:
        chat(http, "warm")
        with http.stream(
            "POST",
            "/chat/completions",
            json={
                "model": MODEL,
                "messages": [
                    {"role": "system", "content": SYSTEM},
                    {"role": "user", "content": "streamed"},
                ],
                "provider": {"only": ["emulator"]},
                "stream": True,
            },
        ) as answer:
            lines = [line for line in answer.iter_lines() if line.startswith("data: {")]
        events = http.get("/ai-gateway/usage", params={"limit": 1}).json()["data"]
    usage = json.loads(lines[-1][6:])["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] > 0
    assert usage["charge_micros"] == expected_charge(usage, "emulator")
    assert events[0]["cached_tokens"] == usage["prompt_tokens_details"]["cached_tokens"]
    assert events[0]["charge_micros"] == usage["charge_micros"]


@pytest.mark.parametrize("provider", ["emulator-messages", "emulator-responses"])
def test_every_provider_format_streams_its_cache_use_back(tenant: Tenant, provider: str) -> None:
    system = marked(SYSTEM) if provider == "emulator-messages" else SYSTEM
    with tenant.client() as http:
        chat(http, "warm", provider, system=system)
        body = {
            "model": MODEL,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": "s"}],
            "provider": {"only": [provider]},
            "stream": True,
        }
        with http.stream("POST", "/chat/completions", json=body) as answer:
            lines = [line for line in answer.iter_lines() if line.startswith("data: {")]
    usage = json.loads(lines[-1][6:])["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] > 0
    assert usage["charge_micros"] == expected_charge(usage, provider)


def test_usage_events_and_generation_stats_carry_the_cache(tenant: Tenant) -> None:
    with tenant.client() as http:
        chat(http, "one", "emulator-messages", system=marked(SYSTEM))
        answer = chat(http, "two", "emulator-messages", system=marked(SYSTEM))
        event = http.get(f"/ai-gateway/usage/{answer['id']}").json()
        stats = http.get("/generation", params={"id": answer["id"]}).json()["data"]
    read = answer["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert event["cached_tokens"] == read and event["cache_write_tokens"] == 0
    assert event["charge_micros"] == answer["usage"]["charge_micros"]
    assert stats["native_tokens_cached"] == read
    # What the read saved: the prompt price less the read price, for each token read.
    assert stats["cache_discount"] == pytest.approx(read * (1_000_000 - 100_000) / 1e12)


def test_more_than_four_breakpoints_are_refused(tenant: Tenant) -> None:
    parts = [
        {"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}}
        for i in range(5)
    ]
    with tenant.client() as http:
        refused = http.post(
            "/chat/completions",
            json={"model": MODEL, "messages": [{"role": "user", "content": parts}]},
        )
        bad_ttl = http.post(
            "/chat/completions",
            json={
                "model": MODEL,
                "messages": [{"role": "user", "content": marked("x", "2h")}],
            },
        )
    assert assert_error(refused, 400, "too_many_cache_breakpoints")["param"] == "messages"
    assert bad_ttl.status_code == 400 and "ttl" in (bad_ttl.json()["error"]["param"] or "")


def test_the_catalog_lists_the_caches_prices(tenant: Tenant) -> None:
    with tenant.client() as http:
        models = {m["id"]: m for m in http.get("/models").json()["data"]}
        endpoints = http.get("/models/anthropic/claude-sonnet-4/endpoints").json()["data"]
    sonnet = models["anthropic/claude-sonnet-4"]
    assert sonnet["pricing"]["input_cache_read"] == "0.0000003"
    assert sonnet["pricing"]["input_cache_write"] == "0.00000375"
    served = {e["tag"]: e for e in endpoints["endpoints"]}
    assert served["anthropic"]["pricing"]["input_cache_write"] == "0.00000375"
    assert served["anthropic"]["supports_implicit_caching"] is False  # breakpoints only
    assert "input_cache_read" not in served["vertex"]["pricing"]
    mini = models["openai/gpt-4o-mini"]["providers"][0]["pricing"]
    assert mini["cache_read_micros_per_mtok"] == 75_000


def test_the_openai_sdk_reads_the_cached_tokens(client: openai.OpenAI) -> None:
    messages: Any = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "q"}]
    extra = {"provider": {"only": ["emulator"]}}
    client.chat.completions.create(model=MODEL, messages=messages, extra_body=extra)
    answer = client.chat.completions.create(model=MODEL, messages=messages, extra_body=extra)
    assert answer.usage is not None and answer.usage.prompt_tokens_details is not None
    assert answer.usage.prompt_tokens_details.cached_tokens == (SYSTEM_TOKENS + 6 + 1) // 128 * 128


def test_middle_out_keeps_breakpoints_where_their_text_still_is(tenant: Tenant) -> None:
    hour = {"type": "ephemeral", "ttl": "1h"}
    long_part = " ".join(f"a{i}" for i in range(12_000))  # its breakpoint in the cut
    rest = " ".join(f"b{i}" for i in range(25_000))
    body = {
        "model": MODEL,
        "provider": {"only": ["emulator-messages"]},
        "max_tokens": 5,
        "transforms": ["middle-out"],
        "cache_control": hour,
        "messages": [
            {"role": "system", "content": " ".join(f"s{i}" for i in range(3000))},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": long_part, "cache_control": hour},
                    {"type": "text", "text": rest},
                ],
            },
        ],
    }
    with tenant.client() as http:
        quote = http.post("/ai-gateway/quote", json=body).json()
        answer = http.post("/chat/completions", json=body)
    assert answer.status_code == 200, answer.text
    usage = answer.json()["usage"]
    assert usage["prompt_tokens"] == 32_768 - 5  # cut to the context less the output asked
    assert usage["charge_micros"] <= quote["hold_micros"]


def test_a_breakpoint_given_twice_is_one_kept_for_the_longer_time(tenant: Tenant) -> None:
    part = [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}]
    body = {
        "model": MODEL,
        "provider": {"only": ["emulator-messages"]},
        "messages": [{"role": "user", "content": part}],
        "cache_control": {"type": "ephemeral", "ttl": "1h"},
        "stream": True,
        "debug": {"echo_upstream_body": True},
    }
    with tenant.client() as http:
        streamed = http.post("/chat/completions", json=body)
    chunks = [json.loads(line[6:]) for line in streamed.text.splitlines() if line[6:7] == "{"]
    sent = chunks[0]["debug"]["echo_upstream_body"]["messages"][0]["content"]
    assert [block["text"] for block in sent] == [SYSTEM]  # no empty block
    assert sent[0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    usage = chunks[-1]["usage"]
    written = usage["prompt_tokens_details"]["cache_write_tokens"]
    assert written == usage["prompt_tokens"]
    assert usage["charge_micros"] == expected_charge(usage, "emulator-messages", written_1h=written)


def test_an_hours_prefix_read_is_kept_another_hour(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    def turn(system: Any, question: Any) -> dict[str, Any]:
        messages: Any = [
            {"role": "system", "content": system},
            {"role": "user", "content": question},
        ]
        body = {"model": MODEL, "provider": {"only": ["emulator-messages"]}}
        with tenant.client() as http:
            return http.post("/chat/completions", json={**body, "messages": messages}).json()

    turn(marked(SYSTEM, "1h"), "one")
    emulator.advance(3000)
    # Read at the system message's end, which this request does not mark itself.
    read = turn(SYSTEM, marked("two"))["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert read > 0
    emulator.advance(3000)  # 6,000 s after the write, 3,000 after the read
    assert turn(SYSTEM, marked("three"))["usage"]["prompt_tokens_details"]["cached_tokens"] == read


def test_an_hours_breakpoint_after_a_shorter_one_is_refused(tenant: Tenant) -> None:
    messages = [
        {"role": "system", "content": marked("rules")},
        {"role": "user", "content": marked("question", "1h")},
    ]
    with tenant.client() as http:
        refused = http.post("/chat/completions", json={"model": MODEL, "messages": messages})
    assert assert_error(refused, 400, "invalid_cache_control")["param"] == "messages"


def test_a_last_message_with_an_image_is_read_back_by_the_next_turn(tenant: Tenant) -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
    turns: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": [{"type": "text", "text": "Look:"}, image]},
    ]
    body = {
        "model": "anthropic/claude-sonnet-4",
        "provider": {"only": ["anthropic"]},
        "cache_control": {"type": "ephemeral"},
    }
    with tenant.client() as http:
        first = http.post("/chat/completions", json={**body, "messages": turns}).json()
        turns += [
            {"role": "assistant", "content": first["choices"][0]["message"]["content"]},
            {"role": "user", "content": "And now?"},
        ]
        second = http.post("/chat/completions", json={**body, "messages": turns}).json()
    kept = first["usage"]["prompt_tokens_details"]["cache_write_tokens"]
    assert kept == first["usage"]["prompt_tokens"]  # the image within the prefix
    assert second["usage"]["prompt_tokens_details"]["cached_tokens"] == kept


def test_free_variants_cache_nothing(tenant: Tenant) -> None:
    with tenant.client() as http:
        listed = {m["id"]: m for m in http.get("/models").json()["data"]}
        for _ in range(2):
            answer = http.post(
                "/chat/completions",
                json={"model": f"{MODEL}:free", "messages": [{"role": "user", "content": SYSTEM}]},
            ).json()
    assert "input_cache_read" not in listed[f"{MODEL}:free"]["pricing"]
    usage = answer["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == 0
    assert usage["cost_details"]["upstream_inference_prompt_cost"] == 0


def test_reading_a_five_minute_prefix_under_an_hours_breakpoint_keeps_it_five(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as http:
        written = chat(http, "one", "emulator-messages", system=marked(SYSTEM))["usage"]
        read = chat(http, "one", "emulator-messages", system=marked(SYSTEM, "1h"))["usage"]
        emulator.advance(1200)  # the 5 minutes are over; an hour's would not be
        later = chat(http, "one", "emulator-messages", system=marked(SYSTEM, "1h"))["usage"]
    kept = written["prompt_tokens_details"]["cache_write_tokens"]
    assert read["prompt_tokens_details"]["cached_tokens"] == kept  # read, nothing written
    assert read["prompt_tokens_details"]["cache_write_tokens"] == 0
    assert later["prompt_tokens_details"]["cached_tokens"] == 0  # not kept an hour for free
    written_1h = later["prompt_tokens_details"]["cache_write_tokens"]
    assert later["charge_micros"] == expected_charge(later, "emulator-messages", written_1h)
