"""The OpenAPI document at /schema/openapi.json: valid, complete, and honest about errors."""

from __future__ import annotations

import re

import httpx
import pytest
from openapi_spec_validator import validate

from tests.auth.test_route_auth import ROUTES
from tests.helpers import assert_error


@pytest.fixture(scope="module")
def document(emulator) -> dict:
    return httpx.get(f"{emulator.url}/schema/openapi.json").json()


def test_the_document_is_valid_openapi(document: dict) -> None:
    validate(document)
    assert document["info"]["title"] == "Gateway & Studio emulator"


def test_every_interface_route_is_documented(document: dict) -> None:
    paths = document["paths"]
    for method, concrete, _ in ROUTES:
        templates = [t for t in _templates_for(concrete, paths) if method.lower() in paths[t]]
        assert templates, (method, concrete)


def _templates_for(concrete: str, paths: dict) -> list[str]:
    parts = ("/api/v1" + concrete).split("/")
    found = []
    for template in paths:
        t = template.split("/")
        if len(t) == len(parts) and all(
            a == b or a.startswith("{") for a, b in zip(t, parts, strict=True)
        ):
            found.append(template)
    return found


def test_control_plane_and_keys_have_real_models(document: dict) -> None:
    paths = document["paths"]
    for path, method in [
        ("/_emulator/health", "get"),
        ("/_emulator/reset", "post"),
        ("/_emulator/accounts", "post"),
        ("/_emulator/accounts/{account_id}", "get"),
        ("/_emulator/accounts/{account_id}/topup", "post"),
        ("/_emulator/clock", "get"),
        ("/_emulator/clock", "post"),
        ("/api/v1/keys", "get"),
        ("/api/v1/keys", "post"),
        ("/api/v1/keys/{key_id}", "patch"),
        ("/api/v1/keys/{key_id}", "delete"),
        ("/api/v1/models", "get"),
        ("/api/v1/ai-gateway/pricing", "get"),
        ("/api/v1/generation", "get"),
        ("/_emulator/faults", "get"),
        ("/_emulator/faults", "post"),
        ("/_emulator/jobs/{job_id}/fail", "post"),
        ("/_emulator/snapshots", "get"),
        ("/_emulator/requests", "get"),
        ("/_emulator/replies", "get"),
    ]:
        operation = paths[path][method]
        assert operation.get("summary"), (path, method)
        ok = next(v for k, v in operation["responses"].items() if k.startswith("2"))
        schema = ok["content"]["application/json"]["schema"]
        assert "$ref" in schema or "oneOf" in schema, (path, method)
    schemas = document["components"]["schemas"]
    for name in (
        "KeyCreate",
        "KeyUpdate",
        "ApiKeyCreated",
        "TenantCreate",
        "TopUp",
        "ClockSet",
        "ModelList",
    ):
        assert name in schemas


def test_every_error_answer_is_documented_as_the_envelope(document: dict) -> None:
    for item in document["paths"].values():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                if status[0] in "45":
                    schema = response["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorEnvelope"}, (
                        method,
                        status,
                    )
            if operation.get("security") == [{"bearer": []}]:
                assert "401" in operation["responses"]


def test_each_route_documents_the_credential_and_scope_it_takes(document: dict) -> None:
    """Interface sections 4 and 5: which credential, which scope; a 403 only where a
    scope is needed."""
    paths = document["paths"]
    schemes = document["components"]["securitySchemes"]
    assert {"bearer", "userToken", "admin"} <= set(schemes)
    assert paths["/api/v1/keys"]["post"]["security"] == [{"userToken": []}]
    assert paths["/api/v1/models"]["get"]["security"] == [{}, {"bearer": []}]
    chat = paths["/api/v1/chat/completions"]["post"]
    assert chat["security"] == [{"bearer": []}] and "403" in chat["responses"]
    assert chat["description"].endswith("Needs an API key with the scope `ai.gateway`.")
    stats = paths["/api/v1/generation"]["get"]["description"]
    assert stats.endswith("scope `video`; with `id`, the scope `ai.gateway`.")
    for path, method in [("/api/v1/key", "get"), ("/api/v1/keys", "post")]:
        assert "403" not in paths[path][method]["responses"], path


