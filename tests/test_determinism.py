"""Same seed, same clock, same requests: byte-identical answers. Another seed: other ids."""

from __future__ import annotations

from litestar.testing import TestClient

from emulator.app import create_app
from emulator.settings import Settings


def session(seed: int) -> list[bytes]:
    app = create_app(Settings(db=":memory:", clock="manual", seed=seed))
    answers = []
    with TestClient(app) as client:
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
    return answers


def test_the_same_seed_gives_the_same_bytes() -> None:
    assert session(0) == session(0)


def test_another_seed_gives_other_ids_and_secrets() -> None:
    a, b = session(0), session(1)
    assert a[0] != b[0] and a[1] != b[1]
    assert a[-1] == b[-1]  # the catalog does not depend on the seed
