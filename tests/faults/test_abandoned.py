"""A client that gives up during an injected delay: the request it left is not run.

A review found an SDK whose timeout was shorter than a `latency` fault was charged
three times for one call that never got an answer: its first try and both retries
ran and settled after nobody waited for them.
"""

from __future__ import annotations

import time

import httpx
import openai
import pytest

from emulator.testing import EmulatorHandle, Tenant

HI = [{"role": "user", "content": "hello there"}]


def _entries(emulator: EmulatorHandle, account_id: str) -> list[dict[str, object]]:
    listed = emulator.control("GET", f"/requests?account_id={account_id}&limit=100")
    return list(listed["data"])


def test_an_sdk_that_times_out_during_a_delay_is_not_charged(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    before = emulator.account(tenant.account_id)["balance_micros"]
    with (
        openai.OpenAI(
            base_url=tenant.base_url, api_key=tenant.api_key, timeout=0.3, max_retries=2
        ) as client,
        pytest.raises(openai.APITimeoutError),
    ):
        client.chat.completions.create(
            model="openai/gpt-4o-mini",
            messages=HI,  # type: ignore[arg-type]
            extra_headers={"X-Emulator-Fault": "latency=2000"},
        )
    time.sleep(0.3)  # the last try's disconnect reaches the server
    statuses = [e["status"] for e in _entries(emulator, tenant.account_id)]
    assert statuses == [499, 499, 499]
    account = emulator.account(tenant.account_id)
    assert account["balance_micros"] == before
    with tenant.client() as http:
        usage = http.get("/ai-gateway/usage").json()["data"]
    assert usage == []


def test_a_client_that_waits_out_the_delay_is_answered_and_charged_once(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client(timeout=10) as http:
        start = time.perf_counter()
        reply = http.post(
            "/chat/completions",
            json={"model": "openai/gpt-4o-mini", "messages": HI},
            headers={"X-Emulator-Fault": "latency=300"},
        )
        assert time.perf_counter() - start >= 0.3
        assert reply.status_code == 200
        usage = http.get("/ai-gateway/usage").json()["data"]
    assert len(usage) == 1


def test_a_video_request_left_during_a_delay_creates_no_job(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    before = emulator.account(tenant.account_id)["balance_micros"]
    with tenant.client(timeout=0.3) as http, pytest.raises(httpx.TimeoutException):
        http.post(
            "/generate/video",
            json={"model": "vidprov/v1.6", "task_type": "text2video", "prompt": "a fox"},
            headers={"X-Emulator-Fault": "latency=2000"},
        )
    time.sleep(0.3)
    assert [e["status"] for e in _entries(emulator, tenant.account_id)] == [499]
    assert emulator.account(tenant.account_id)["balance_micros"] == before
