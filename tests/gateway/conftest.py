"""The official `openai` client on a fresh tenant, closed after each test (an unclosed
client leaves its pooled sockets to the garbage collector, a ResourceWarning)."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from emulator.testing import EmulatorHandle, Tenant


@pytest.fixture
def client(emulator: EmulatorHandle, tenant: Tenant) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=emulator.base_url, api_key=tenant.api_key, max_retries=0) as c:
        yield c
