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


def statuses_seen(
    emulator: EmulatorHandle, client: httpx.Client, created: dict[str, Any], path: str, check: Any
) -> set[str]:
    """Each status a job shows from its creation to its end, each answer `check`ed."""
    check(created)
    seen = {created["status"]}
    for _ in range(8):
        emulator.advance(15)
        record = client.get(f"{path}/{created['id']}").json()
        check(record)
        seen.add(record["status"])
    return seen


def schema(components: dict[str, Any], name: str) -> Any:
    return lambda body: conforms(components, name, body)


@pytest.mark.parametrize("prompt", ["a quiet lake", "[emulator:fail] a storm"])
def test_generation_records_match_the_document(
    emulator: EmulatorHandle, tenant: Tenant, components: dict[str, Any], prompt: str
) -> None:
    with tenant.client() as client:
        created = client.post("/generate/video", json=VIDEO | {"prompt": prompt}).json()
        check = schema(components, "Generation")
        seen = statuses_seen(emulator, client, created, "/generation", check)
        conforms(components, "GenerationList", client.get("/generation?limit=1").json())
        chat = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
        made = client.post("/chat/completions", json=chat).json()
        stats = client.get("/generation", params={"id": made["id"]}).json()
        conforms(components, "GenerationStats", stats)
    ended = "failed" if "fail" in prompt else "completed"
    assert {"queued", "processing", ended} <= seen


@pytest.mark.parametrize("fails", [False, True])
def test_provider_tasks_match_the_document(
    emulator: EmulatorHandle, tenant: Tenant, components: dict[str, Any], fails: bool
) -> None:
    with tenant.client() as client:
        headers = {"X-Emulator-Fault": "fail-job"} if fails else {}
        created = client.post("/vidprov/videos/effects", json=TASK, headers=headers).json()
        check = schema(components, "ProviderTask")
        seen = statuses_seen(emulator, client, created, "/vidprov/tasks", check)
        conforms(components, "ProviderTaskList", client.get("/vidprov/tasks?limit=1").json())
    assert {"queued", "processing", "failed" if fails else "completed"} <= seen