def test_the_docs_page_is_served(http: httpx.Client) -> None:
    response = http.get("/schema")
    assert response.status_code == 200 and "text/html" in response.headers["content-type"]
    assert "openapi" in response.text.lower()
    document = http.get("/schema/openapi.json")  # SPEC 9: JSON is `application/json`
    assert document.headers["content-type"] == "application/json"
    assert document.json()["openapi"].startswith("3.")


def test_the_docs_page_needs_nothing_from_the_internet(http: httpx.Client) -> None:
    """Swagger UI's files are served by the emulator: the page works offline."""
    page = http.get("/schema").text
    assert "http://" not in page.split("<body")[0] and "https://" not in page.split("<body")[0]
    linked = re.findall(r"""(?:src|href)=["'](/schema/assets/[^"']+)""", page)
    assert len(linked) == 4, linked
    types = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
    for path in linked:
        asset = http.get(path)
        assert asset.status_code == 200 and len(asset.content) > 1000, path
        assert asset.headers["content-type"] == types.get(path[path.rfind(".") :], "image/png")
    assert_error(http.get("/schema/assets/..%2Fcore.py"), 404, "not_found")
    assert_error(http.get("/schema/assets/index.html"), 404, "not_found")


@pytest.mark.parametrize("path", ["/schema/redoc", "/schema/openapi.yml", "/schema/a/b"])
def test_an_unknown_document_is_a_404_in_the_envelope(http: httpx.Client, path: str) -> None:
    error = assert_error(http.get(path), 404, "not_found")
    assert "/schema/openapi.json" in error["message"]


def test_the_reasoning_fields_are_documented_on_their_bodies(document: dict) -> None:
    """They are validated apart from the body's model (off the hot path), and documented
    as its fields, with their values."""
    schemas = document["components"]["schemas"]
    chat = schemas["ChatCompletionRequest"]["properties"]
    assert {"reasoning", "include_reasoning", "reasoning_effort"} <= chat.keys()
    efforts = chat["reasoning_effort"]["anyOf"][0]["enum"]
    assert efforts == ["none", "minimal", "low", "medium", "high", "xhigh", "max"]
    assert "exclude" in chat["reasoning"]["anyOf"][0]["properties"]
    responses = schemas["ResponsesRequest"]["properties"]
    assert "summary" in responses["reasoning"]["anyOf"][0]["properties"]
    assert "include" in responses


def test_the_sampling_fields_are_documented_with_their_bounds(document: dict) -> None:
    chat = document["components"]["schemas"]["ChatCompletionRequest"]["properties"]
    penalty = chat["frequency_penalty"]["anyOf"][0]
    assert (penalty["minimum"], penalty["maximum"]) == (-2, 2)
    assert {"presence_penalty", "repetition_penalty", "top_k", "min_p", "top_a"} <= chat.keys()
    assert chat["logit_bias"]["anyOf"][0]["type"] == "object"


