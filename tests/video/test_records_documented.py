"""The video and provider-task answers are what the OpenAPI document declares, in every
state a job can be in (the document is what generated clients are built from)."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import jsonschema
import pytest

from emulator.testing import EmulatorHandle, Tenant

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(40)).decode()
VIDEO = {"model": "emulator/video", "task_type": "text2video", "prompt": "a quiet lake"}
TASK = {"effect_scene": "squish", "image": PNG}


@pytest.fixture(scope="module")
def components(emulator: EmulatorHandle) -> dict[str, Any]:
    document: dict[str, Any] = httpx.get(f"{emulator.url}/schema/openapi.json").json()
    return document["components"]


def conforms(components: dict[str, Any], name: str, body: Any) -> None:
    schema = {"$ref": f"#/components/schemas/{name}", "components": components}
    jsonschema.validate(body, schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("prompt", ["a quiet lake", "[emulator:fail] a storm"])
def test_generation_records_match_the_document(
    emulator: EmulatorHandle, tenant: Tenant, components: dict[str, Any], prompt: str
) -> None:
    with tenant.client() as client:
        created = client.post("/generate/video", json=VIDEO | {"prompt": prompt}).json()
        conforms(components, "Generation", created)
        seen = {created["status"]}
        for _ in range(8):
            emulator.advance(15)
            record = client.get(f"/generation/{created['id']}").json()
            conforms(components, "Generation", record)
            seen.add(record["status"])
    ended = "failed" if "fail" in prompt else "completed"
    assert {"queued", "processing", ended} <= seen


@pytest.mark.parametrize("fails", [False, True])
def test_provider_tasks_match_the_document(
    emulator: EmulatorHandle, tenant: Tenant, components: dict[str, Any], fails: bool
) -> None:
    with tenant.client() as client:
        headers = {"X-Emulator-Fault": "fail-job"} if fails else {}
        created = client.post("/vidprov/videos/effects", json=TASK, headers=headers).json()
        conforms(components, "ProviderTask", created)
        seen = {created["status"]}
        for _ in range(8):
            emulator.advance(15)
            task = client.get(f"/vidprov/tasks/{created['id']}").json()
            conforms(components, "ProviderTask", task)
            seen.add(task["status"])
        conforms(components, "ProviderTaskList", client.get("/vidprov/tasks?limit=1").json())
    assert {"queued", "processing", "failed" if fails else "completed"} <= seen
