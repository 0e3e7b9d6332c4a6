"""The request journal through HTTP and the plugin's helper."""

from __future__ import annotations

import httpx
import pytest

from emulator.journal.book import BODY_CAP, Entry, Filters, Journal
from emulator.journal.capture import capped_reply
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, bearer

CHAT = {"model": "emulator/echo", "messages": [{"role": "user", "content": "hello"}]}


def test_each_request_is_journaled_with_who_what_and_how_it_went(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client(headers={"Idempotency-Key": "k-1"}) as client:
        first = client.post("/chat/completions", json=CHAT)
        client.post("/chat/completions", json=CHAT)  # replayed
    with tenant.client() as client:
        client.post("/chat/completions", json={**CHAT, "model": "nope/nope"})
    entries = emulator.journal.list(account_id=tenant.account_id)
    assert [e["status"] for e in entries] == [404, 200, 200]
    missing, replay, original = entries
    assert missing["error_code"] == "model_not_found" and missing["model"] == "nope/nope"
    assert replay["replayed"] and not original["replayed"]
    assert original["id"] == first.headers["x-request-id"]
    assert original["idempotency_key"] == "k-1" and original["provider"]
    assert original["key_id"] == tenant.api_key_id and original["duration_ms"] > 0


def test_details_carry_the_bodies_with_secrets_redacted(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with httpx.Client(base_url=tenant.base_url) as client:
        created = client.post(
            "/keys",
            json={"name": "ci", "scopes": ["ai.gateway"]},
            headers={"Authorization": f"Bearer {tenant.user_token}"},
        )
    secret = created.json()["key"]
    entry = emulator.journal.last(path="/api/v1/keys", account_id=tenant.account_id)
    assert entry is not None and entry["request"]["body"] == {
        "name": "ci",
        "scopes": ["ai.gateway"],
    }
    text = str(entry)
    assert secret not in text and tenant.user_token not in text
    assert "sk-emu-...[redacted]" in text
    assert "authorization" not in entry["request"]["headers"]


def test_a_body_the_routes_refuse_is_kept_as_text(emulator: EmulatorHandle, tenant: Tenant) -> None:
    """A lone surrogate is JSON to Python's own parser but not to the routes', nor
    encodable again: the journal keeps such a body as the text it was."""
    body = b'{"model": "\\ud800", "messages": []}'
    with tenant.client(headers={"Content-Type": "application/json"}) as client:
        assert_error(client.post("/chat/completions", content=body), 400, "invalid_json")
    entry = emulator.journal.last(account_id=tenant.account_id)
    assert entry is not None and entry["status"] == 400
    assert emulator.journal.get(entry["id"])["request"]["body"] == body.decode()


def test_filters_limit_and_clear(
    emulator: EmulatorHandle, tenant: Tenant, http: httpx.Client
) -> None:
    with tenant.client() as client:
        for _ in range(3):
            client.get("/ai-gateway/balance")
        client.post("/chat/completions", json=CHAT)
    mine = {"account_id": tenant.account_id}
    assert len(emulator.journal.list(**mine, path="/api/v1/ai-gateway/*")) == 3
    assert len(emulator.journal.list(**mine, method="POST")) == 1
    assert len(emulator.journal.list(**mine, limit=2)) == 2
    assert emulator.journal.list(**mine, status=500) == []
    now = emulator.clock()["now"]
    assert len(emulator.journal.list(**mine, since=now)) == 4
    assert_error(http.get("/_emulator/requests/req_nope"), 404, "not_found")
    assert_error(http.get("/_emulator/requests", params={"limit": 0}), 422, "invalid_request")
    emulator.journal.clear()
    assert emulator.journal.list(**mine) == []


def test_the_journal_is_bounded() -> None:
    journal = Journal(size=10)
    for n in range(1000):
        entry = Entry(str(n), "t", "GET", "/api/v1/x", "", [], status=200)
        journal.record(entry)
    found = journal.query(Filters(), limit=1000)
    assert [e.id for e in found] == [str(n) for n in range(999, 989, -1)]


def test_until_filters_by_virtual_time(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as client:
        client.get("/ai-gateway/balance")
        before = emulator.clock()["now"]
        emulator.advance(60)
        client.get("/ai-gateway/balance")
    mine = {"account_id": tenant.account_id}
    assert len(emulator.journal.list(**mine, until=before)) == 1
    assert len(emulator.journal.list(**mine)) == 2


def test_journal_size_zero_keeps_nothing() -> None:
    from emulator.server import BackgroundServer
    from emulator.settings import Settings

    server = BackgroundServer(Settings(db=":memory:", journal_size=0, log_level="warning")).start()
    try:
        headers = {"Authorization": "Bearer sk-emu-demo-all"}
        assert httpx.get(f"{server.url}/api/v1/ai-gateway/balance", headers=headers).is_success
        assert httpx.get(f"{server.url}/_emulator/requests").json()["data"] == []
    finally:
        server.stop()


STREAMS = {
    "/chat/completions": {"messages": [{"role": "user", "content": "hello"}]},
    "/responses": {"input": "hello"},
    "/messages": {"max_tokens": 50, "messages": [{"role": "user", "content": "hello"}]},
}


@pytest.mark.parametrize("path", list(STREAMS))
def test_a_stream_s_entry_names_its_provider(
    emulator: EmulatorHandle, tenant: Tenant, path: str
) -> None:
    """Anthropic's events name no provider: the gateway tells the journal."""
    with tenant.client() as client:
        body = {"model": "openai/gpt-4o", "stream": True, **STREAMS[path]}
        assert client.post(path, json=body).status_code == 200
    entry = emulator.journal.list(account_id=tenant.account_id, limit=1)[0]
    assert entry["stream"] and entry["provider"] == "openai"
    assert entry["error_code"] is None


def test_a_slow_stream_opening_with_a_comment_is_read_as_a_stream(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        body = {
            "model": "emulator/slow",
            "stream": True,
            "max_tokens": 1,
            **STREAMS["/chat/completions"],
        }
        sent = client.post("/chat/completions", json=body)
    assert sent.text.startswith(": EMULATOR PROCESSING")
    entry = emulator.journal.list(account_id=tenant.account_id, limit=1)[0]
    assert entry["stream"] and entry["provider"] == "emulator-slow"
    assert entry["model"] == "emulator/slow" and entry["error_code"] is None


@pytest.mark.parametrize(
    ("path", "code"),
    [("/chat/completions", "stream_cut"), ("/responses", "stream_cut"), ("/messages", "api_error")],
)
def test_a_stream_cut_by_an_error_keeps_its_code(
    emulator: EmulatorHandle, tenant: Tenant, path: str, code: str
) -> None:
    with tenant.client(headers={"X-Emulator-Fault": "cut=2"}) as client:
        client.post(path, json={"model": "openai/gpt-4o", "stream": True, **STREAMS[path]})
    entry = emulator.journal.list(account_id=tenant.account_id, limit=1)[0]
    assert (entry["status"], entry["error_code"], entry["provider"]) == (200, code, "openai")


def test_a_request_refused_for_its_key_names_the_key(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """A key known but refused (no scope for the route, disabled) is the key of the entry:
    `?key_id=` finds the refusals a test caused."""
    headers = {"Authorization": f"Bearer {tenant.user_token}"}
    made = httpx.post(
        f"{tenant.base_url}/keys",
        json={"name": "gateway only", "scopes": ["ai.gateway"]},
        headers=headers,
    ).json()
    key_id, secret = made["id"], made["key"]
    video = {"model": "emulator/video", "task_type": "text2video", "prompt": "x"}
    sent = {"Authorization": f"Bearer {secret}"}
    scope = httpx.post(f"{tenant.base_url}/generate/video", json=video, headers=sent)
    assert_error(scope, 403, "insufficient_scope")
    httpx.patch(f"{tenant.base_url}/keys/{key_id}", json={"status": "disabled"}, headers=headers)
    disabled = httpx.post(f"{tenant.base_url}/chat/completions", json=CHAT, headers=sent)
    assert_error(disabled, 401, "key_disabled")
    entries = emulator.journal.list(key_id=key_id)
    assert [(e["status"], e["account_id"]) for e in entries] == [
        (401, tenant.account_id),
        (403, tenant.account_id),
    ]
    unknown = httpx.get(f"{tenant.base_url}/ai-gateway/balance", headers=bearer("sk-emu-nope"))
    assert_error(unknown, 401, "invalid_api_key")
    entry = emulator.journal.list(limit=1)[0]
    assert entry["id"] == unknown.headers["x-request-id"] and entry["key_id"] is None


def test_a_cached_reply_over_the_cap_is_kept_cut_each_time(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """The model list (a direct route's cached bytes) is over the cap: each entry keeps
    its first BODY_CAP bytes, says it was cut, and the next request's entry alike."""
    with httpx.Client(base_url=tenant.base_url) as client:
        bodies = [client.get("/models").content for _ in range(2)]
    assert len(bodies[0]) > BODY_CAP and bodies[0] == bodies[1]
    entries = emulator.journal.list(path="/api/v1/models", limit=2)
    for entry in entries:
        response = emulator.journal.get(entry["id"])["response"]
        assert response["truncated"] is True
        assert response["body"] == bodies[0][:BODY_CAP].decode()


def test_replies_over_the_cap_are_each_cut_from_their_own_bytes() -> None:
    first, second = b"a" * (BODY_CAP + 10), b"b" * (BODY_CAP + 10)
    assert [capped_reply(body) for body in (first, second, first)] == [
        first[:BODY_CAP],
        second[:BODY_CAP],
        first[:BODY_CAP],
    ]
    short = b"short"
    assert capped_reply(short) is short


def test_a_filter_the_journal_does_not_take_is_refused(emulator: EmulatorHandle) -> None:
    """A misspelt filter (`acount_id`) listed every request: a test asserting that none
    was made passed. The control plane refuses query names it does not take."""
    with httpx.Client(base_url=emulator.url) as http:
        refused = http.get("/_emulator/requests", params={"acount_id": "acct_x"})
        error = assert_error(refused, 422, "invalid_request")
        assert error["param"] == "acount_id" and "`account_id`" in error["message"]
        assert http.get("/_emulator/faults", params={"limit": 5}).status_code == 200
        assert_error(http.get("/_emulator/health", params={"x": "1"}), 422, "invalid_request")
        assert http.get("/api/v1/models", params={"unknown": "1"}).status_code == 200
