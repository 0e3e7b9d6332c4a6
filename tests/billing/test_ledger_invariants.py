"""For every account at every moment: balance = opening + top-ups - settled charges,
available = balance - active holds, never negative; and every answer's status says
what it cost: a 200 its usage's charge, written once to the ledger under its
generation id; a replay, a 402, a 409 or a 503 nothing. Checked after random sequences
of steps whose requests are sent at once, while a slow stream may hold part of the
balance."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from emulator.testing import EmulatorHandle, Tenant
from tests.billing.test_charges import EXACT
from tests.helpers import assert_error

OPERATION = st.sampled_from(["chat", "stream", "fail", "topup", "responses", "idempotent"])
# Each step's operations are sent at once (one alone: in turn).
STEPS = st.lists(st.lists(OPERATION, min_size=1, max_size=3), min_size=1, max_size=5)
TOPUP = 100
BODIES: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": ("/chat/completions", EXACT),
    "idempotent": ("/chat/completions", EXACT),
    "stream": ("/chat/completions", {**EXACT, "stream": True}),
    "fail": ("/chat/completions", {**EXACT, "model": "emulator/fail-503", "provider": {}}),
    "responses": (
        "/responses",
        {"model": "emulator/echo", "input": "one two three four five six", "max_output_tokens": 5},
    ),
}
# A stream with a 0.25 s pause after each of its ~5 chunks: its hold (20 micros, the
# minimum charge) stays active for about a second while the steps run.
SLOW = {
    "model": "emulator/slow",
    "messages": [{"role": "user", "content": "hold on"}],
    "max_tokens": 1,
    "stream": True,
}


@dataclass
class Outcome:
    op: str
    status: int
    generation_id: str | None
    charge: int  # what the answer says it was charged
    replayed: bool
    error: dict[str, Any] | None


def streamed_charge(text: str) -> int:
    """The charge of a chat stream's usage chunk (sent always, last before [DONE])."""
    chunks = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]
    (usage,) = [chunk["usage"] for chunk in chunks if chunk.get("usage")]
    return int(usage["charge_micros"])


def send(emulator: EmulatorHandle, tenant: Tenant, op: str) -> Outcome:
    if op == "topup":
        emulator.top_up(tenant.account_id, TOPUP)
        return Outcome(op, 200, None, 0, False, None)
    path, body = BODIES[op]
    headers = {"Idempotency-Key": "same"} if op == "idempotent" else {}
    with tenant.client(headers=headers) as http:
        answer = http.post(path, json=body)
    replayed = answer.headers.get("idempotent-replayed") == "true"
    charge, error = 0, None
    if answer.status_code == 200:
        charge = (
            streamed_charge(answer.text)
            if op == "stream"
            else int(answer.json()["usage"]["charge_micros"])
        )
    else:
        error = answer.json()["error"]
    generation_id = answer.headers.get("x-generation-id")
    return Outcome(op, answer.status_code, generation_id, charge, replayed, error)


@dataclass
class Books:
    """What the answers say the account was charged, to compare with its ledger."""

    opening: int
    topups: int = 0
    # Generation id -> charge, of each 200 not replayed (and the slow stream once ended).
    charged: dict[str, int] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)  # generation ids of the 503s
    idempotent_id: str | None = None  # the one answer the key "same" was charged for

    def record(self, outcome: Outcome, step: list[str], available_before: int | None) -> None:
        op, status = outcome.op, outcome.status
        if op == "topup":
            assert status == 200
            self.topups += TOPUP
            return
        allowed = {"fail": {402, 503}}.get(op, {200, 402})
        if op == "idempotent" and step.count("idempotent") > 1:
            allowed = allowed | {409}  # two at once: one runs, the other is told to wait
        assert status in allowed, outcome
        if status == 402:
            error = outcome.error
            assert error is not None and error["code"] == "insufficient_credits", outcome
            assert error["metadata"]["required_micros"] > error["metadata"]["available_micros"]
            if available_before is not None:  # alone: refused for what was available then
                assert error["metadata"]["available_micros"] == available_before
            assert outcome.generation_id is None  # nothing run, nothing logged
        elif status == 409:
            assert outcome.error is not None
            assert outcome.error["code"] == "idempotency_key_in_use", outcome
        elif status == 503:
            assert outcome.error is not None and outcome.error["code"] == "upstream_failed"
            assert outcome.generation_id is not None
            self.failed.add(outcome.generation_id)
        elif outcome.replayed:  # the first answer again, charged once, when it was made
            assert op == "idempotent" and outcome.generation_id == self.idempotent_id, outcome
        else:
            assert outcome.generation_id is not None and outcome.charge > 0, outcome
            assert outcome.generation_id not in self.charged
            self.charged[outcome.generation_id] = outcome.charge
            if op == "idempotent":
                assert self.idempotent_id is None, "the key was charged twice"
                self.idempotent_id = outcome.generation_id


