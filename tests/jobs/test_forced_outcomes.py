"""POST /_emulator/jobs/{id}/complete|fail: a running job takes the outcome; a job that
has already ended keeps its own: asked again for it, nothing changes; asked for the other,
the control plane says so (409)."""

from __future__ import annotations

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

ENDING = {"failed": "fail", "completed": "complete"}
VIDEO = {"model": "emulator/video", "task_type": "text2video", "prompt": "a quiet lake"}


def force(emulator: EmulatorHandle, job_id: str, action: str) -> httpx.Response:
    return httpx.post(f"{emulator.url}/_emulator/jobs/{job_id}/{action}")


@pytest.mark.parametrize(("ended", "action"), [("failed", "complete"), ("completed", "fail")])
def test_forcing_the_other_outcome_on_an_ended_job_is_409_and_changes_nothing(
    emulator: EmulatorHandle, tenant: Tenant, ended: str, action: str
) -> None:
    with tenant.client() as client:
        job = client.post("/generate/video", json=VIDEO).json()
        assert force(emulator, job["id"], ENDING[ended]).status_code == 200
        before = client.get(f"/generation/{job['id']}").json()
        balance = client.get("/ai-gateway/balance").json()["balance_micros"]
        error = assert_error(force(emulator, job["id"], action), 409, "job_already_ended")
        assert error["type"] == "conflict_error" and error["param"] == "id"
        assert job["id"] in error["message"] and f"already ended: {ended}" in error["message"]
        assert client.get(f"/generation/{job['id']}").json() == before
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == balance


@pytest.mark.parametrize("ended", ["failed", "completed"])
def test_forcing_the_outcome_a_job_has_changes_nothing(
    emulator: EmulatorHandle, tenant: Tenant, ended: str
) -> None:
    """As with `--job-speed instant`, where jobs end as they are made: `complete` again
    is harmless."""
    with tenant.client() as client:
        job = client.post("/generate/video", json=VIDEO).json()
        first = force(emulator, job["id"], ENDING[ended])
        before = client.get(f"/generation/{job['id']}").json()
        again = force(emulator, job["id"], ENDING[ended])
        assert again.status_code == 200 and again.json() == first.json()
        assert client.get(f"/generation/{job['id']}").json() == before


def test_a_job_that_ended_on_its_schedule_is_409_too(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        job = client.post("/generate/video", json=VIDEO).json()
        emulator.advance(600)
        assert client.get(f"/generation/{job['id']}").json()["status"] == "completed"
    assert_error(force(emulator, job["id"], "fail"), 409, "job_already_ended")
    assert force(emulator, job["id"], "complete").status_code == 200


def test_a_running_job_takes_the_forced_outcome(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as client:
        job = client.post("/generate/video", json=VIDEO).json()
        emulator.advance(5)
        assert client.get(f"/generation/{job['id']}").json()["status"] == "processing"
        forced = force(emulator, job["id"], "fail")
        assert forced.status_code == 200 and forced.json()["status"] == "failed"
        assert client.get(f"/generation/{job['id']}").json()["refunded"]


def test_a_background_response_is_not_a_job(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as client:
        made = client.post(
            "/responses",
            json={"model": "openai/gpt-4o-mini", "input": "hi", "background": True},
            headers={"X-Emulator-Fault": "fail-job"},
        )
        assert made.status_code == 200 and made.json()["status"] == "queued", made.text
        for action in ("complete", "fail"):
            error = assert_error(force(emulator, made.json()["id"], action), 404, "not_found")
            assert "background response is not a job" in error["message"]
        emulator.advance(10)
        assert client.get(f"/responses/{made.json()['id']}").json()["status"] == "completed"
