"""Every gateway request leaves a usage event; Idempotency-Key replays, refuses, or waits."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

HELLO = [{"role": "user", "content": "Explain consistent hashing"}]


def events(http: httpx.Client, **params) -> list[dict]:
    return http.get("/ai-gateway/usage", params=params).json()["data"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_the_usage_event_says_why_the_answer_ended(tenant: Tenant, stream: bool) -> None:
    tool = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
    asks = {
        "stop": {"messages": HELLO},
        "length": {"messages": HELLO, "max_tokens": 3},
        "tool_calls": {"messages": HELLO, "tools": [tool], "tool_choice": "required"},
    }
    with tenant.client() as http:
        for reason, ask in asks.items():
            body = {"model": "openai/gpt-4o-mini", **ask, "stream": stream}
            answer = http.post("/chat/completions", json=body)
            event = http.get(f"/ai-gateway/usage/{answer.headers['x-generation-id']}").json()
            assert (event["finish_reason"], event["reasoning_tokens"]) == (reason, 0)
        made = http.post(
            "/responses", json={"model": "openai/gpt-4o-mini", "input": "hi", "stream": stream}
        )
        event = http.get(f"/ai-gateway/usage/{made.headers['x-generation-id']}").json()
    assert event["finish_reason"] == "stop" and event["endpoint"] == "responses"
    assert ("stream_end" in event["metadata"]) is stream


def test_a_request_records_a_usage_event_with_attempts_and_attribution(tenant: Tenant) -> None:
    headers = {
        "HTTP-Referer": "https://app.example",
        "X-Title": "Demo App",
        "Idempotency-Key": "k-1",
    }
    with tenant.client() as http:
        r = http.post(
            "/chat/completions",
            json={"model": "emulator/flaky", "messages": HELLO},
            headers=headers,
        )
        event = http.get(f"/ai-gateway/usage/{r.headers['x-generation-id']}").json()
    assert event["status"] == "succeeded" and event["provider"] == "emulator"
    assert event["endpoint"] == "chat.completions" and event["model"] == "emulator/flaky"
    assert event["prompt_tokens"] == r.json()["usage"]["prompt_tokens"]
    assert event["total_tokens"] == r.json()["usage"]["total_tokens"]
    assert [(a["provider"], a["status"]) for a in event["route_attempts"]] == [
        ("emulator-broken", "failed"),
        ("emulator", "succeeded"),
    ]
    meta = event["metadata"]
    assert meta["http_referer"] == "https://app.example" and meta["x_title"] == "Demo App"
    assert meta["idempotency_key"] == "k-1" and meta["stream"] is False
    assert meta["request_id"] == r.headers["x-request-id"]
    assert event["key_id"] == tenant.api_key_id
    assert event["charge_micros"] == r.json()["usage"]["charge_micros"] > 0
    assert event["margin_micros"] == event["charge_micros"] - event["provider_cost_micros"]


@pytest.mark.parametrize("model", ["emulator/fail-503", "emulator/fail-503:floor"])
def test_a_failed_request_records_a_failed_event(tenant: Tenant, model: str) -> None:
    with tenant.client() as http:
        http.post("/chat/completions", json={"model": model, "messages": HELLO})
        failed = events(http, status="failed", model="emulator/fail-503")
    assert failed[0]["model"] == "emulator/fail-503" and failed[0]["charge_micros"] == 0
    assert failed[0]["route_attempts"][0]["error_code"] == "upstream_error"


def test_usage_filters_and_pages(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as http:
        for model in ("emulator/echo", "openai/gpt-4o-mini", "emulator/echo"):
            http.post("/chat/completions", json={"model": model, "messages": HELLO})
        assert [e["model"] for e in events(http)] == [
            "emulator/echo",
            "openai/gpt-4o-mini",
            "emulator/echo",
        ]
        assert len(events(http, model="emulator/echo")) == 2
        assert len(events(http, provider="openai")) == 1
        first = http.get("/ai-gateway/usage", params={"limit": 2}).json()
        rest = http.get(
            "/ai-gateway/usage", params={"limit": 2, "cursor": first["next_cursor"]}
        ).json()
        assert len(first["data"]) == 2 and first["has_more"] and len(rest["data"]) == 1
        now = emulator.clock()["now"]
        # A half-open window: an event at `created_after` is in it, at `created_before` not.
        assert len(events(http, created_after=now)) == 3 and events(http, created_before=now) == []
        assert len(events(http, created_after=now.lower())) == 3  # RFC 3339 allows "t", "z"
        assert_error(
            http.get("/ai-gateway/usage", params={"created_after": "soon"}), 422, "invalid_request"
        )
        assert_error(http.get("/ai-gateway/usage/gen_nope"), 404, "not_found")
        assert len(events(http, status="succeeded")) == 3 and events(http, status="failed") == []
        bad_status = http.get("/ai-gateway/usage", params={"status": "ok"})
        assert assert_error(bad_status, 422, "invalid_request")["param"] == "status"


def test_another_account_cannot_read_my_events(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as http:
        gen = http.post(
            "/chat/completions", json={"model": "emulator/echo", "messages": HELLO}
        ).headers["x-generation-id"]
    other = emulator.create_tenant()
    with other.client() as http:
        assert_error(http.get(f"/ai-gateway/usage/{gen}"), 404, "not_found")
        assert events(http) == []


@pytest.mark.parametrize("endpoint", ["/chat/completions", "/responses"])
def test_the_same_key_and_body_replays_without_a_new_event(tenant: Tenant, endpoint: str) -> None:
    body = {
        "model": "openai/gpt-4o",
        **({"messages": HELLO} if endpoint == "/chat/completions" else {"input": "hi"}),
    }
    with tenant.client(
        headers={"Authorization": f"Bearer {tenant.api_key}", "Idempotency-Key": "same"}
    ) as http:
        first = http.post(endpoint, json=body)
        second = http.post(endpoint, json=body)
        assert "idempotent-replayed" not in first.headers
        assert second.headers["idempotent-replayed"] == "true"
        assert second.content == first.content
        assert second.headers["x-generation-id"] == first.headers["x-generation-id"]
        assert len(events(http)) == 1
        mismatch = http.post(endpoint, json={**body, "model": "openai/gpt-4o-mini"})
        assert_error(mismatch, 422, "idempotency_key_mismatch", "invalid_request_error")


def test_a_key_is_free_again_exactly_a_day_later(emulator: EmulatorHandle, tenant: Tenant) -> None:
    body = {"model": "emulator/echo", "messages": HELLO}
    with tenant.client(headers={"Idempotency-Key": "day"}) as http:
        assert http.post("/chat/completions", json=body).status_code == 200
        emulator.advance(24 * 3600 - 1)
        assert http.post("/chat/completions", json=body).headers["idempotent-replayed"] == "true"
        emulator.advance(1)  # "within 24 hours": the 24th hour's end is not within
        again = http.post("/chat/completions", json=body)
        assert again.status_code == 200 and "idempotent-replayed" not in again.headers
        assert len(events(http)) == 2


def test_the_same_key_and_body_on_another_endpoint_is_a_mismatch(tenant: Tenant) -> None:
    body = {"model": "emulator/echo", "max_tokens": 5, "messages": HELLO}
    with tenant.client(headers={"Idempotency-Key": "cross"}) as http:
        assert http.post("/chat/completions", json=body).status_code == 200
        other = http.post("/messages", json=body)
    assert_error(other, 422, "idempotency_key_mismatch", "invalid_request_error")


def test_a_replayed_stream_is_the_same_stream(tenant: Tenant) -> None:
    body = {"model": "emulator/echo", "messages": HELLO, "stream": True}
    with tenant.client(
        headers={"Authorization": f"Bearer {tenant.api_key}", "Idempotency-Key": "s"}
    ) as http:
        first = http.post("/chat/completions", json=body)
        second = http.post("/chat/completions", json=body)
    assert second.headers["idempotent-replayed"] == "true"
    assert second.headers["content-type"] == "text/event-stream" and second.text == first.text
    assert second.headers["cache-control"] == first.headers["cache-control"] == "no-cache"


def test_the_key_is_in_use_while_the_first_stream_runs(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {
        "model": "emulator/slow",
        "messages": [{"role": "user", "content": "[emulator:tokens=6]"}],
        "stream": True,
    }
    headers = {"Authorization": f"Bearer {tenant.api_key}", "Idempotency-Key": "busy"}
    with httpx.Client(base_url=tenant.base_url, headers=headers, timeout=30) as http:
        with http.stream("POST", "/chat/completions", json=body) as running:
            lines = running.iter_lines()  # kept: dropping it would close the stream
            next(lines)  # the stream has started
            assert_error(
                http.post("/chat/completions", json=body),
                409,
                "idempotency_key_in_use",
                "conflict_error",
            )
            rest = [line for line in lines if line]
        assert rest[-1] == "data: [DONE]"
        assert http.post("/chat/completions", json=body).headers["idempotent-replayed"] == "true"


@pytest.mark.parametrize("leaves", [False, True])
def test_a_first_request_ending_after_its_key_expired_leaves_the_new_record_alone(
    emulator: EmulatorHandle, tenant: Tenant, leaves: bool
) -> None:
    """A key claimed again once its record expired (the clock moved a day while the first
    stream ran) belongs to the second request: the first one ending, or its client
    leaving, neither finishes nor drops the second's record, which replays its own answer."""
    slow = {
        "model": "emulator/slow",
        "messages": [{"role": "user", "content": "[emulator:tokens=6]"}],
        "stream": True,
    }
    headers = {"Authorization": f"Bearer {tenant.api_key}", "Idempotency-Key": f"long-{leaves}"}
    with httpx.Client(base_url=tenant.base_url, headers=headers, timeout=30) as http:
        with http.stream("POST", "/chat/completions", json=slow) as running:
            lines = running.iter_lines()
            next(lines)
            emulator.advance(24 * 3600 + 1)
            second = http.post(
                "/chat/completions", json={"model": "openai/gpt-4o", "messages": HELLO}
            )
            assert second.status_code == 200 and "idempotent-replayed" not in second.headers
            if not leaves:
                assert [line for line in lines if line][-1] == "data: [DONE]"
        time.sleep(0.3)  # a client that left: its request ends on the server meanwhile
        again = http.post("/chat/completions", json={"model": "openai/gpt-4o", "messages": HELLO})
        assert again.headers.get("idempotent-replayed") == "true"
        assert again.headers["content-type"].startswith("application/json")
        assert again.json() == second.json()