def check(
    emulator: EmulatorHandle, tenant: Tenant, books: Books, slow_id: str | None
) -> dict[str, Any]:
    """The account's money agrees with the answers; `slow_id`: a stream that may still
    hold (or may have ended and been charged meanwhile). The account, as read."""
    account = emulator.account(tenant.account_id)
    ledger = emulator.ledger(tenant.account_id, asset="usd_micros")
    with tenant.client() as http:
        events = http.get("/ai-gateway/usage", params={"limit": 200}).json()["data"]
        active = http.get("/ai-gateway/reservations", params={"status": "active"}).json()["data"]
    balance, pending = account["balance_micros"], account["pending_micros"]
    assert sum(entry["amount"] for entry in ledger) == balance
    assert sorted(e["kind"] for e in ledger if e["kind"] not in ("charge", "topup")) == ["opening"]
    assert [e["amount"] for e in ledger if e["kind"] == "topup"] == [TOPUP] * (
        books.topups // TOPUP
    )
    charges = {e["reference"]: -e["amount"] for e in ledger if e["kind"] == "charge"}
    succeeded = {e["id"]: e["charge_micros"] for e in events if e["status"] == "succeeded"}
    slow_charge = 0
    if slow_id is not None and slow_id in charges:  # the slow stream ended meanwhile
        assert not active and succeeded.pop(slow_id) == charges[slow_id]
        slow_charge = charges.pop(slow_id)
    # Each 200 charged once, at the charge its answer gave; nothing else charged.
    assert charges == books.charged == succeeded
    assert {e["id"] for e in events if e["status"] == "failed"} == books.failed
    assert all(e["charge_micros"] == 0 for e in events if e["status"] == "failed")
    assert balance == books.opening + books.topups - sum(books.charged.values()) - slow_charge
    assert len(active) <= (1 if slow_id is not None else 0)
    assert pending == sum(r["amount_micros"] for r in active)
    assert account["available_micros"] == balance - pending
    assert balance >= 0 and account["available_micros"] >= 0
    return account


def run_steps(
    emulator: EmulatorHandle,
    tenant: Tenant,
    books: Books,
    steps: list[list[str]],
    slow_id: str | None,
) -> None:
    with ThreadPoolExecutor(3) as pool:
        for step in steps:
            before = check(emulator, tenant, books, slow_id)
            alone = len(step) == 1 and slow_id is None
            outcomes = list(pool.map(lambda op: send(emulator, tenant, op), step))
            # A replay after the answer it replays, which the same step may hold.
            for outcome in sorted(outcomes, key=lambda outcome: outcome.replayed):
                books.record(outcome, step, before["available_micros"] if alone else None)
            check(emulator, tenant, books, slow_id)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# `held`: a slow stream holds part of the balance all along (in one example of three:
# it takes a second).
@given(
    steps=STEPS,
    opening=st.sampled_from([0, 40, 200, 5_000]),
    held=st.sampled_from([False, False, True]),
)
# In turn: a 503 charges nothing, a 200 its charge, a replay nothing.
@example(steps=[["fail"], ["chat"], ["idempotent"], ["idempotent"]], opening=5_000, held=False)
# A stream holds 20 of 40 micros: a chat (a hold of 28) beside it must be refused.
@example(steps=[["chat"], ["topup"]], opening=40, held=True)
# Requests at once on a balance that covers some of them; the same key twice at once.
@example(
    steps=[["chat", "stream", "responses"], ["idempotent", "idempotent"]], opening=60, held=False
)
def test_the_ledger_always_balances(
    emulator: EmulatorHandle, steps: list[list[str]], opening: int, held: bool
) -> None:
    tenant = emulator.create_tenant(balance_micros=opening, rate_limit_rpm=10_000)
    books = Books(opening)
    if not held:
        run_steps(emulator, tenant, books, steps, None)
    else:
        with tenant.client() as http, http.stream("POST", "/chat/completions", json=SLOW) as slow:
            if slow.status_code == 402:  # too poor to hold even the slow stream
                slow.read()
                assert_error(slow, 402, "insufficient_credits")
                slow_id = None
            else:
                assert slow.status_code == 200
                slow_id = slow.headers["x-generation-id"]
                account = emulator.account(tenant.account_id)
                assert account["pending_micros"] == 20  # held, and held while the steps run
                assert account["available_micros"] == opening - 20
            run_steps(emulator, tenant, books, steps, slow_id)
            if slow_id is not None:
                slow.read()
                books.charged[slow_id] = streamed_charge(slow.text)
    final = check(emulator, tenant, books, None)
    assert final["pending_micros"] == 0  # every hold settled or released
