"""The handle's helpers that every client suite needs: errors that say why, rule hits
after removal, providers down for a block, forced job outcomes, a tenant's keys and its
openai client."""

from __future__ import annotations

import openai
import pytest

from emulator.testing import ControlError, EmulatorHandle, Tenant
from tests.video.test_generate_video import generate

CHAT = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hi"}]}


def test_a_refused_control_call_says_why(emulator: EmulatorHandle) -> None:
    with pytest.raises(ControlError, match=r"422 .*action\.tiems") as caught:
        emulator.faults.add(cut_stream_after=3, action={"tiems": 1})
    assert caught.value.response.status_code == 422  # an httpx.HTTPStatusError too


def test_a_misspelt_flat_field_names_both_kinds(emulator: EmulatorHandle) -> None:
    """`acount_id` read as an action field was a 422 about `action.acount_id`."""
    with pytest.raises(TypeError, match=r"unknown fields \['acount_id'\]: match fields"):
        emulator.faults.add(acount_id="acct_x", status=503)
    assert emulator.faults.list() == []


def test_a_rule_made_before_a_reset_leaves_the_next_one_alone(emulator: EmulatorHandle) -> None:
    """Ids start again after a reset: the old block's end removed the new rule."""
    emulator.reset()  # so that the first rule below has the first id too
    try:
        with emulator.faults.add(path="/api/v1/models", status=503) as outer:
            emulator.reset()
            inner = emulator.faults.add(path="/api/v1/chat/*", status=429, times=5)
            assert inner.id == outer.id
        assert [rule["id"] for rule in emulator.faults.list()] == [inner.id]
        assert inner.hits == 0 and outer.hits == 0
    finally:
        emulator.faults.clear()


def test_a_rule_cleared_or_reset_keeps_its_count(emulator: EmulatorHandle, tenant: Tenant) -> None:
    rule = emulator.faults.add(account_id=tenant.account_id, status=503, times=1)
    with rule, tenant.client() as c:
        assert c.get("/ai-gateway/balance").status_code == 503
        emulator.faults.clear()
        assert rule.hits == 1  # as when it was cleared (it read 0 after the block)
    assert rule.hits == 1


def test_saved_refuses_a_name_already_saved(emulator: EmulatorHandle) -> None:
    """It deleted the test's own snapshot of that name on its way out."""
    emulator.snapshots.save("kept-by-the-test")
    try:
        with (
            pytest.raises(ValueError, match="exists already"),
            emulator.snapshots.saved("kept-by-the-test"),
        ):
            pass
        emulator.snapshots.restore("kept-by-the-test")  # still there
        with pytest.raises(ValueError, match="must not be empty"):
            emulator.snapshots.restore("")
    finally:
        emulator.snapshots.delete("kept-by-the-test")


def test_the_last_request_ignores_a_limit(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as c:
        c.get("/ai-gateway/balance")
    last = emulator.journal.last(account_id=tenant.account_id, limit=2)
    assert last is not None and last["path"] == "/api/v1/ai-gateway/balance"


def test_a_removed_rule_still_counts_its_hits(emulator: EmulatorHandle, tenant: Tenant) -> None:
    rule = emulator.faults.add(account_id=tenant.account_id, status=503)
    with rule, tenant.client() as c:
        assert c.get("/ai-gateway/balance").status_code == 503
    assert rule.hits == 1  # read when it was removed


def test_a_provider_is_down_for_the_block_only(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as c:
        with pytest.raises(RuntimeError), emulator.providers.down("openai"):
            assert c.post("/chat/completions", json=CHAT).json()["provider"] == "azure"
            raise RuntimeError("the test fails inside the block")
        assert c.post("/chat/completions", json=CHAT).json()["provider"] == "openai"
    with emulator.providers.slow("openai"):  # nested: each block puts back what it found
        with emulator.providers.down("openai"):
            assert emulator.providers.get("openai")["status"] == "down"
        assert emulator.providers.get("openai")["status"] == "slow"
    assert emulator.providers.get("openai")["status"] == "up"
    with pytest.raises(LookupError, match="the providers are openai"):
        emulator.providers.get("nobody")


def test_jobs_are_completed_or_failed_on_demand(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as c:
        done, failed = (generate(c).json()["id"] for _ in range(2))
        emulator.jobs.complete(done)
        emulator.jobs.fail(failed, code="nsfw_detected", message="no")
        assert c.get(f"/generation/{done}").json()["status"] == "completed"
        record = c.get(f"/generation/{failed}").json()
    assert (record["status"], record["error"]["code"]) == ("failed", "nsfw_detected")


def test_a_tenant_makes_keys_and_an_openai_client(tenant: Tenant) -> None:
    limited = tenant.create_key(spend_limit_micros=1, spend_reset_interval="daily")
    assert limited["key"].startswith("sk-emu-") and limited["spend_limit_micros"] == 1
    client = tenant.openai()
    assert client.max_retries == 0  # the manual clock: a retry would sleep for nothing
    with client:
        answer = client.chat.completions.create(model="emulator/echo", messages=CHAT["messages"])
    assert answer.choices[0].message.content == "hi"
    poor = openai.OpenAI(api_key=limited["key"], base_url=tenant.base_url, max_retries=0)
    with poor, pytest.raises(openai.APIStatusError) as refused:
        poor.chat.completions.create(**CHAT)
    assert refused.value.status_code == 402 and refused.value.code == "budget_exceeded"
    with pytest.raises(ControlError, match="scopes"):
        tenant.create_key(scopes=["admin"])
