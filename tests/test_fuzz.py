"""A property-based fuzz run of every route against our own OpenAPI document.

Schemathesis generates requests from the document (valid and invalid) and checks
what the issue asks of the whole surface: no server error (other than the
documented 501s of routes not built yet and the gateway's 503s), every answer
in its documented schema and content type, and no auth bypass (a route that
declares security refuses a request without it). Bounded: a few examples per
operation (`EMULATOR_FUZZ_EXAMPLES` raises it), on a server of its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from emulator.server import BackgroundServer
from emulator.settings import Settings

EXAMPLES = int(os.environ.get("EMULATOR_FUZZ_EXAMPLES", "8"))


@pytest.fixture(scope="module")
def fuzzed_schema() -> Iterator[schemathesis.BaseSchema]:
    settings = Settings(db=":memory:", clock="manual", stream_delay_ms=0, log_level="critical")
    server = BackgroundServer(settings).start()
    try:
        yield schemathesis.openapi.from_url(f"{server.url}/schema/openapi.json")
    finally:
        server.stop()


schema = schemathesis.pytest.from_fixture("fuzzed_schema")


def credential_for(path: str) -> str:
    if path.startswith("/_emulator"):
        return ""  # open: the app runs without --admin-token
    return "emu_user_demo" if path.startswith("/api/v1/keys") else "sk-emu-demo-all"


def no_unexpected_server_error(ctx, response, case) -> bool | None:  # type: ignore[no-untyped-def]
    # 501: documented routes of later issues; 503: the gateway's documented upstream failures.
    assert response.status_code < 500 or response.status_code in (501, 503), (
        f"{case.method} {case.path} answered {response.status_code}: {response.text[:300]}"
    )
    if response.status_code >= 400 and case.method != "HEAD":  # a HEAD answer has no body
        assert set(response.json()) == {"error"}, response.text[:300]
    return None


@pytest.mark.slow  # half a minute: CI runs it (`pytest -m slow`); the default run stays quick
@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,  # the same examples on every run: CI never flakes on fuzzing
)
def test_every_route_keeps_its_contract(case: schemathesis.Case) -> None:
    token = credential_for(case.path)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if case.headers:
        headers = {**case.headers, **headers}
    contract = [
        checks.content_type_conformance,
        checks.status_code_conformance,
        checks.response_schema_conformance,
        checks.ignored_auth,
    ]
    if "{" in case.path and case.formatted_path in case.operation.schema.raw_schema["paths"]:
        # A template filled in as another route's own path (`/models/{model_id}` as
        # `/models/user`): OpenAPI matches the concrete path first, so that route answers
        # under its own contract (checked by its own cases); here, only no server error.
        contract = []
    case.call_and_validate(
        headers=headers, checks=contract, additional_checks=[no_unexpected_server_error]
    )
