"""When a failed job's refund is written: by the next read of the account's money,
dated at the failure; reading the job itself writes nothing."""

from __future__ import annotations

from litestar.testing import TestClient

from emulator.app import create_app
from emulator.settings import Settings
from tests.helpers import bearer

FAILING = {"model": "emulator/video", "task_type": "text2video", "prompt": "x [emulator:fail]"}
CHAT = {"model": "emulator/echo", "messages": [{"role": "user", "content": "after"}]}


def refunds(app: object) -> list[tuple[int, str]]:
    rt = app.state.runtime  # type: ignore[attr-defined]
    with rt.store.read() as conn:
        rows = conn.execute(
            "SELECT amount, created_at FROM ledger WHERE kind = 'job_refund'"
        ).fetchall()
    return [(row[0], row[1]) for row in rows]


def test_a_poll_writes_nothing_and_the_next_hold_writes_the_refund() -> None:
    app = create_app(Settings(db=":memory:", clock="manual"))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        client.headers.update(bearer("sk-emu-demo-all"))
        job = client.post("/api/v1/generate/video", json=FAILING).json()
        client.post("/_emulator/clock", json={"advance_seconds": 600})
        polled = client.get(f"/api/v1/generation/{job['id']}").json()
        assert polled["status"] == "failed" and polled["refunded"]
        assert refunds(app) == []  # the record says so; the ledger is written on a money read
        before = client.get("/api/v1/ai-gateway/balance").json()  # settles it...
        assert refunds(app) == [(job["charge_micros"], polled["failed_at"])]  # ...at the failure
        client.post("/_emulator/reset")

        job = client.post("/api/v1/generate/video", json=FAILING).json()
        client.post("/_emulator/clock", json={"advance_seconds": 600})
        client.get(f"/api/v1/generation/{job['id']}")
        answer = client.post("/api/v1/chat/completions", json=CHAT)  # a hold is a money read
        assert answer.status_code == 200
        assert [amount for amount, _ in refunds(app)] == [job["charge_micros"]]
        charge = answer.json()["usage"]["charge_micros"]
        after = client.get("/api/v1/ai-gateway/balance").json()
        assert after["balance_micros"] == before["balance_micros"] - charge
