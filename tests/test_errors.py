"""Every error, ours or the framework's, is the SPEC section 6 envelope: never a 500 page."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import httpx
import openai
import pytest
from litestar.testing import TestClient

from emulator.app import create_app
from emulator.settings import Settings
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, bearer, send_part_and_leave


@pytest.fixture
def keys(tenant: Tenant) -> httpx.Client:
    with httpx.Client(base_url=tenant.base_url, headers=bearer(tenant.user_token)) as c:
        yield c  # type: ignore[misc]


def test_unknown_route_is_404_envelope(http: httpx.Client) -> None:
    for path in ("/nope", "/api/v1/nope", "/api/v2/models", "/_emulator/nope"):
        error = assert_error(http.get(path), 404, "not_found", "not_found_error")
        assert path in error["message"]


def test_a_known_api_not_emulated_says_what_it_is(emulator: EmulatorHandle, tenant: Tenant) -> None:
    """The openai SDK's embeddings call: a 404 that names OpenRouter's embeddings API."""
    with (
        openai.OpenAI(base_url=emulator.base_url, api_key=tenant.api_key, max_retries=0) as client,
        pytest.raises(openai.NotFoundError) as missing,
    ):
        client.embeddings.create(model="openai/text-embedding-3-small", input="hello")
    assert "OpenRouter's embeddings API, which the emulator does not emulate" in str(missing.value)


def test_wrong_method_is_405_envelope(http: httpx.Client) -> None:
    response = http.delete("/api/v1/models")
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "GET, HEAD, OPTIONS"  # sorted: the same in every process


@pytest.mark.parametrize("body", [b"{bad", b"{'single': 1}", b'{"name": "x",}', b"\xff\xfe"])
def test_malformed_json_is_400_invalid_json(keys: httpx.Client, body: bytes) -> None:
    response = keys.post("/keys", content=body, headers={"Content-Type": "application/json"})
    assert_error(response, 400, "invalid_json", "invalid_request_error")


@pytest.mark.parametrize("body", [b"[]", b'"text"', b"42", b"null"])
def test_a_body_that_is_not_an_object_is_400(keys: httpx.Client, body: bytes) -> None:
    response = keys.post("/keys", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code in (400, 422)
    assert_error(response, response.status_code, "invalid_request")


def test_empty_body_is_400(keys: httpx.Client) -> None:
    response = keys.post("/keys", headers={"Content-Type": "application/json"})
    assert "body" in assert_error(response, 400, "invalid_request")["message"]


def test_json_without_content_type_is_still_parsed(keys: httpx.Client) -> None:
    # Like curl -d: clients that forget the header still get a useful answer.
    response = keys.post("/keys", content=b'{"name": "curl"}')
    assert response.status_code == 201, response.text


def test_oversized_body_is_413(keys: httpx.Client) -> None:
    big = b'{"name": "' + b"x" * 11_000_000 + b'"}'
    response = keys.post("/keys", content=big, headers={"Content-Type": "application/json"})
    error = assert_error(response, 413, "payload_too_large")
    # In the words of the direct routes (chat, responses): what the limit is, what to do.
    assert error["message"].startswith("The request body is larger than 10,000,000 bytes.")


@pytest.mark.parametrize("path", ["/keys", "/chat/completions"])
def test_a_compressed_body_is_415_naming_its_encoding(
    keys: httpx.Client, tenant: Tenant, path: str
) -> None:
    body = gzip.compress(b'{"model": "emulator/echo", "messages": []}')
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    if path != "/keys":
        headers["Authorization"] = f"Bearer {tenant.api_key}"
    error = assert_error(
        keys.post(path, content=body, headers=headers), 415, "unsupported_media_type"
    )
    assert error["param"] == "Content-Encoding" and "'gzip' is not supported" in error["message"]
    plain = {"Content-Encoding": "identity", "Content-Type": "application/json"}
    assert keys.post("/keys", json={"name": "plain"}, headers=plain).status_code == 201


def test_a_client_that_leaves_mid_body_is_a_499_not_a_crash(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """A route litestar serves: its "client disconnected prematurely" is no 500."""
    send_part_and_leave(emulator.url, "/api/v1/keys", tenant.user_token, b'{"na')
    journal = f"{emulator.url}/_emulator/requests"
    entry = httpx.get(journal, params={"path": "/api/v1/keys", "limit": 1}).json()["data"][0]
    assert (entry["status"], entry["error_code"]) == (499, "client_closed_request")


def test_every_answer_has_request_id_and_version(http: httpx.Client) -> None:
    ids = set()
    for response in (http.get("/api/v1/models"), http.get("/nope"), http.post("/api/v1/keys")):
        assert response.headers["x-emulator-version"] == "0.1.0"
        ids.add(response.headers["x-request-id"])
    assert len(ids) == 3 and all(i.startswith("req_") for i in ids)


def test_cors_lets_a_browser_app_call_the_api(http: httpx.Client) -> None:
    response = http.options(
        "/api/v1/models",
        headers={"Origin": "http://localhost:3000", "Access-Control-Request-Method": "GET"},
    )
    assert response.status_code in (200, 204)
    assert response.headers["access-control-allow-origin"] in ("*", "http://localhost:3000")


# A RecursionError too: only one from decoding the body is the client's (400 invalid_json).
@pytest.mark.parametrize("error", [RuntimeError, RecursionError])
def test_an_unexpected_exception_is_a_500_envelope_without_a_traceback(
    monkeypatch, error: type[Exception]
) -> None:
    from emulator.control import service

    def boom(rt):
        raise error("kaboom internals")

    monkeypatch.setattr(service, "health", boom)
    with TestClient(create_app(Settings(db=":memory:")), base_url="http://127.0.0.1") as client:
        response = client.get("/_emulator/health")
    error = assert_error(response, 500, "internal_error", "api_error")
    assert "kaboom" not in response.text and "Traceback" not in response.text
    assert "X-Request-Id" in error["message"]


def test_options_lists_every_method_of_the_path(http: httpx.Client) -> None:
    for path, expected in [
        ("/_emulator/clock", "GET, HEAD, OPTIONS, POST"),
        ("/api/v1/keys", "GET, HEAD, OPTIONS, POST"),
        ("/api/v1/keys/key_x", "DELETE, GET, HEAD, OPTIONS, PATCH"),
        ("/api/v1/repurpose", "GET, HEAD, OPTIONS, POST"),
        ("/api/v1/vidprov/voices/presets", "GET, HEAD, OPTIONS"),
        ("/api/v1/vidprov/voices/delete", "OPTIONS, POST"),
        ("/api/v1/vidprov/voices/voice_1", "GET, HEAD, OPTIONS"),
        ("/api/v1/models/openai/gpt-4o", "GET, HEAD, OPTIONS"),
    ]:
        response = http.options(path)
        assert response.status_code == 204, path
        assert response.headers["allow"] == expected, path
    assert_error(http.options("/api/v1/nope"), 404, "not_found")


def test_a_union_counts_as_one_problem_and_other_fields_as_more(tenant: Tenant) -> None:
    """A field that may be a string or a list fails in both branches: one problem, the
    branch that got furthest; problems at other fields are counted."""
    body = {"model": "openai/gpt-4o", "max_tokens": 5, "system": [{"type": "text", "text": " "}]}
    with tenant.client() as http:
        one = http.post("/messages", json={**body, "messages": [{"role": "user", "content": "hi"}]})
        two = http.post("/messages", json={**body, "messages": "hi"})
    error = assert_error(one, 400, "invalid_request")
    assert error["param"] == "system[0]" and "more problem" not in error["message"]
    assert (
        "(1 more problem(s) in this request)"
        in assert_error(two, 400, "invalid_request")["message"]
    )


@pytest.mark.parametrize(
    ("extra", "param", "message"),
    [
        ({"tool_choice": {"type": "function"}}, "tool_choice.function", "Field required."),
        (
            {"tool_choice": "sometimes"},
            "tool_choice",
            "Input should be 'auto', 'none' or 'required', or an object.",
        ),
        (
            {"provider": {"sort": "random"}},
            "provider.sort",
            "Input should be 'price', 'latency', 'throughput' or 'exacto', or an object.",
        ),
        (
            {"messages": [{"role": "user", "content": 5}]},
            "messages[0].content",
            "Input should be a valid string, or a valid list.",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "x"}]}]},
            "messages[0].content[0].image_url",
            "Input should be an object.",
        ),
    ],
)
def test_a_union_s_error_names_the_branch_meant_in_the_client_s_words(
    tenant: Tenant, extra: dict, param: str, message: str
) -> None:
    """Of a union's branches, the one with the fewest problems; a value no branch
    takes, one sentence naming them all; never a pydantic class name."""
    body = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hi"}], **extra}
    with tenant.client() as http:
        error = assert_error(http.post("/chat/completions", json=body), 400, "invalid_request")
    assert error["param"] == param
    assert error["message"] == f"Invalid field `{param}`: {message}"


def test_a_union_s_failing_branches_count_as_one_more_problem(tenant: Tenant) -> None:
    body = {
        "model": "openai/gpt-4o",
        "input": [
            {"type": "function_call_output", "call_id": "c", "output": 5},
            {"role": "user", "content": 7},
        ],
    }
    with tenant.client() as http:
        error = assert_error(http.post("/responses", json=body), 400, "invalid_request")
    assert error["message"].endswith("(1 more problem(s) in this request)")


def test_an_anthropic_server_tool_is_refused_for_what_it_is(tenant: Tenant) -> None:
    body = {
        "model": "anthropic/claude-sonnet-4",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "code_execution_20250825", "name": "code_execution"}],
    }
    with tenant.client() as http:
        error = assert_error(http.post("/messages", json=body), 400, "invalid_request")
    assert error["param"] == "tools[0]"
    assert "server tools such as 'code_execution_20250825' are not emulated" in error["message"]


def test_another_union_s_branches_count_as_one_more_problem(tenant: Tenant) -> None:
    body = {
        "model": "openai/gpt-4o",
        "messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}],
        "tool_choice": {"type": "function"},
    }
    with tenant.client() as http:
        error = assert_error(http.post("/chat/completions", json=body), 400, "invalid_request")
    assert error["param"] == "messages[0].content[0].text"
    assert error["message"].endswith("(1 more problem(s) in this request)")


@pytest.mark.parametrize("key", ["trace-id", "Request-Id", "str"])
def test_a_client_s_key_is_named_as_a_field(tenant: Tenant, key: str) -> None:
    body = {"model": "openai/gpt-4o", "input": "hi", "metadata": {key: 1}}
    with tenant.client() as http:
        error = assert_error(http.post("/responses", json=body), 400, "invalid_request")
    assert error["param"] == (f"metadata.{key}" if key != "str" else "metadata")


@pytest.mark.parametrize(
    ("said", "retry_header"),
    [
        ("database is locked", ("retry-after", "1")),
        ("database or disk is full", ("x-should-retry", "false")),
        ("database disk image is malformed", ("x-should-retry", "false")),
    ],
)
def test_a_state_file_in_trouble_is_a_503_saying_what_to_do(
    monkeypatch: pytest.MonkeyPatch, said: str, retry_header: tuple[str, str]
) -> None:
    """The machine's trouble (a lock another program holds, a full disk, a damaged file)
    is not reported as a bug of ours, on litestar's routes and on the direct ones."""
    from emulator.billing import ledger
    from emulator.gateway import idempotency

    def fails(*args: object, **kwargs: object) -> None:
        error = sqlite3.DatabaseError if "malformed" in said else sqlite3.OperationalError
        raise error(said)

    monkeypatch.setattr(ledger, "balance_of", fails)
    monkeypatch.setattr(idempotency, "claim", fails)
    with TestClient(create_app(Settings(db=":memory:")), base_url="http://127.0.0.1") as client:
        client.headers.update(bearer("sk-emu-demo-all"))
        chat = {"model": "emulator/echo", "messages": [{"role": "user", "content": "hi"}]}
        for answer in (
            client.get("/api/v1/ai-gateway/balance"),
            client.post("/api/v1/chat/completions", json=chat, headers={"Idempotency-Key": "k"}),
        ):
            error = assert_error(answer, 503, "state_unavailable", "api_error")
            assert said in error["message"] and "state file (--db)" in error["message"]
            assert answer.headers[retry_header[0]] == retry_header[1]