def test_the_document_is_the_same_in_every_process() -> None:
    """litestar keeps a handler's paths in a set: without sorting, the document followed
    the process's hash seed."""
    import os
    import subprocess
    import sys

    documents = {
        subprocess.run(
            [sys.executable, "-m", "emulator", "openapi"],
            env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }  # fmt: skip
    assert len(documents) == 1


CHAT = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
VIDEO = {"model": "emulator/video", "task_type": "text2video", "prompt": "a cat"}


def test_every_error_the_inference_and_video_routes_give_is_documented(
    emulator, document: dict
) -> None:
    """Each refusal, given live, is an answer its operation documents."""
    broke = emulator.create_tenant(balance_micros=0, rate_limit_rpm=1)
    rich = emulator.create_tenant()
    tools = {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}
    cases = [
        (broke, "/chat/completions", CHAT, {}, 402),
        (broke, "/chat/completions", CHAT, {}, 429),  # its second request in the minute
        (rich, "/chat/completions", {**CHAT, "model": "openai/gpt-5o"}, {}, 404),
        (rich, "/chat/completions", {**CHAT, "model": "deepseek/deepseek-r1", **tools}, {}, 503),
        (rich, "/chat/completions", CHAT, {"Content-Encoding": "gzip"}, 415),
        (rich, "/responses", {"model": "openai/gpt-5o", "input": "hi"}, {}, 404),
        (rich, "/messages", {**CHAT, "model": "openai/gpt-5o", "max_tokens": 5}, {}, 404),
        (rich, "/generate/video", {**VIDEO, "duration": "7s"}, {}, 422),
        (broke, "/generate/video", VIDEO, {}, 402),  # not a gateway call: not counted
        (rich, "/generate/video", {**VIDEO, "model": "emulator/nope"}, {}, 404),
        (
            rich,
            "/vidprov/lipsync",
            {"video_id": "vgen_nope", "text": "hi", "voice_id": "v1"},
            {},
            404,
        ),
        (rich, "/ai-gateway/quote", {"model": "openai/gpt-5o", "input": "hi"}, {}, 404),
    ]
    for tenant, path, body, headers, status in cases:
        with tenant.client() as http:
            answer = http.post(path, json=body, headers=headers)
        assert answer.status_code == status, (path, answer.text)
        assert str(status) in document["paths"]["/api/v1" + path]["post"]["responses"], path
    with broke.client() as http:
        too_big = http.post("/generate/video", content=b"x" * 10_000_001)
    assert too_big.status_code == 413
    assert "413" in document["paths"]["/api/v1/generate/video"]["post"]["responses"]


def test_every_route_a_gateway_key_reaches_documents_its_rate_limit(
    emulator, document: dict
) -> None:
    """Reads count against the rate limit as inference does (a balance read, live)."""
    limited = emulator.create_tenant(rate_limit_rpm=1)
    with limited.client() as http:
        assert http.get("/ai-gateway/balance").status_code == 200
        assert_error(http.get("/ai-gateway/balance"), 429, "rate_limit_exceeded")
    for path in ("/ai-gateway/balance", "/ai-gateway/usage", "/credits", "/generation"):
        assert "429" in document["paths"]["/api/v1" + path]["get"]["responses"], path
    for path, method in [("/responses/{response_id}", "delete"), ("/ai-gateway/quote", "post")]:
        assert "429" in document["paths"]["/api/v1" + path][method]["responses"], path
    # Video routes and the control plane count nothing.
    assert "429" not in document["paths"]["/api/v1/generate/video"]["post"]["responses"]
    assert "429" not in document["paths"]["/_emulator/health"]["get"]["responses"]


def test_the_control_planes_conflicts_are_documented(document: dict) -> None:
    assert "409" in document["paths"]["/_emulator/reset"]["post"]["responses"]
    for outcome in ("complete", "fail"):
        path = f"/_emulator/jobs/{{job_id}}/{outcome}"
        assert "409" in document["paths"][path]["post"]["responses"], outcome


@pytest.mark.parametrize(
    "path", ["/api/v1/chat/completions", "/api/v1/responses", "/api/v1/messages"]
)
def test_streamed_answers_are_documented_as_event_streams(document: dict, path: str) -> None:
    content = document["paths"][path]["post"]["responses"]["200"]["content"]
    assert set(content) == {"application/json", "text/event-stream"}
    for status in ("402", "409", "429", "503"):
        assert status in document["paths"][path]["post"]["responses"], status


def test_every_body_may_be_too_large_or_compressed(document: dict) -> None:
    for item in document["paths"].values():
        for operation in item.values():
            if "requestBody" in operation:
                assert {"413", "415"} <= set(operation["responses"]), operation["summary"]
