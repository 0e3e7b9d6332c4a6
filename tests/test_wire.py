"""The outermost layer, through HTTP: HEAD is GET without the body on every GET route
(RFC 9110 9.3.2), as readiness probes (`wait-on`, `curl -I`) and link checkers expect."""

from __future__ import annotations

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import bearer

SAME = ("content-type", "content-length", "x-emulator-version")


def probe(client: httpx.Client, path: str) -> tuple[httpx.Response, httpx.Response]:
    return client.get(path), client.head(path)


@pytest.mark.parametrize("path", ["/api/v1/models", "/api/v1/models/openai/gpt-4o"])
def test_head_answers_as_get_without_the_body(http: httpx.Client, path: str) -> None:
    http.headers.update(bearer("sk-emu-demo-all"))
    got, probed = probe(http, path)
    assert probed.status_code == got.status_code == 200
    assert probed.content == b""
    assert [probed.headers.get(k) for k in SAME] == [got.headers.get(k) for k in SAME]
    assert probed.headers["x-request-id"] != got.headers["x-request-id"]


def test_a_readiness_probe_by_head_succeeds(http: httpx.Client) -> None:
    probed = http.head("/_emulator/health")
    assert probed.status_code == 200 and probed.content == b""
    assert int(probed.headers["content-length"]) > 0
    response = http.head("/api/v1/nope")
    assert response.status_code == 404 and response.content == b""


def test_head_on_an_api_route_is_authenticated_and_rate_limited_as_get(tenant: Tenant) -> None:
    with httpx.Client(base_url=tenant.base_url, headers=bearer(tenant.api_key)) as client:
        got, probed = probe(client, "/ai-gateway/balance")
        assert probed.status_code == 200 and probed.content == b""
        assert probed.headers["content-length"] == got.headers["content-length"]
        assert "x-ratelimit-limit" in probed.headers
    refused = httpx.head(f"{tenant.base_url}/ai-gateway/balance")
    assert refused.status_code == 401 and refused.content == b""


def test_head_is_not_allowed_where_get_is_not(http: httpx.Client) -> None:
    response = http.head("/api/v1/chat/completions")
    assert response.status_code == 405
    assert response.headers["allow"] == "OPTIONS, POST"


def test_the_journal_records_a_head_as_sent(emulator: EmulatorHandle, http: httpx.Client) -> None:
    sent = http.head("/api/v1/models", headers=bearer("sk-emu-demo-all"))
    entry = http.get(f"/_emulator/requests/{sent.headers['x-request-id']}").json()
    assert (entry["method"], entry["status"]) == ("HEAD", 200)


def test_a_preflight_allows_head(http: httpx.Client) -> None:
    asked = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "HEAD"}
    response = http.options("/api/v1/models", headers=asked)
    assert "HEAD" in response.headers["access-control-allow-methods"]


def test_a_doubled_slash_is_the_path_litestar_routes_in_every_layer(tenant: Tenant) -> None:
    root = tenant.base_url.removesuffix("/api/v1")
    with httpx.Client(base_url=root, headers=bearer(tenant.api_key)) as client:
        body = {"model": "emulator/echo", "messages": [{"role": "user", "content": "x"}]}
        made = client.post(f"{root}//api/v1/chat/completions", json=body)
        assert made.status_code == 200
        entry = client.get(f"/_emulator/requests/{made.headers['x-request-id']}").json()
        assert entry["path"] == "/api/v1/chat/completions"
        probed = client.head("/api/v1//ai-gateway/balance")
        assert probed.status_code == 200 and probed.content == b""
        options = client.options("/_emulator//requests")
        assert options.headers["allow"] == "DELETE, GET, HEAD, OPTIONS"
        assert client.post(f"{root}//api/v1/messages", json={}).headers["request-id"]


def test_a_no_content_answer_has_no_length(http: httpx.Client) -> None:
    asked = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}
    for response in (http.options("/api/v1/keys"), http.options("/api/v1/keys", headers=asked)):
        assert response.status_code == 204 and "content-length" not in response.headers


def test_a_browser_may_read_the_headers_of_a_range(http: httpx.Client) -> None:
    exposed = http.get("/api/v1/models", headers={"Origin": "http://localhost:3000"}).headers
    names = {n.strip().lower() for n in exposed["access-control-expose-headers"].split(",")}
    assert {"content-range", "accept-ranges", "etag", "x-request-id"} <= names
