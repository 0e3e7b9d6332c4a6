"""How a served call becomes its HTTP answer: the collector rests while a whole answer
is made (a large one would otherwise spend most of its time in it), and is back after,
whether the answer was made or refused."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from emulator.gateway import service
from emulator.testing import Tenant


def test_the_collector_rests_while_an_answer_is_made(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    serve = service.serve

    def watched(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return serve(*args)

    monkeypatch.setattr(service, "serve", watched)
    body = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    with tenant.client() as http:
        answered = http.post("/chat/completions", json=body)
        assert gc.isenabled()
        failed = http.post("/chat/completions", json={**body, "model": "emulator/fail-503"})
        assert gc.isenabled()
    assert answered.status_code == 200, answered.text
    assert failed.status_code == 503, failed.text
    assert seen == [False, False]
