"""GET /api/v1/generation?id=: OpenRouter's stats of one gateway request, from its usage
event; the same path without `id` lists video records (tests/video)."""

from __future__ import annotations

import httpx

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, scoped_client


def _chat(http: httpx.Client, **body: object) -> httpx.Response:
    body = {"messages": [{"role": "user", "content": "stats please"}], **body}
    response = http.post("/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return response


def test_a_fallback_shows_every_provider_response_and_the_usd_cost(tenant: Tenant) -> None:
    with tenant.client() as http:
        answer = _chat(http, model="emulator/fail-503", models=["emulator/echo"], stream=True)
        gen_id = answer.headers["x-generation-id"]
        stats = http.get("/generation", params={"id": gen_id}).json()["data"]
        event = http.get(f"/ai-gateway/usage/{gen_id}").json()
    assert stats["id"] == gen_id and stats["model"] == "emulator/echo"
    assert [(r["status"], r["model_permaslug"]) for r in stats["provider_responses"]] == [
        (503, "emulator/fail-503"),
        (200, "emulator/echo"),
    ]
    assert stats["streamed"] is True and stats["api_type"] == "completions"
    assert stats["latency"] == sum(a["latency_ms"] for a in event["route_attempts"])
    assert stats["total_cost"] == event["charge_micros"] / 1_000_000
    assert stats["native_tokens_prompt"] == event["prompt_tokens"]
    assert stats["request_id"] == answer.headers["x-request-id"]


def test_a_response_id_finds_its_generation(tenant: Tenant) -> None:
    with tenant.client() as http:
        created = http.post("/responses", json={"model": "emulator/echo", "input": "hi"})
        stats = http.get("/generation", params={"id": created.json()["id"]})
    assert stats.status_code == 200
    assert stats.json()["data"]["id"] == created.headers["x-generation-id"]


def test_unknown_and_other_accounts_generations_are_not_found(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    other = emulator.create_tenant()
    with tenant.client() as http, other.client() as theirs:
        gen_id = _chat(http, model="emulator/echo").headers["x-generation-id"]
        for client, asked in ((http, "gen_nope"), (theirs, gen_id)):
            error = assert_error(client.get("/generation", params={"id": asked}), 404, "not_found")
            assert error["param"] == "id" and asked in error["message"]
        video = assert_error(http.get("/generation", params={"id": "vgen_x"}), 404, "not_found")
        assert "GET /generation/vgen_x" in video["message"]  # the path that reads it
        for odd in ("", "x" * 201):  # neither a list nor an echo of any length
            refused = http.get("/generation", params={"id": odd})
            assert refused.status_code in (400, 422) and refused.json()["error"]["param"] == "id"


def test_stats_take_the_gateway_scope_and_the_list_the_video_scope(tenant: Tenant) -> None:
    with tenant.client() as http:
        gen_id = _chat(http, model="emulator/echo").headers["x-generation-id"]
    gateway_only = scoped_client(tenant, "ai.gateway", "ai_gateway")
    video_only = scoped_client(tenant, "video", "video")
    with gateway_only, video_only:
        assert gateway_only.get("/generation", params={"id": gen_id}).status_code == 200
        assert_error(gateway_only.get("/generation"), 403, "insufficient_scope")
        assert video_only.get("/generation").status_code == 200
        refused = video_only.get("/generation", params={"id": gen_id})
        assert "`ai.gateway`" in assert_error(refused, 403, "insufficient_scope")["message"]
        # Refused before anything else acts on it: its query checked, a fault applied.
        assert_error(gateway_only.get("/generation?limit=0"), 403, "insufficient_scope")
        faulted = gateway_only.get("/generation", headers={"X-Emulator-Fault": "503"})
        assert_error(faulted, 403, "insufficient_scope")
        assert_error(video_only.get("/generation?id="), 403, "insufficient_scope")


def test_stats_count_against_the_rate_limit_and_a_video_list_does_not(
    emulator: EmulatorHandle,
) -> None:
    tenant = emulator.create_tenant(rate_limit_rpm=3)
    with tenant.client() as http:
        lists = [http.get("/generation").status_code for _ in range(4)]
        stats = [http.get("/generation", params={"id": "gen_x"}).status_code for _ in range(4)]
    assert lists == [200] * 4
    assert stats == [404, 404, 404, 429]