def test_a_lock_another_program_holds_is_a_503_before_the_app_too(tmp_path: Path) -> None:
    """A write lock held from outside (`sqlite3 state.db` in a shell, mid-transaction)
    fails the server's own first steps (a request's id, a look at what others wrote)
    as it fails a route: 503 `state_unavailable` in the envelope, never a bare 500."""
    path = str(tmp_path / "state.db")
    app = create_app(Settings(db=path))
    chat = {"model": "emulator/echo", "messages": [{"role": "user", "content": "hi"}]}
    with TestClient(app, base_url="http://127.0.0.1") as client:
        client.headers.update(bearer("sk-emu-demo-all"))
        app.state.runtime.store.conn.execute("PRAGMA busy_timeout = 50")  # not 5 s a try
        outside = sqlite3.connect(path, isolation_level=None)
        outside.execute("BEGIN IMMEDIATE")
        try:
            for _ in range(3):  # the first: a new block of request ids
                answer = client.post("/api/v1/chat/completions", json=chat)
                error = assert_error(answer, 503, "state_unavailable", "api_error")
                assert "another program holds a write lock" in error["message"]
                assert answer.headers["retry-after"] == "1"
        finally:
            outside.execute("ROLLBACK")
            outside.close()
        assert client.post("/api/v1/chat/completions", json=chat).status_code == 200


def test_a_damaged_file_seen_before_the_app_is_a_503(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look at what other programs wrote comes first: a file it finds damaged is
    the machine's trouble, said in the envelope."""
    app = create_app(Settings(db=str(tmp_path / "state.db")))

    def damaged() -> None:
        raise sqlite3.DatabaseError("database disk image is malformed")

    with TestClient(app, base_url="http://127.0.0.1") as client:
        monkeypatch.setattr(app.state.runtime.store, "check_outside", damaged)
        answer = client.get("/api/v1/models")
        error = assert_error(answer, 503, "state_unavailable", "api_error")
        assert "malformed" in error["message"] and answer.headers["x-should-retry"] == "false"
