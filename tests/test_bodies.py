"""A JSON body that cannot be decoded is a 400 `invalid_json` on every route, whether the
route parses it itself (`emulator.bodies`) or litestar does: never a 500."""

from __future__ import annotations

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, bearer

# An unknown field (chat takes any) carries the value: `metadata` must hold strings.
CHAT = b'{"model":"emulator/echo","messages":[{"role":"user","content":"%s"}],"x_note":%s}'
RESPONSES = b'{"model":"emulator/echo","input":"%s","metadata":{"a":%s}}'
# (path under the server root, which credential, the body around a string and a value)
ROUTES = [
    ("/api/v1/chat/completions", "api_key", CHAT),
    ("/api/v1/responses", "api_key", RESPONSES),
    ("/api/v1/responses/input_tokens", "api_key", RESPONSES),
    ("/api/v1/ai-gateway/quote", "api_key", CHAT),
    ("/api/v1/keys", "user_token", b'{"name":"%s","metadata":%s}'),
    ("/_emulator/accounts/{account}/topup", None, b'{"amount_usd":"%s","note":%s}'),
]


def post(emulator: EmulatorHandle, tenant: Tenant, route: tuple, body: bytes) -> httpx.Response:
    path, credential, _ = route
    headers = {"Content-Type": "application/json"}
    if credential is not None:
        headers |= bearer(getattr(tenant, credential))
    url = emulator.url + path.format(account=tenant.account_id)
    return httpx.post(url, content=body, headers=headers)


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize("route", ROUTES, ids=[r[0] for r in ROUTES])
def test_a_string_that_is_not_utf8_is_400_invalid_json(
    emulator: EmulatorHandle, tenant: Tenant, route: tuple
) -> None:
    response = post(emulator, tenant, route, route[2] % (b"\xff", b"1"))
    error = assert_error(response, 400, "invalid_json", "invalid_request_error")
    assert "UTF-8" in error["message"]


@pytest.mark.parametrize(
    ("string", "value", "why"),
    [
        (b"hi", b"1e400", "Number out of range"),
        (b"hi", b"9" * 5000, "Integer value out of range"),
        (b"hi", b'"\\ud800"', ""),  # a lone surrogate near the end: "Input data was truncated"
    ],
    ids=["float", "integer", "surrogate"],
)
@pytest.mark.parametrize("route", ROUTES, ids=[r[0] for r in ROUTES])
def test_what_the_decoder_refuses_is_400_invalid_json_on_every_route(
    emulator: EmulatorHandle, tenant: Tenant, route: tuple, string: bytes, value: bytes, why: str
) -> None:
    # litestar's routes said these in msgspec's words, as 400 invalid_request.
    response = post(emulator, tenant, route, route[2] % (string, value))
    error = assert_error(response, 400, "invalid_json", "invalid_request_error")
    assert error["message"].startswith(f"The request body is not valid JSON ({why}")
    assert "`$" not in error["message"]


@pytest.mark.parametrize("depth", [1000, 100_000])
@pytest.mark.parametrize("route", ROUTES, ids=[r[0] for r in ROUTES])
def test_nesting_too_deep_is_400_invalid_json(
    emulator: EmulatorHandle, tenant: Tenant, route: tuple, depth: int
) -> None:
    response = post(emulator, tenant, route, route[2] % (b"hi", nested(depth)))
    error = assert_error(response, 400, "invalid_json", "invalid_request_error")
    assert "nested too deeply" in error["message"]


def test_nesting_500_deep_is_still_decoded(emulator: EmulatorHandle, tenant: Tenant) -> None:
    response = post(emulator, tenant, ROUTES[0], CHAT % (b"hi", nested(500)))
    assert response.status_code == 200, response.text
    # litestar's routes decode it too, then refuse the field as they would any list
    response = post(emulator, tenant, ROUTES[4], b'{"name":%s}' % nested(500))
    assert assert_error(response, 422, "invalid_request")["param"] == "name"


def test_the_journal_shows_a_body_too_deep_to_decode(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    post(emulator, tenant, ROUTES[0], CHAT % (b"hi", nested(100_000)))
    response = httpx.get(f"{emulator.url}/_emulator/requests", params={"limit": 1})
    assert response.status_code == 200, response.text
    assert response.json()["data"][0]["status"] == 400


def test_a_fault_rule_on_the_model_leaves_a_bad_body_to_the_route(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    # The rule reads the body's model first; a body it cannot decode matches no model.
    with emulator.faults.add(account_id=tenant.account_id, model="emulator/echo", status=503):
        for body in (CHAT % (b"\xff", b"1"), CHAT % (b"hi", nested(100_000))):
            assert_error(post(emulator, tenant, ROUTES[0], body), 400, "invalid_json")


@pytest.mark.parametrize("route", ROUTES[1:3], ids=[r[0] for r in ROUTES[1:3]])
def test_responses_metadata_must_be_an_object(
    emulator: EmulatorHandle, tenant: Tenant, route: tuple
) -> None:
    response = post(
        emulator, tenant, route, b'{"model":"emulator/echo","input":"hi","metadata":[1]}'
    )
    assert assert_error(response, 400, "invalid_request")["param"] == "metadata"


@pytest.mark.parametrize("route", ROUTES, ids=[r[0] for r in ROUTES])
def test_a_lone_surrogate_is_named_not_taken_for_a_truncated_body(
    emulator: EmulatorHandle, tenant: Tenant, route: tuple
) -> None:
    """JavaScript's `slice` can cut an emoji in two: the decoder says "truncated"."""
    response = post(emulator, tenant, route, route[2] % (b"hi \\ud83d", b"1"))
    error = assert_error(response, 400, "invalid_json", "invalid_request_error")
    assert "\\ud83d is half of a surrogate pair" in error["message"]
    whole = post(emulator, tenant, route, route[2] % (b"hi \\ud83d\\ude00", b"1"))
    assert whole.status_code != 400 or "not valid JSON" not in whole.text


@pytest.mark.parametrize(
    ("body", "status"), [(b"", 201), (b"{}", 201), (b"null", 201), (b"[1]", 400)]
)
def test_an_optional_control_body_may_be_absent_empty_or_null(
    emulator: EmulatorHandle, body: bytes, status: int
) -> None:
    """A client that serialises an absent options object sends `null`: the defaults."""
    made = httpx.post(
        emulator.url + "/_emulator/accounts",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert made.status_code == status, made.text
    if status == 201:
        assert made.json()["balance_micros"] == 25_000_000
    else:
        assert "must be a JSON object" in assert_error(made, 400, "invalid_request")["message"]
