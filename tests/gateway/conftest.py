"""Anthropic's and OpenRouter's own SDKs on a fresh tenant, closed after each test (an
unclosed client leaves its pooled sockets to the garbage collector, a ResourceWarning).
The `openai` client, `client`, is in tests/conftest.py."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import pytest
from openrouter import OpenRouter

from emulator.testing import EmulatorHandle, Tenant


@pytest.fixture
def claude(emulator: EmulatorHandle, tenant: Tenant) -> Iterator[anthropic.Anthropic]:
    """Anthropic's own SDK on OpenRouter's Anthropic-compatible base URL (`.../api`), with
    the key as a bearer token, as OpenRouter's docs set Claude Code up."""
    base = emulator.base_url.removesuffix("/v1")
    with anthropic.Anthropic(base_url=base, auth_token=tenant.api_key, max_retries=0) as c:
        yield c


@pytest.fixture
def router(emulator: EmulatorHandle, tenant: Tenant) -> Iterator[OpenRouter]:
    """OpenRouter's Python SDK, titled as an app (`X-Title`)."""
    with OpenRouter(
        api_key=tenant.api_key, server_url=emulator.base_url, x_open_router_title="SDK test"
    ) as sdk:
        yield sdk
