"""The pytest plugin as a client team meets it: installed, no conftest needed."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant

pytest_plugins = ["pytester"]

USER_SUITE = """
import httpx

def test_models_are_served(emulator):
    assert httpx.get(emulator.base_url + "/models").status_code == 200

def test_a_tenant_has_a_working_key(emulator_tenant):
    with emulator_tenant.client() as client:
        assert client.get("/ai-gateway/balance").status_code not in (401, 403)

def test_tenants_are_isolated(emulator, emulator_tenant):
    other = emulator.create_tenant()
    assert other.account_id != emulator_tenant.account_id
    keys = httpx.get(emulator.base_url + "/keys",
                     headers={"Authorization": "Bearer " + emulator_tenant.user_token}).json()
    assert [k["id"] for k in keys["data"]] == [emulator_tenant.api_key_id]

def test_the_clock_is_manual_and_can_be_advanced(emulator):
    before = emulator.clock()["epoch_seconds"]
    assert emulator.advance(60)["epoch_seconds"] == before + 60
"""


def test_a_client_suite_gets_a_live_emulator_and_tenants(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_SUITE)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_emulator_url_points_the_plugin_at_a_running_emulator(
    pytester: pytest.Pytester, emulator: EmulatorHandle
) -> None:
    marker = emulator.create_tenant(name="made-outside").account_id
    pytester.makepyfile(
        test_user=f'''
def test_uses_the_running_one(emulator):
    assert emulator.account("{marker}")["name"] == "made-outside"
'''
    )
    result = pytester.runpytest_subprocess("-q", f"--emulator-url={emulator.url}")
    result.assert_outcomes(passed=1)


def test_a_bad_emulator_url_says_which_option_to_fix(
    pytester: pytest.Pytester, emulator: EmulatorHandle
) -> None:
    """An unreachable URL was a bare ConnectError; a URL without its scheme an
    UnsupportedProtocol."""
    pytester.makepyfile(test_user="def test_any(emulator):\n    pass\n")
    for url in ("http://127.0.0.1:9", emulator.url.removeprefix("http://")):
        result = pytester.runpytest_subprocess("-q", f"--emulator-url={url}")
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines(["*(--emulator-url or EMULATOR_URL) cannot be reached*"])


def test_a_missing_admin_token_says_which_option_gives_it(pytester: pytest.Pytester) -> None:
    from emulator.server import BackgroundServer
    from emulator.settings import Settings

    server = BackgroundServer(
        Settings(db=":memory:", clock="manual", admin_token="s3cret", log_level="warning")
    ).start()
    try:
        pytester.makepyfile(test_user="def test_any(emulator):\n    pass\n")
        result = pytester.runpytest_subprocess("-q", f"--emulator-url={server.url}")
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines(["*--emulator-admin-token or EMULATOR_ADMIN_TOKEN*"])
        passed = pytester.runpytest_subprocess(
            "-q", f"--emulator-url={server.url}", "--emulator-admin-token=s3cret"
        )
        passed.assert_outcomes(passed=1)
    finally:
        server.stop()


def test_the_plugin_options_are_listed_in_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--emulator-url*"])


TOOLKIT_SUITE = """
import json, os

CHAT = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hi"}]}


def note(emulator):
    folder = os.environ["SEEN_DIR"]
    with open(os.path.join(folder, os.environ.get("PYTEST_XDIST_WORKER", "main")), "a") as f:
        f.write(emulator.url + "\\n")


def test_a_fault_rule_removes_itself(emulator, emulator_tenant):
    note(emulator)
    with emulator.faults.add(status=503, times=1) as rule:  # global: this worker only
        with emulator_tenant.client() as c:
            assert c.post("/chat/completions", json=CHAT).status_code == 503
        assert rule.hits == 1
    assert emulator.faults.list() == []


def test_the_journal_shows_what_was_sent(emulator, emulator_tenant):
    note(emulator)
    with emulator_tenant.client(headers={"Idempotency-Key": "abc"}) as c:
        c.post("/chat/completions", json=CHAT)
    sent = emulator.journal.last(account_id=emulator_tenant.account_id)
    assert sent["request"]["body"]["model"] == "openai/gpt-4o"
    assert sent["idempotency_key"] == "abc" and sent["status"] == 200


def test_snapshots_and_the_clock(emulator, emulator_tenant):
    note(emulator)
    with emulator.snapshots.saved("clean"):
        emulator.advance(86_400)
        emulator.top_up(emulator_tenant.account_id, 1_000_000)
    assert emulator.account(emulator_tenant.account_id)["balance_micros"] == 25_000_000


def test_a_header_fault(emulator, emulator_tenant):
    note(emulator)
    with emulator_tenant.client(headers={"X-Emulator-Fault": "429"}) as c:
        assert c.get("/ai-gateway/balance").status_code == 429
"""


@pytest.mark.slow  # two pytest workers, each starting Python and an emulator
def test_the_toolkit_works_under_xdist_with_each_worker_isolated(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(test_user=TOOLKIT_SUITE)
    seen = tmp_path / "seen"
    seen.mkdir()
    os.environ["SEEN_DIR"] = str(seen)
    try:
        result = pytester.runpytest_subprocess("-q", "-n", "2", "-p", "no:cacheprovider")
    finally:
        del os.environ["SEEN_DIR"]
    result.assert_outcomes(passed=4)
    urls = {path.name: set(path.read_text().split()) for path in seen.iterdir()}
    assert set(urls) == {"gw0", "gw1"}  # both workers ran tests...
    assert all(len(u) == 1 for u in urls.values())  # ...each on one emulator...
    assert urls["gw0"] != urls["gw1"]  # ...of its own


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def _first_call_arguments(tenant: Tenant) -> str:
    body = {
        "model": "openai/gpt-4o",
        "messages": [{"role": "user", "content": "plugin weather test"}],
        "tools": [WEATHER_TOOL],
    }
    with tenant.client() as c:
        message = c.post("/chat/completions", json=body).json()["choices"][0]["message"]
    return str(message["tool_calls"][0]["function"]["arguments"])


def test_scripted_replies_apply_inside_the_block_only(
    emulator: EmulatorHandle, emulator_tenant: Tenant
) -> None:
    before = emulator.replies.list()
    rule = {
        "pattern": "^plugin weather test$",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
    }
    with emulator.replies.scripted(rule) as rules:
        assert rules[0]["pattern"] == rule["pattern"] and rules[1:] == before
        assert _first_call_arguments(emulator_tenant) == '{"city":"Oslo"}'
    assert emulator.replies.list() == before
    assert _first_call_arguments(emulator_tenant) != '{"city":"Oslo"}'  # generated again


def test_a_bad_scripted_reply_is_refused_and_changes_nothing(emulator: EmulatorHandle) -> None:
    before = emulator.replies.list()
    with pytest.raises(httpx.HTTPStatusError) as refused:
        emulator.replies.set([{"pattern": "(", "reply": "never"}])
    assert refused.value.response.status_code == 422
    assert refused.value.response.json()["error"]["param"] == "replies[0].pattern"
    assert emulator.replies.list() == before
