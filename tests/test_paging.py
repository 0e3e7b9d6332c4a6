"""A `cursor` the emulator could not have given out is a 422 on every list, never a 500
nor a page of data."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, bearer

# Lists paged by row sequence: (path under /api/v1, which credential, the list's name
# in its cursors)
SEQ_LISTS = [
    ("/ai-gateway/usage", "api_key", "usage"),
    ("/ai-gateway/reservations", "api_key", "reservations"),
    ("/keys", "user_token", "keys"),
    ("/generation", "api_key", "generation"),
    ("/vidprov/tasks", "api_key", "provider_task"),
]


def cursor_of(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def cursor(*parts: object) -> str:
    return cursor_of(json.dumps(parts).encode())


# Made for the list named by the argument: none of them is one it gave out.
NOT_OURS = [
    lambda tag: cursor(tag, "9223372036854775808"),  # one past SQLite's INTEGER
    lambda tag: cursor(tag, "9" * 5000),  # more digits than int() takes
    lambda tag: cursor(tag, "x"),
    lambda tag: cursor(tag, "-1"),
    lambda tag: cursor(tag, "1.5"),
    lambda tag: cursor(tag, "007"),
    lambda tag: cursor(tag, "²"),  # str.isdigit() says yes, int() says no
    lambda tag: cursor(tag, 5),
    lambda tag: cursor("1"),  # no list named
    lambda tag: cursor("snapshots", "1"),  # another list's
    lambda tag: cursor(tag, "1", "2"),
    lambda tag: cursor_of(b"[" * 5000 + b"]" * 5000),
    lambda tag: "garbage",
]


def get(tenant: Tenant, path: str, credential: str, cursor: str) -> httpx.Response:
    headers = bearer(getattr(tenant, credential))
    return httpx.get(tenant.base_url + path, params={"cursor": cursor}, headers=headers)


@pytest.mark.parametrize("bad", NOT_OURS)
@pytest.mark.parametrize(("path", "credential", "tag"), SEQ_LISTS)
def test_a_cursor_not_given_out_is_422(
    tenant: Tenant, path: str, credential: str, tag: str, bad: Callable[[str], str]
) -> None:
    error = assert_error(get(tenant, path, credential, bad(tag)), 422, "invalid_request")
    assert error["param"] == "cursor" and "next_cursor" in error["message"]


@pytest.mark.parametrize("seq", ["0", "9223372036854775807"])
@pytest.mark.parametrize(("path", "credential", "tag"), SEQ_LISTS)
def test_a_cursor_in_range_is_a_page(
    tenant: Tenant, path: str, credential: str, tag: str, seq: str
) -> None:
    response = get(tenant, path, credential, cursor(tag, seq))
    assert response.status_code == 200, response.text
    assert response.json()["object"] == "list"


def test_a_models_cursor_nested_too_deep_is_422(tenant: Tenant) -> None:
    response = get(tenant, "/models", "api_key", cursor_of(b"[" * 5000 + b"]" * 5000))
    assert assert_error(response, 422, "invalid_request")["param"] == "cursor"


@pytest.mark.parametrize(
    ("limit", "says"),
    [
        ("x", "Expected an integer."),
        ("1.5", "Expected an integer."),
        ("2.0", "Expected an integer."),  # an integer in a number's notation
        ("1e1", "Expected an integer."),
        ("0", "an integer >= 1"),
    ],
)
@pytest.mark.parametrize(
    ("path", "credential"), [(p, c) for p, c, _ in SEQ_LISTS] + [("/models", "api_key")]
)
def test_a_limit_not_a_whole_number_in_range_is_422_in_plain_words(
    tenant: Tenant, path: str, credential: str, limit: str, says: str
) -> None:
    headers = bearer(getattr(tenant, credential))
    answer = httpx.get(tenant.base_url + path, params={"limit": limit}, headers=headers)
    error = assert_error(answer, 422, "invalid_request")
    assert error["param"] == "limit" and says in error["message"], error
    assert "`int" not in error["message"] and "null" not in error["message"]


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/_emulator/requests", "status=200.0"),
        ("/_emulator/requests", "method=GET&limit=1e0"),  # not only the first parameter
        ("/_emulator/accounts", "limit=5.0"),
        ("/_emulator/faults", "limit=5.0"),
        ("/_emulator/snapshots", "limit=5.0"),
        ("/_emulator/providers", "limit=5.0"),
        ("/_emulator/accounts/{account}/ledger", "limit=5.0"),
        ("/api/v1/responses/{response}", "stream=true&starting_after=1.0"),
    ],
)
def test_every_integer_parameter_takes_an_integer_as_written(
    emulator: EmulatorHandle, tenant: Tenant, path: str, query: str
) -> None:
    """litestar's conversion would take `5.0` as 5; the real API refuses it."""
    with tenant.client() as http:
        ask = {"model": "emulator/echo", "input": "hi", "background": True, "stream": True}
        made = http.post("/responses", json=ask).text  # its events may be streamed again
    made_id = json.loads(made.split("data: ", 1)[1].split("\n", 1)[0])["response"]["id"]
    url = emulator.url + path.format(account=tenant.account_id, response=made_id)
    headers = bearer(tenant.api_key)
    words = httpx.get(f"{url}?{query.replace('.0', 'x').replace('1e0', 'x')}", headers=headers)
    assert words.status_code in (400, 422)  # the OpenAI routes answer 400
    error = assert_error(
        httpx.get(f"{url}?{query}", headers=headers), words.status_code, "invalid_request"
    )
    assert error == words.json()["error"] and error["message"].endswith("Expected an integer.")
    fixed = query.replace(".0", "").replace("1e0", "1")
    assert httpx.get(f"{url}?{fixed}", headers=headers).status_code == 200


