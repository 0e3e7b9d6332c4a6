"""POST /_emulator/jobs/{id}/complete|fail: a running job takes the outcome; a job that
has already ended keeps its own: asked again for it, nothing changes; asked for the other,
the control plane says so (409)."""

from __future__ import annotations

import base64

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


BACKGROUND = {"model": "openai/gpt-4o-mini", "input": "hi", "background": True}


def test_a_background_response_completes_now(emulator: EmulatorHandle, tenant: Tenant) -> None:
    """Forced as a job is: done at once, without moving the clock, with its answer as made."""
    with tenant.openai(max_retries=0) as openai:
        made = openai.responses.create(**BACKGROUND)
        assert made.status == "queued"
        forced = force(emulator, made.id, "complete")
        assert forced.status_code == 200, forced.text
        assert forced.json() == {
            "id": made.id, "object": "job", "family": "background_response",
            "status": "completed", "progress": 100, "error": None,
        }  # fmt: skip
        done = openai.responses.retrieve(made.id)
        assert done.status == "completed" and done.output_text and done.usage is not None
        assert done.completed_at is not None and done.completed_at >= made.created_at
        events = list(openai.responses.retrieve(made.id, stream=True))
        assert events[-1].type == "response.completed" and events[-1].response.status == "completed"
        again = force(emulator, made.id, "complete")
        assert again.status_code == 200 and again.json() == forced.json()
        assert_error(force(emulator, made.id, "fail"), 409, "job_already_ended")
        emulator.advance(10)  # the end of its old schedule changes nothing
        assert openai.responses.retrieve(made.id).completed_at == done.completed_at


def test_a_background_response_fails_now_and_keeps_its_charge(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """As OpenAI's failed response: `failed` with the error, no output, no usage; its
    stream, streamed again, ends with `response.failed`; what it would have said is
    never shown (no reference to its items, nothing read by a later turn). The charge
    stands, as a cancel's does: the answer was made when the request came."""
    with tenant.openai(max_retries=0) as openai:
        with tenant.client() as client:
            made = client.post("/responses", json={**BACKGROUND, "input": "say it"}).json()
            balance = client.get("/ai-gateway/balance").json()["balance_micros"]
            body = {"code": "rate_limit_exceeded", "message": "Too busy."}
            forced = httpx.post(f"{emulator.url}/_emulator/jobs/{made['id']}/fail", json=body)
            assert forced.status_code == 200, forced.text
            assert forced.json()["status"] == "failed" and forced.json()["error"] == body
            assert client.get("/ai-gateway/balance").json()["balance_micros"] == balance
        failed = openai.responses.retrieve(made["id"])
        assert failed.status == "failed" and failed.output == [] and failed.usage is None
        assert failed.error is not None and failed.error.code == "rate_limit_exceeded"
        events = list(openai.responses.retrieve(made["id"], stream=True))
        assert [e.type for e in events] == [
            "response.created", "response.queued", "response.in_progress", "response.failed"
        ]  # fmt: skip
        assert [e.sequence_number for e in events] == [0, 1, 2, 3]
        cancelled = openai.responses.create(**{**BACKGROUND, "input": "say it"})
        openai.responses.cancel(cancelled.id)
        later = [
            openai.responses.create(
                model="openai/gpt-4o-mini", input="then?", previous_response_id=r
            )
            for r in (made["id"], cancelled.id)
        ]
        assert later[0].usage and later[1].usage  # each read the first input, and no output
        assert later[0].usage.input_tokens == later[1].usage.input_tokens
        again = force(emulator, made["id"], "fail")
        assert again.status_code == 200 and again.json() == forced.json()
        assert_error(force(emulator, made["id"], "complete"), 409, "job_already_ended")


def test_forcing_a_response_that_cannot_be_forced(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.openai(max_retries=0) as openai:
        cancelled = openai.responses.create(**BACKGROUND)
        openai.responses.cancel(cancelled.id)
        for action in ("complete", "fail"):
            error = assert_error(force(emulator, cancelled.id, action), 409, "job_already_ended")
            assert "it is cancelled" in error["message"]
        foreground = openai.responses.create(model="openai/gpt-4o-mini", input="hi")
        assert force(emulator, foreground.id, "complete").json()["status"] == "completed"
        assert_error(force(emulator, foreground.id, "fail"), 409, "job_already_ended")
        error = assert_error(force(emulator, "resp_nope", "fail"), 404, "not_found")
        assert "background response" in error["message"]


def test_a_provider_task_is_forced_by_its_provider_task_id_too(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(40)).decode()
    with tenant.client() as client:
        task = client.post("/vidprov/videos/effects", json={"effect_scene": "squish", "image": png})
        provider_id = task.json()["provider_task_id"]
        forced = force(emulator, provider_id, "fail")
        assert forced.status_code == 200 and forced.json()["id"] == task.json()["id"]
        assert client.get(f"/vidprov/tasks/{provider_id}").json()["status"] == "failed"
    error = assert_error(force(emulator, "vp_nope", "complete"), 404, "not_found")
    assert "provider task id" in error["message"]


@pytest.mark.parametrize(
    ("action", "body", "param"),
    [
        ("fail", {"code": "bad code\n"}, "code"),
        ("fail", {"code": ""}, "code"),
        ("fail", {"message": "   "}, "message"),
        ("complete", {"code": "x"}, "code"),
    ],
)
def test_a_forcing_body_is_checked(
    emulator: EmulatorHandle, tenant: Tenant, action: str, body: dict, param: str
) -> None:
    with tenant.client() as client:
        job = client.post("/generate/video", json=VIDEO).json()
        answer = httpx.post(f"{emulator.url}/_emulator/jobs/{job['id']}/{action}", json=body)
        assert assert_error(answer, 422, "invalid_request")["param"] == param
        assert client.get(f"/generation/{job['id']}").json()["status"] == "queued"
    answer = httpx.post(f"{emulator.url}/_emulator/jobs/{job['id']}/complete", content=b"x")
    assert answer.status_code == 400