def test_errors_are_not_kept_and_keys_expire_after_a_day(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client(
        headers={"Authorization": f"Bearer {tenant.api_key}", "Idempotency-Key": "e"}
    ) as http:
        body = {"model": "emulator/fail-503", "messages": HELLO}
        assert http.post("/chat/completions", json=body).status_code == 503
        assert (
            http.post("/chat/completions", json=body).status_code == 503
        )  # ran again, not replayed
        fixed = http.post("/chat/completions", json={**body, "model": "emulator/echo"})
        assert fixed.status_code == 200
        emulator.advance(24 * 3600 + 1)
        later = http.post("/chat/completions", json={**body, "model": "openai/gpt-4o"})
        assert later.status_code == 200 and "idempotent-replayed" not in later.headers


def test_a_client_that_leaves_mid_stream_still_leaves_a_usage_event(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {
        "model": "emulator/slow",
        "messages": [{"role": "user", "content": "[emulator:tokens=200]"}],
        "stream": True,
    }
    with tenant.client(timeout=30) as http:
        with http.stream("POST", "/chat/completions", json=body) as response:
            lines = (line for line in response.iter_lines() if line.startswith("data:"))
            for _ in range(8):  # the role chunk and seven content chunks
                next(lines)
        done = threading.Event()
        for _ in range(100):  # the server notices the disconnect at its next write
            recorded = events(http)
            if recorded:
                done.set()
                break
            done.wait(0.1)
    assert recorded, "no usage event after the client left"
    event = recorded[0]
    assert event["metadata"]["stream"] is True
    assert event["metadata"]["stream_end"] == "client_left"
    assert 0 < event["completion_tokens"] < 200
    with tenant.client() as http:  # OpenRouter's stats call it cancelled
        assert http.get("/generation", params={"id": event["id"]}).json()["data"]["cancelled"]


def test_a_client_that_leaves_an_unpaced_stream_pays_for_what_was_sent(tenant: Tenant) -> None:
    """Without `--stream-delay-ms` (as the test server runs) the stream never waits
    between chunks; it still stops, and settles, soon after its client has gone."""
    body = {
        "model": "openai/gpt-4.1",
        "max_tokens": 32000,
        "messages": [{"role": "user", "content": "tell a story [emulator:tokens=32000]"}],
        "stream": True,
    }
    with tenant.client(timeout=30) as http:
        with http.stream("POST", "/chat/completions", json=body) as response:
            lines = (line for line in response.iter_lines() if line.startswith("data:"))
            for _ in range(6):
                next(lines)
        waited = threading.Event()
        for _ in range(100):
            recorded = events(http)
            if recorded:
                break
            waited.wait(0.1)
    assert recorded, "no usage event after the client left"
    event = recorded[0]
    assert event["metadata"]["stream_end"] == "client_left"
    # What went out before the server saw the client go: a few hundred tokens from a
    # server of its own, more from this one, which shares the test's process (and GIL).
    assert 0 < event["completion_tokens"] < 32000


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_native_finish_reasons_are_the_serving_providers_words(
    tenant: Tenant, stream: bool
) -> None:
    """OpenRouter's `native_finish_reason` beside the normalised one: what the provider's
    own format said (chat: the same; messages: its `stop_reason`; responses: its status
    or why it is incomplete), in the answer and in the generation stats."""
    tool = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
    asks = {  # what is asked -> the finish reason, the body
        "stop": ("stop", {}),
        "stop_sequence": ("stop", {"stop": ["hashing"]}),  # echo: the prompt's last word
        "length": ("length", {"max_tokens": 3}),
        "tool_calls": ("tool_calls", {"tools": [tool], "tool_choice": "required"}),
    }
    native = {  # provider -> its word for each ask
        "emulator": {k: v[0] for k, v in asks.items()},
        "emulator-messages": {
            "stop": "end_turn",
            "stop_sequence": "stop_sequence",  # which one, it tells
            "length": "max_tokens",
            "tool_calls": "tool_use",
        },
        "emulator-responses": {
            "stop": "completed",
            "stop_sequence": "completed",  # it takes none: the gateway cuts the text
            "length": "max_output_tokens",
            "tool_calls": "completed",
        },
    }
    with tenant.client() as http:
        for provider, words in native.items():
            for asked, (reason, ask) in asks.items():
                body = {
                    "model": "emulator/echo",
                    "messages": HELLO,
                    "provider": {"only": [provider]},
                    "stream": stream,
                    **ask,
                }
                answer = http.post("/chat/completions", json=body)
                assert answer.status_code == 200, answer.text
                if stream:
                    chunks = [
                        json.loads(line[6:])
                        for line in answer.text.splitlines()
                        if line.startswith("data: {")
                    ]
                    choices = [c["choices"][0] for c in chunks if c["choices"]]
                    assert all(c["native_finish_reason"] is None for c in choices[:-1])
                    choice = choices[-1]
                else:
                    choice = answer.json()["choices"][0]
                assert (choice["finish_reason"], choice["native_finish_reason"]) == (
                    reason,
                    words[asked],
                ), (provider, asked)
                gen = answer.headers["x-generation-id"]
                stats = http.get("/generation", params={"id": gen}).json()["data"]
                assert (stats["finish_reason"], stats["native_finish_reason"]) == (
                    reason,
                    words[asked],
                )


def test_debug_echoes_the_providers_request_first_in_a_stream(tenant: Tenant) -> None:
    """OpenRouter's `debug.echo_upstream_body`: a stream starts with the request as the
    serving provider got it (after translation, compression, capping); whole answers
    and requests without it are unchanged."""
    body = {
        "model": "emulator/echo",
        "messages": [{"role": "system", "content": "Be brief."}, *HELLO],
        "provider": {"only": ["emulator-messages"]},
        "stream": True,
        "debug": {"echo_upstream_body": True},
    }
    with tenant.client() as http:
        chat = http.post("/chat/completions", json=body)
        plain = http.post("/chat/completions", json={**body, "debug": {}})
        whole = http.post("/chat/completions", json={**body, "stream": False})
        responses = http.post(
            "/responses",
            json={
                "model": "emulator/echo",
                "input": "hi",
                "provider": {"only": ["emulator"]},
                "stream": True,
                "debug": {"echo_upstream_body": True},
            },
        )
    chunks = [json.loads(line[6:]) for line in chat.text.splitlines() if line[6:7] == "{"]
    first, rest = chunks[0], chunks[1:]
    upstream = first["debug"]["echo_upstream_body"]
    assert first["choices"] == [] and first["id"] == rest[0]["id"]
    assert upstream["system"] == "Be brief." and upstream["model"] == "emulator/echo"  # messages
    plain_chunks = [json.loads(line[6:]) for line in plain.text.splitlines() if line[6:7] == "{"]
    assert [c["choices"] for c in rest] == [c["choices"] for c in plain_chunks]
    assert "debug" not in whole.json()
    events = [json.loads(line[6:]) for line in responses.text.splitlines() if line[:6] == "data: "]
    # After `response.created`, which the SDKs' stream helpers need first.
    assert events[0]["type"] == "response.created" and events[1]["type"] == "response.debug"
    assert events[1]["debug"]["echo_upstream_body"]["messages"][-1]["content"] == "hi"  # chat
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
