"""Shared fixtures. The live server and tenants come from the package's own plugin
(`emulator`, `emulator_tenant`); these add the demo world, plain HTTP clients and the
official `openai` client. Each client is closed after the test: an unclosed one leaves
its pooled sockets to the garbage collector, a ResourceWarning."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from hypothesis import settings

from emulator.server import BackgroundServer
from emulator.settings import Settings
from emulator.testing import EmulatorHandle, Tenant

pytest_plugins = ["tests.leaks"]  # fails a test that leaves a client unclosed

# Property tests draw the same examples on every run, so a suite never fails on a
# draw it did not make before. `pytest --hypothesis-profile=explore` draws new ones.
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("fixed")


@pytest.fixture
def tenant(emulator_tenant: Tenant) -> Tenant:
    return emulator_tenant


@pytest.fixture
def demo(emulator: EmulatorHandle) -> EmulatorHandle:
    """The demo world of the fixtures, fresh: reset before the test."""
    emulator.reset()
    return emulator


@pytest.fixture
def http(emulator: EmulatorHandle) -> Iterator[httpx.Client]:
    """A plain client on the server root, with no credentials."""
    with httpx.Client(base_url=emulator.url) as client:
        yield client


@pytest.fixture
def client(emulator: EmulatorHandle, tenant: Tenant) -> Iterator[openai.OpenAI]:
    """The official `openai` client on a fresh tenant, without retries."""
    with openai.OpenAI(base_url=emulator.base_url, api_key=tenant.api_key, max_retries=0) as c:
        yield c


@pytest.fixture(scope="session")
def openapi_document(emulator: EmulatorHandle) -> dict[str, Any]:
    """The OpenAPI document the server gives (the same in every process)."""
    document: dict[str, Any] = httpx.get(f"{emulator.url}/schema/openapi.json").json()
    return document


@pytest.fixture(scope="session")
def slow_streams() -> Iterator[str]:
    """The URL of a server of its own whose streams take a while: 40 ms between chunks."""
    settings = Settings(db=":memory:", log_level="warning", stream_delay_ms=40)
    server = BackgroundServer(settings).start()
    yield server.url
    server.stop()
