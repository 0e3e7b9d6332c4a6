"""An Idempotency-Key's record is written in the charge's own transaction: a request is
never charged without its answer kept for the retry."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from emulator.app import create_app
from emulator.settings import Settings
from emulator.store import idempotency as records
from tests.helpers import bearer

CHAT = {"model": "emulator/echo", "messages": [{"role": "user", "content": "once"}]}
KEY = {"Idempotency-Key": "charge-once"}


def test_a_failure_recording_the_answer_undoes_the_charge(monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app(Settings(db=":memory:", clock="manual"))
    finish = records.finish_record

    def broken(*args: Any) -> None:
        raise OSError("disk full")  # the process dies here, in effect

    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        client.headers.update(bearer("sk-emu-demo-all"))
        before = client.get("/api/v1/ai-gateway/balance").json()["balance_micros"]
        monkeypatch.setattr(records, "finish_record", broken)
        assert client.post("/api/v1/chat/completions", json=CHAT, headers=KEY).status_code == 500
        assert client.get("/api/v1/ai-gateway/balance").json()["balance_micros"] == before
        assert client.get("/api/v1/ai-gateway/usage").json()["data"] == []

        monkeypatch.setattr(records, "finish_record", finish)
        answer = client.post("/api/v1/chat/completions", json=CHAT, headers=KEY)
        assert answer.status_code == 200 and "idempotent-replayed" not in answer.headers
        replay = client.post("/api/v1/chat/completions", json=CHAT, headers=KEY)
        assert replay.headers["idempotent-replayed"] == "true"
        assert replay.json() == answer.json()
        charged = before - client.get("/api/v1/ai-gateway/balance").json()["balance_micros"]
        assert charged == answer.json()["usage"]["charge_micros"] > 0


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/chat/completions", {**CHAT, "stream": True}),
        ("/api/v1/responses", {"model": "emulator/echo", "input": "once", "stream": True}),
        (
            "/api/v1/messages",
            {
                "model": "emulator/echo",
                "max_tokens": 50,
                "stream": True,
                "messages": CHAT["messages"],
            },
        ),
    ],
)
def test_a_stream_is_kept_in_its_charges_transaction(
    monkeypatch: pytest.MonkeyPatch, path: str, body: dict[str, Any]
) -> None:
    """A whole stream's record is written as it is settled: a failure writing it undoes
    the charge and frees the key, so the retry runs, is charged once and then replays."""
    app = create_app(Settings(db=":memory:", clock="manual"))
    finish = records.finish_record

    def broken(*args: Any) -> None:
        raise OSError("disk full")

    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        client.headers.update(bearer("sk-emu-demo-all"))
        before = client.get("/api/v1/ai-gateway/balance").json()["balance_micros"]
        monkeypatch.setattr(records, "finish_record", broken)
        # The stream breaks as it ends (the test client answers a 500): nothing kept.
        assert client.post(path, json=body, headers=KEY).status_code == 500
        assert client.get("/api/v1/ai-gateway/balance").json()["balance_micros"] == before
        assert client.get("/api/v1/ai-gateway/usage").json()["data"] == []

        monkeypatch.setattr(records, "finish_record", finish)
        answer = client.post(path, json=body, headers=KEY)
        assert answer.status_code == 200 and "idempotent-replayed" not in answer.headers
        replay = client.post(path, json=body, headers=KEY)
        assert replay.headers["idempotent-replayed"] == "true"
        assert replay.content == answer.content
        assert replay.headers["cache-control"] == answer.headers["cache-control"] == "no-cache"
        charged = before - client.get("/api/v1/ai-gateway/balance").json()["balance_micros"]
        usage = client.get("/api/v1/ai-gateway/usage").json()["data"]
        assert len(usage) == 1 and charged == usage[0]["charge_micros"] > 0
