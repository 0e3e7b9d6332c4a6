"""The routes served in front of litestar (emulator/direct.py): the same answers,
errors, journal and headers as any route, and the same without the direct layer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from emulator import app as app_module
from emulator.app import create_app
from emulator.settings import Settings
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, bearer, send_part_and_leave

CHAT = {"model": "emulator/echo", "messages": [{"role": "user", "content": "direct"}]}
VIDEO = {"model": "emulator/video", "task_type": "text2video", "prompt": "a poll"}


@pytest.fixture
def api(demo: EmulatorHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=demo.base_url, headers=bearer("sk-emu-demo-all")) as client:
        yield client


def test_an_oversized_body_is_413_in_the_envelope(api: httpx.Client) -> None:
    big = b'{"model": "emulator/echo", "messages": [], "x": "' + b"x" * 10_000_001 + b'"}'
    response = api.post("/chat/completions", content=big)
    error = assert_error(response, 413, "payload_too_large")
    assert error["message"].startswith("The request body is larger than 10,000,000 bytes.")
    assert response.headers["x-request-id"].startswith("req_")


def test_a_trailing_slash_and_other_methods_are_answered_as_litestar_would(
    api: httpx.Client,
) -> None:
    assert api.post("/chat/completions/", json=CHAT).status_code == 200
    made = api.post("/generate/video", json=VIDEO).json()
    assert api.get(f"/generation/{made['id']}/").json()["id"] == made["id"]
    wrong = assert_error(api.get("/chat/completions"), 405, "method_not_allowed")
    assert "GET" in wrong["message"]
    assert api.get("/generation/a/b").status_code == 404  # one segment only
    assert api.get("/generation").json()["object"] == "list"  # the list, not a poll


def test_a_trailing_slash_gets_the_same_faults_and_journal_path(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with emulator.faults.add(
        account_id=tenant.account_id, path="/api/v1/chat/completions", status=503
    ) as rule, tenant.client() as client:  # fmt: skip
        assert_error(client.post("/chat/completions/", json=CHAT), 503, "upstream_failed")
        assert rule.hits == 1
    entries = emulator.journal.list(account_id=tenant.account_id, path="/api/v1/chat/completions")
    assert [entry["status"] for entry in entries] == [503]


def test_a_credential_sent_twice_is_read_as_every_route_reads_it(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """The first `Authorization` header, on the direct routes as on litestar's: the same
    request is not billed to one account here and refused there."""
    twice = [("Authorization", "Bearer nope"), ("Authorization", f"Bearer {tenant.api_key}")]
    with httpx.Client(base_url=emulator.base_url) as client:
        assert_error(
            client.post("/chat/completions", json=CHAT, headers=twice), 401, "invalid_api_key"
        )
        assert_error(client.get("/ai-gateway/balance", headers=twice), 401, "invalid_api_key")
        swapped = twice[::-1]
        assert client.post("/chat/completions", json=CHAT, headers=swapped).status_code == 200
        assert client.get("/ai-gateway/balance", headers=swapped).status_code == 200


def test_direct_answers_are_journaled_with_their_bodies(
    demo: EmulatorHandle, api: httpx.Client
) -> None:
    api.post("/chat/completions", json=CHAT | {"stream": True}, headers={"X-Title": "j"})
    api.post("/chat/completions", json={"model": "emulator/echo"})  # a 400
    entries = httpx.get(f"{demo.url}/_emulator/requests", params={"limit": 2}).json()["data"]
    # A stream's entry is written when the stream ends: either may be the newer one.
    invalid, streamed = sorted(entries, key=lambda e: e["stream"])
    assert invalid["status"] == 400 and invalid["error_code"] == "invalid_request"
    assert streamed["stream"] is True and streamed["provider"] == "emulator"
    assert streamed["account_id"] == "acct_demo" and streamed["model"] == "emulator/echo"
    detail = httpx.get(f"{demo.url}/_emulator/requests/{streamed['id']}").json()
    assert detail["request"]["headers"]["x-title"] == "j"
    assert detail["response"]["body"].endswith("data: [DONE]\n\n")


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_its_client_left_before_it_all_came_is_not_run(
    emulator: EmulatorHandle, tenant: Tenant, chunked: bool
) -> None:
    """Nothing is charged and the idempotency key stays free: the client saw no answer."""
    body = json.dumps(CHAT).encode()
    send_part_and_leave(emulator.url, "/api/v1/chat/completions", tenant.api_key, body, chunked)
    journal = f"{emulator.url}/_emulator/requests"
    entry = httpx.get(journal, params={"account_id": tenant.account_id}).json()["data"][0]
    assert (entry["status"], entry["error_code"]) == (499, "client_closed_request")
    with tenant.client() as http:
        assert http.get("/ai-gateway/usage").json()["data"] == []
        assert http.get("/ai-gateway/reservations").json()["data"] == []
        again = http.post(
            "/chat/completions", json=CHAT, headers={"Idempotency-Key": "left-mid-body"}
        )
        assert again.status_code == 200 and "idempotent-replayed" not in again.headers
        assert len(http.get("/ai-gateway/usage").json()["data"]) == 1


def answers(app: Any) -> list[tuple[int, str, str | None]]:
    """What a client sees of a few direct routes: status, body, content type."""
    seen = []
    with TestClient(app, base_url="http://127.0.0.1") as client:
        client.headers.update(bearer("sk-emu-demo-all"))
        requests: list[tuple[str, str, dict[str, Any] | None]] = [
            ("POST", "/api/v1/chat/completions", CHAT),
            ("POST", "/api/v1/chat/completions", CHAT | {"stream": True}),
            ("POST", "/api/v1/responses", {"model": "openai/gpt-4o", "input": "direct"}),
            ("POST", "/api/v1/responses", {"model": "openai/gpt-4o"}),
            ("POST", "/api/v1/generate/video", VIDEO),
        ]
        for method, path, body in requests:
            response = client.request(method, path, json=body)
            seen.append((response.status_code, response.text, response.headers["content-type"]))
        queries = ("", "?limit=2", "?limit=10&cursor=", "?limit=1e1", "?limit=0", "?limit=x")
        for query in (*queries, "?cursor=z"):
            response = client.get(f"/api/v1/models{query}")
            seen.append((response.status_code, response.text, response.headers["content-type"]))
        job = json.loads(seen[4][1])["id"]
        for token in ("sk-emu-demo-all", "sk-emu-demo-gateway"):
            response = client.get(f"/api/v1/generation/{job}", headers=bearer(token))
            seen.append((response.status_code, response.text, response.headers["content-type"]))
    return seen


def test_without_the_direct_layer_the_declarations_answer_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = Settings(db=":memory:", clock="manual", stream_delay_ms=0)
    direct = answers(create_app(settings))
    monkeypatch.setattr(app_module, "with_direct_routes", lambda inner, rt, routes: inner)
    declared = answers(create_app(settings))
    statuses = [status for status, _, _ in direct]
    assert statuses == [200, 200, 200, 400, 200, 200, 200, 200, 422, 422, 422, 422, 200, 403]
    assert declared == direct
