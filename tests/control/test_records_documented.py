"""The control plane's fault, job, snapshot, journal and replies answers are what the
OpenAPI document declares (the document is what generated clients are built from)."""

from __future__ import annotations

from typing import Any

import httpx

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import documented

VIDEO = {"model": "emulator/video", "task_type": "text2video", "prompt": "a quiet lake"}


def test_fault_rule_answers(openapi_document: dict[str, Any], emulator: EmulatorHandle) -> None:
    rule = {
        "match": {"path": "/api/v1/nowhere/*", "api_key": "sk-or-v1-x", "method": "POST"},
        "action": {"status": 429, "retry_after": 3, "fail_route": True, "delay_ms": 5},
        "times": 2,
    }
    with httpx.Client(base_url=emulator.url) as http:
        made = http.post("/_emulator/faults", json=rule)
        documented(openapi_document, made, "/_emulator/faults")
        assert made.json()["match"]["api_key"] == "(redacted)"
        rule_id = made.json()["id"]
        documented(
            openapi_document,
            http.get(f"/_emulator/faults/{rule_id}"),
            "/_emulator/faults/{rule_id}",
        )
        documented(
            openapi_document,
            http.get("/_emulator/faults", params={"limit": 1}),
            "/_emulator/faults",
        )
        gone = http.delete(f"/_emulator/faults/{rule_id}")
        documented(openapi_document, gone, "/_emulator/faults/{rule_id}")


def test_forced_job_answers(
    openapi_document: dict[str, Any], emulator: EmulatorHandle, tenant: Tenant
) -> None:
    path = "/_emulator/jobs/{job_id}/"
    with tenant.client() as client:
        for action in ("complete", "fail"):
            job = client.post("/generate/video", json=VIDEO).json()
            forced = httpx.post(f"{emulator.url}/_emulator/jobs/{job['id']}/{action}")
            documented(openapi_document, forced, path + action)
            body = {"model": "openai/gpt-4o-mini", "input": "hi", "background": True}
            made = client.post("/responses", json=body).json()
            forced = httpx.post(f"{emulator.url}/_emulator/jobs/{made['id']}/{action}")
            documented(openapi_document, forced, path + action)


def test_snapshot_answers(openapi_document: dict[str, Any], emulator: EmulatorHandle) -> None:
    with httpx.Client(base_url=f"{emulator.url}/_emulator") as http:
        documented(
            openapi_document,
            http.post("/snapshots", json={"name": "doc-a"}),
            "/_emulator/snapshots",
        )
        documented(openapi_document, http.get("/snapshots"), "/_emulator/snapshots")
        restored = http.post("/snapshots/doc-a/restore")
        documented(openapi_document, restored, "/_emulator/snapshots/{name}/restore")
        documented(openapi_document, http.delete("/snapshots/doc-a"), "/_emulator/snapshots/{name}")


def test_journal_and_replies_answers(
    openapi_document: dict[str, Any], emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        client.post("/chat/completions", json={"model": "openai/gpt-4o", "messages": "x"})
        client.post(
            "/chat/completions",
            json={"model": "openai/gpt-4o", "stream": True, "messages": [
                {"role": "user", "content": "hi"}]},
            headers={"Idempotency-Key": "doc-1"},
        )  # fmt: skip
    with httpx.Client(base_url=f"{emulator.url}/_emulator") as http:
        listed = http.get("/requests", params={"account_id": tenant.account_id})
        documented(openapi_document, listed, "/_emulator/requests")
        assert len(listed.json()["data"]) >= 2
        for entry in listed.json()["data"]:
            detail = http.get(f"/requests/{entry['id']}")
            documented(openapi_document, detail, "/_emulator/requests/{request_id}")
        documented(openapi_document, http.get("/replies"), "/_emulator/replies")


def test_a_model_and_its_endpoints_match_one_declared_answer(
    openapi_document: dict[str, Any], tenant: Tenant
) -> None:
    """The two answers of `/models/{id}` are each valid under exactly one of the `oneOf`."""
    with tenant.client() as client:
        for path in ("/models/openai/gpt-4o", "/models/openai/gpt-4o/endpoints"):
            documented(openapi_document, client.get(path), "/api/v1/models/{model_id}")
