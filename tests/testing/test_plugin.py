"""The pytest plugin as a client team meets it: installed, no conftest needed."""

from __future__ import annotations

import pytest

from emulator.testing import EmulatorHandle

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


def test_the_plugin_options_are_listed_in_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--emulator-url*"])
