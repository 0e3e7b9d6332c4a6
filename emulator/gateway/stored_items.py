"""Responses kept for later, as OpenAI's API keeps them (`store`, true by default).

Their output items are kept so that a later request's input can name one by
`{"type": "item_reference", "id": ...}` instead of sending it again: the AI SDK's
OpenAI provider sends earlier answers that way unless told `store: false`. A
reference is replaced by the item before anything else reads the input; one to
an item this account was never given (or given with `store: false`) is 400
`item_not_found`. Nothing else of a response is kept: `previous_response_id` is
not followed and there is no `GET /responses/{id}`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.errors import InvalidRequest
from emulator.store.response_items import get_items, save_items

if TYPE_CHECKING:
    from emulator.runtime import Runtime

REFERENCE = "item_reference"


def stores(body: dict[str, Any]) -> bool:
    return body.get("store") is not False


def resolved(rt: Runtime, account_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """The body with each `item_reference` of its input replaced by the item it names."""
    items = body.get("input")
    if not isinstance(items, list):
        return body
    wanted = [item["id"] for item in items if item.get("type") == REFERENCE]
    if not wanted:
        return body
    with rt.store.read() as conn:
        found = get_items(conn, account_id, wanted)
    out: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        if item.get("type") != REFERENCE:
            out.append(item)
            continue
        stored = found.get(item["id"])
        if stored is None:
            raise InvalidRequest(
                f"Item with id {item['id']!r} not found: an item_reference names an output item "
                "of an earlier response of this account made with `store` true (the default). "
                "Send the item itself instead (the AI SDK: providerOptions.openai.store false).",
                param=f"input[{index}].id",
                code="item_not_found",
            )
        out.append(stored)
    return {**body, "input": out}


def keep(rt: Runtime, account_id: str, response: dict[str, Any]) -> None:
    """Keep a response's output items (`store` was not false)."""
    with rt.store.write() as conn:
        save_items(conn, account_id, response["id"], response["output"], rt.clock.now_iso())