@pytest.mark.parametrize(
    ("path", "query", "param"),
    [
        ("/models", {"after_id": "nope/nope"}, "after_id"),
        ("/models", {"cursor": cursor("nope/nope"), "limit": 2}, "cursor"),
        ("/models/user", {"cursor": cursor("1")}, "cursor"),
        ("/providers", {"cursor": cursor("no-such-provider")}, "cursor"),
    ],
)
def test_a_cursor_naming_an_item_not_listed_is_422_naming_it(
    tenant: Tenant, path: str, query: dict[str, object], param: str
) -> None:
    answer = httpx.get(tenant.base_url + path, params=query, headers=bearer(tenant.api_key))
    error = assert_error(answer, 422, "invalid_request")
    assert error["param"] == param and "does not hold" in error["message"]


def test_the_control_planes_providers_page(tenant: Tenant) -> None:
    control = tenant.base_url.removesuffix("/api/v1") + "/_emulator/providers"
    everyone = [p["name"] for p in httpx.get(control).json()["data"]]
    walked, after = [], None
    while True:
        listed = httpx.get(control, params={"limit": 5, **({"cursor": after} if after else {})})
        walked += [p["name"] for p in listed.json()["data"]]
        after = listed.json()["next_cursor"]
        if not listed.json()["has_more"]:
            break
    assert walked == everyone and len(everyone) > 5
    for bad in ({"limit": "abc"}, {"limit": 0}, {"cursor": "zzz"}):
        assert_error(httpx.get(control, params=bad), 422, "invalid_request")


def test_a_cursor_of_one_list_is_refused_by_another(tenant: Tenant) -> None:
    with tenant.client() as http:
        for _ in range(2):
            http.post(
                "/chat/completions",
                json={"model": "emulator/echo", "messages": [{"role": "user", "content": "x"}]},
            )
        usage = http.get("/ai-gateway/usage", params={"limit": 1}).json()["next_cursor"]
    assert usage is not None
    keys = get(tenant, "/keys", "user_token", usage)
    assert assert_error(keys, 422, "invalid_request")["param"] == "cursor"


@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_a_list_with_a_repeated_name_is_never_paged_round_in_circles(size: int) -> None:
    """A cursor names its last item; one naming an item listed twice cannot say which,
    and once restarted the walk after the first, for ever: now it is refused."""
    from emulator.errors import InternalError
    from emulator.paging import page_in_order

    names = ["a", "b", "a", "c"]
    walked: list[str] = []
    cursor = None
    for _ in range(len(names) + 1):  # each page moves on, or the walk is refused
        try:
            listed = page_in_order(names, size, cursor, str, str, default=len(names), maximum=10)
        except InternalError as exc:
            assert "holds 'a' twice" in str(exc)
            break
        walked += listed["data"]
        cursor = listed["next_cursor"]
        if cursor is None:
            break
    else:
        pytest.fail("the walk did not end")
    assert walked == names[: len(walked)]
