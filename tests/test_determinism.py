"""Same seed, same clock, same requests: byte-identical answers. Another seed: other ids."""

from __future__ import annotations

import re

from litestar.testing import TestClient

from emulator.app import create_app
from emulator.settings import Settings


def session(seed: int) -> list[bytes]:
    app = create_app(Settings(db=":memory:", clock="manual", seed=seed))
    answers = []
    with TestClient(app, base_url="http://127.0.0.1") as client:
        tenant = client.post("/_emulator/accounts", json={"name": "det"})
        answers.append(tenant.content)
        token = tenant.json()["user_token"]
        headers = {"Authorization": f"Bearer {token}"}
        client.post("/_emulator/clock", json={"advance_seconds": 30})
        for name in ("a", "b"):
            made = client.post("/api/v1/keys", json={"name": name}, headers=headers)
            answers += [made.content, made.headers["x-request-id"].encode()]
        answers.append(client.get("/api/v1/keys", headers=headers).content)
        answers.append(client.get("/api/v1/models").content)
        answers += money_and_answers(client, tenant.json())
    return answers


def money_and_answers(client: TestClient, tenant: dict) -> list[bytes]:
    """Gateway answers and every view of their money right after saving a snapshot, then
    the same after restoring it: the same bytes."""
    key = {"Authorization": f"Bearer {tenant['api_key']}"}
    chat = {"model": "openai/o4-mini", "messages": [{"role": "user", "content": "Why cache?"}]}
    client.post("/api/v1/chat/completions", json=chat, headers=key)  # ids taken before saving
    client.post("/_emulator/snapshots", json={"name": "det"})
    seen: list[bytes] = []
    for _ in range(2):  # the second time after restoring the state of the first
        made = client.post("/api/v1/chat/completions", json=chat, headers=key)
        reply = client.post("/api/v1/responses", json={**chat, "input": "Why?"}, headers=key)
        seen += [made.content, reply.content]
        gen = made.headers["x-generation-id"]
        for path in ("/api/v1/ai-gateway/usage", f"/api/v1/generation?id={gen}", "/api/v1/key",
                     "/api/v1/credits", "/api/v1/ai-gateway/balance"):  # fmt: skip
            seen.append(client.get(path, headers=key).content)
        seen.append(client.get(f"/_emulator/accounts/{tenant['account_id']}/ledger").content)
        client.post("/_emulator/snapshots/det/restore")
    return seen


def test_a_restored_state_answers_the_same_request_with_the_same_bytes() -> None:
    # Request ids go on across a restore (the journal, which a restore keeps, is indexed
    # by them); everything else the usage events, stats and ledger show is the same.
    seen = [re.sub(rb"req_[0-9a-f]+", b"req_", answer) for answer in session(0)[-16:]]
    assert seen[:8] == seen[8:]


def test_the_same_seed_gives_the_same_bytes() -> None:
    assert session(0) == session(0)


def test_another_seed_gives_other_ids_and_secrets() -> None:
    a, b = session(0), session(1)
    assert a[0] != b[0] and a[1] != b[1]
    assert a[6] == b[6]  # the catalog does not depend on the seed


def chat_ids(tmp_db: str | None, *, snapshot: bool, restart: bool) -> list[str]:
    """The generation and request ids of two requests, with a snapshot saved or a
    restart between (a restarted server numbers requests on: one state file never holds
    two requests of one id)."""
    chat = {"model": "emulator/echo", "messages": [{"role": "user", "content": "x"}]}
    key = {"Authorization": "Bearer sk-emu-demo-all"}
    settings = Settings(db=tmp_db or ":memory:", clock="manual", seed=0)
    ids = []
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        client.post("/_emulator/reset")
        ids.append(client.post("/api/v1/chat/completions", json=chat, headers=key).headers)
        if snapshot:
            client.post("/_emulator/snapshots", json={"name": "between"})
        if not restart:
            ids.append(client.post("/api/v1/chat/completions", json=chat, headers=key).headers)
    if restart:
        with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
            ids.append(client.post("/api/v1/chat/completions", json=chat, headers=key).headers)
    return [h["x-generation-id"] for h in ids] + [h["x-request-id"] for h in ids]


def test_saving_a_snapshot_or_restarting_does_not_change_the_ids(tmp_path) -> None:
    straight = chat_ids(None, snapshot=False, restart=False)
    # Saving is a request too: the generation ids stay, the request ids go on.
    assert chat_ids(None, snapshot=True, restart=False)[:2] == straight[:2]
    assert chat_ids(str(tmp_path / "state.db"), snapshot=False, restart=True) == straight
