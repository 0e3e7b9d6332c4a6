"""A route's query parameter sent twice is refused naming it, on litestar's routes and
on the direct ones, on the OpenAI routes (400) and the others (422); a
parameter the route does not read may come any number of times."""

from __future__ import annotations

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, bearer


@pytest.mark.parametrize(
    ("path", "query", "param", "status"),
    [
        ("/api/v1/models", "limit=5&limit=50", "limit", 422),  # a direct route
        ("/api/v1/models", "output_modalities=text&output_modalities=image", None, 422),
        ("/api/v1/responses/resp_1/input_items", "order=asc&order=desc", "order", 400),
        ("/api/v1/ai-gateway/usage", "model=a&status=failed&model=b", "model", 422),
        ("/api/v1/generation", "id=gen-1&id=gen-2", "id", 422),
        ("/_emulator/requests", "status=200&status=500", "status", 422),
        ("/_emulator/accounts/{account}/ledger", "kind=topup&kind=topup", "kind", 422),
    ],
)
def test_a_parameter_sent_twice_is_refused_naming_it(
    emulator: EmulatorHandle,
    tenant: Tenant,
    path: str,
    query: str,
    param: str | None,
    status: int,
) -> None:
    url = emulator.url + path.format(account=tenant.account_id)
    response = httpx.get(f"{url}?{query}", headers=bearer(tenant.api_key))
    error = assert_error(response, status, "invalid_request")
    name = param or query.split("=", 1)[0]
    assert error["param"] == name
    assert error["message"] == (
        f"Invalid query parameter `{name}`: sent more than once; it takes one value."
    )
    once = query.rsplit("&", 1)[0]  # without its last value: each parameter once
    answer = httpx.get(f"{url}?{once}", headers=bearer(tenant.api_key))
    assert answer.status_code in (200, 404) and "more than once" not in answer.text, answer.text


def test_a_parameter_the_route_does_not_read_may_repeat(tenant: Tenant) -> None:
    """As the real API ignores an unknown parameter, it ignores it sent twice."""
    response = httpx.get(
        tenant.base_url + "/models?utm=a&utm=b&limit=2", headers=bearer(tenant.api_key)
    )
    assert response.status_code == 200 and len(response.json()["data"]) == 2
