"""Requests per minute per key and per account, on the virtual clock."""

from __future__ import annotations

import httpx
import openai
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, bearer

HELLO = {"model": "emulator/echo", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}


def to_minute_end(emulator: EmulatorHandle, seconds_left: float) -> None:
    """Move the virtual clock to `seconds_left` before the next minute starts."""
    now = emulator.clock()["epoch_seconds"]
    emulator.advance((60 - now % 60 - seconds_left) % 60)


def test_the_account_limit_and_its_headers(emulator: EmulatorHandle) -> None:
    tenant = emulator.create_tenant(rate_limit_rpm=3)
    to_minute_end(emulator, 30)
    with tenant.client() as http:
        remaining = []
        for _ in range(3):
            r = http.post("/chat/completions", json=HELLO)
            assert r.status_code == 200
            assert r.headers["x-ratelimit-limit"] == "3" and r.headers["x-ratelimit-reset"] == "30"
            remaining.append(r.headers["x-ratelimit-remaining"])
        assert remaining == ["2", "1", "0"]
        refused = http.post("/chat/completions", json=HELLO)
        error = assert_error(refused, 429, "rate_limit_exceeded", "rate_limit_error")
        assert (
            refused.headers["retry-after"] == "30" and refused.headers["retry-after-ms"] == "30000"
        )
        assert (
            refused.headers["x-ratelimit-remaining"] == "0"
            and "3 requests per minute" in error["message"]
        )
        # Every gateway route counts and answers with the headers, balance included.
        assert http.get("/ai-gateway/balance").status_code == 429
        emulator.advance(30)  # the next minute: the window is free again
        ok = http.get("/ai-gateway/balance")
        assert ok.status_code == 200 and ok.headers["x-ratelimit-remaining"] == "2"


def test_a_key_limit_is_its_own(demo: EmulatorHandle) -> None:
    to_minute_end(demo, 50)
    limited = {"Authorization": "Bearer sk-emu-demo-ratelimited"}
    with httpx.Client(base_url=demo.base_url) as http:
        for _ in range(3):
            assert http.post("/chat/completions", json=HELLO, headers=limited).status_code == 200
        assert_error(
            http.post("/chat/completions", json=HELLO, headers=limited), 429, "rate_limit_exceeded"
        )
        # Another key of the same account is not limited by it.
        other = http.post("/chat/completions", json=HELLO, headers=bearer("sk-emu-demo-gateway"))
        assert other.status_code == 200 and other.headers["x-ratelimit-limit"] == "600"


def test_the_openai_sdk_retry_succeeds_once_the_window_passes(emulator: EmulatorHandle) -> None:
    tenant: Tenant = emulator.create_tenant(rate_limit_rpm=1)
    to_minute_end(emulator, 1)
    seen: list[int] = []

    def on_response(response: httpx.Response) -> None:
        seen.append(response.status_code)
        if response.status_code == 429:  # the SDK now waits Retry-After (1 s) ...
            emulator.advance(2)  # ... while the virtual minute ends

    with (
        httpx.Client(event_hooks={"response": [on_response]}) as http_client,
        openai.OpenAI(
            base_url=emulator.base_url,
            api_key=tenant.api_key,
            max_retries=2,
            http_client=http_client,
        ) as client,
    ):
        client.chat.completions.create(**HELLO)
        answer = client.chat.completions.create(**HELLO)
    assert answer.choices[0].message.content == "hi"
    assert seen == [200, 429, 200]


def test_the_openai_sdk_raises_rate_limit_error(emulator: EmulatorHandle) -> None:
    tenant = emulator.create_tenant(rate_limit_rpm=1)
    with openai.OpenAI(base_url=emulator.base_url, api_key=tenant.api_key, max_retries=0) as client:
        client.chat.completions.create(**HELLO)
        with pytest.raises(openai.RateLimitError) as info:
            client.chat.completions.create(**HELLO)
    assert info.value.status_code == 429 and info.value.code == "rate_limit_exceeded"


def test_listing_video_records_is_not_a_gateway_call(emulator: EmulatorHandle) -> None:
    """`GET /generation` lists video records (not counted); with `id` it is OpenRouter's
    generation stats, a gateway call (counted, with the headers)."""
    tenant = emulator.create_tenant(rate_limit_rpm=2)
    to_minute_end(emulator, 30)
    with tenant.client() as http:
        served = http.post("/chat/completions", json=HELLO)
        for _ in range(4):
            listed = http.get("/generation")
            assert listed.status_code == 200 and "x-ratelimit-limit" not in listed.headers
        stats = http.get("/generation", params={"id": served.headers["x-generation-id"]})
        assert stats.status_code == 200 and stats.headers["x-ratelimit-remaining"] == "0"
        again = http.get("/generation", params={"id": served.headers["x-generation-id"]})
        assert_error(again, 429, "rate_limit_exceeded")
        assert http.get("/generation").status_code == 200
