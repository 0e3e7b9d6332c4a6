"""The floor of a billed chat request: its storage and HTTP, with no layers around them.

Not a product route: a measuring stick for `bench/floor.py`. It answers
`POST /` with a chat completion of `emulator/echo`, and does through the
emulator's own store functions what the real route must store (the key
lookup, the hold's read of the available balance, the ledger entry with the
balance update, the settled reservation, the usage event, in one
transaction), plus the least Python a request needs (decode, count
tokens, price, encode). No validation model, routing, translation to a
provider's format, idempotency, fault rules, journal or rate-limit headers:
what the real route spends beyond this floor is what those layers cost.
"""

from __future__ import annotations

from typing import Any

import msgspec

from emulator.billing.pricing import charge_for
from emulator.gateway.tokens import count_text
from emulator.ids import hash_secret
from emulator.runtime import open_runtime
from emulator.settings import Settings
from emulator.store.accounts import add_ledger_entry
from emulator.store.reservations import available_and_refund_due, insert_reservation
from emulator.store.usage import UsageEvent, insert_usage_event

rt = open_runtime(Settings(db=":memory:"))
BENCH_KEY = "sk-emu-demo-all"  # a fixture key; its account gets room for any load below
_HEADERS = [(b"content-type", b"application/json")]


class _Message(msgspec.Struct):
    role: str
    content: str


class _Body(msgspec.Struct):
    model: str
    messages: list[_Message]


_decode = msgspec.json.Decoder(_Body).decode


def _answer(token: str, raw: bytes) -> dict[str, Any]:
    with rt.store.read() as conn:
        found = rt.keys.lookup(conn, hash_secret(token))
    if found is None:
        raise PermissionError(token)
    key = found[0]
    body = _decode(raw)
    text = body.messages[-1].content  # echo
    prompt = sum(3 + count_text(m.content, "chat") for m in body.messages)
    output = count_text(text, "chat")
    fees, now, now_iso = rt.catalog.view().fees, rt.clock.now(), rt.clock.now_iso()
    held = charge_for(prompt, 4096, 1_000_000, 2_000_000, fees).charge_micros
    charge = charge_for(prompt, output, 1_000_000, 2_000_000, fees)
    event = UsageEvent(
        rt.generation_id(), key.account_id, key.id, now_iso, "chat.completions", body.model,
        "floor", "succeeded", prompt, output, prompt + output, charge.provider_cost_micros,
        charge.platform_fee_micros, charge.charge_micros, charge.margin_micros,
        [{"provider": "floor", "model": body.model, "status": "succeeded"}], {"stream": False},
    )  # fmt: skip
    with rt.store.write() as conn:
        standing = available_and_refund_due(conn, key.account_id, now)
        if standing is None or standing[0] < held:
            raise PermissionError("insufficient credits")
        add_ledger_entry(
            conn, rt.ids, account_id=key.account_id, asset="usd_micros", kind="charge",
            amount=-charge.charge_micros, reference=event.id, now=now_iso,
            entry_id=rt.new_id("le"),
        )  # fmt: skip
        insert_reservation(
            conn, id=rt.new_id("res"), account_id=key.account_id, key_id=key.id, amount=held,
            idempotency_key=None, created_at=now_iso, status="settled",
            charge=charge.charge_micros, usage_event_id=event.id,
        )  # fmt: skip
        insert_usage_event(conn, event)
    return {
        "id": event.id, "object": "chat.completion", "created": int(now), "model": body.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": output,
                  "total_tokens": prompt + output, "charge_micros": charge.charge_micros},
    }  # fmt: skip


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await receive()
        await send({"type": "lifespan.startup.complete"})
        await receive()
        await send({"type": "lifespan.shutdown.complete"})
        return
    token = dict(scope["headers"]).get(b"authorization", b"")[len(b"Bearer ") :].decode()
    message = await receive()
    post = scope["method"] == "POST"  # anything else: the benchmark asking if it is up
    out = msgspec.json.encode(_answer(token, message["body"])) if post else b"{}"
    await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
    await send({"type": "http.response.body", "body": out})


def _top_up() -> None:
    with rt.store.write() as conn:
        found = rt.keys.lookup(conn, hash_secret(BENCH_KEY))
        assert found is not None, BENCH_KEY
        add_ledger_entry(
            conn, rt.ids, account_id=found[0].account_id, asset="usd_micros", kind="topup",
            amount=10**15, reference=None, now=rt.clock.now_iso(),
        )  # fmt: skip


_top_up()
