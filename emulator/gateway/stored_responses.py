"""Responses kept for later, as OpenAI's API keeps them (`store`, true by default).

A stored response can be fetched again (`GET /responses/{id}`), its request's
input items listed, and deleted. A later request continues it by naming it in
`previous_response_id`: what the model sees is then every earlier turn's input
and output items, oldest first, before its own input (not their `instructions`:
only the request's own apply, as OpenAI documents). That history is billed as
input tokens, as upstream. An output item of a stored response can also be
named by `{"type": "item_reference", "id": ...}` instead of being sent again:
the AI SDK's OpenAI provider sends earlier answers that way unless told
`store: false`. An image generation call given by its `id` alone (no `result`)
names its kept item the same way, as OpenAI's multi-turn image editing does.
A reference or a `previous_response_id` the account was never given (or given
with `store: false`, or deleted) is a 400, as upstream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from emulator.errors import InvalidRequest, NotFound, ValidationFailed, quoted
from emulator.gateway import background
from emulator.gateway.wire.responses_items import IMAGE_ITEM
from emulator.store.response_items import get_items, save_items
from emulator.store.responses import (
    Run,
    StoredResponse,
    cancel_run,
    chain,
    delete_response,
    get_response,
    update_response,
)
from emulator.store.responses import save_response as save_stored

if TYPE_CHECKING:
    from emulator.runtime import Runtime

REFERENCE = "item_reference"
# The id prefix of an input item given without one, by its type.
_ID_PREFIXES = {"message": "msg", "function_call": "fc", "function_call_output": "fco"}


@dataclass(frozen=True)
class Conversation:
    """A responses request with its references resolved (`body`) and the items of the
    turns before it (`history`, from `previous_response_id`; oldest first)."""

    body: dict[str, Any]
    history: tuple[dict[str, Any], ...] = ()

    def whole(self) -> dict[str, Any]:
        """The body whose input is what the model reads: the history, then its own."""
        if not self.history:
            return self.body
        return {**self.body, "input": [*self.history, *own_items(self.body["input"])]}


def stores(body: dict[str, Any]) -> bool:
    """Kept: with `store` true (the default), or made in the background (to be polled)."""
    return body.get("store") is not False or body.get("background") is True


def conversation(rt: Runtime, account_id: str, body: dict[str, Any]) -> Conversation:
    body = _resolved(rt, account_id, body)
    previous = body.get("previous_response_id")
    if previous is None:
        return Conversation(body)
    with rt.store.read() as conn:
        turns = chain(conn, account_id, previous)
    if not turns:
        raise InvalidRequest(
            f"Previous response with id {quoted(previous)} not found: it names a response of this "
            "account made with `store` true (the default) and not deleted. Send the earlier "
            "turns in `input` instead.",
            param="previous_response_id",
            code="previous_response_not_found",
        )
    return Conversation(body, tuple(_history(turns, rt.clock.now())))


def _history(turns: list[StoredResponse], now: float) -> list[dict[str, Any]]:
    """The items the turns leave to the next: each one's input, then its output (a
    background turn not done by `now`, or cancelled, has shown none)."""
    return [item for turn in turns for item in (*turn.input, *shown_output(turn, now))]


def input_items(rt: Runtime, account_id: str, response_id: str) -> list[dict[str, Any]]:
    """What a kept response read, as OpenAI lists its input items: the earlier turns'
    items (`previous_response_id`), then its own request's, oldest first."""
    stored = fetch(rt, account_id, response_id)
    previous = stored.response.get("previous_response_id")
    if previous is None:
        return stored.input
    with rt.store.read() as conn:
        turns = chain(conn, account_id, previous)
    return [*_history(turns, rt.clock.now()), *stored.input]


def shown_output(turn: StoredResponse, now: float) -> list[dict[str, Any]]:
    """The output of a kept response as a poll at `now` shows it."""
    return list(background.view(turn, now)["output"])


def own_items(given: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request's input as a list of items (a string is one user message)."""
    if isinstance(given, str):
        return [{"type": "message", "role": "user", "content": given}]
    return given


def _resolved(rt: Runtime, account_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """The body with each `item_reference` of its input replaced by the item it names."""
    items = body.get("input")
    if not isinstance(items, list):
        return body
    wanted = [item["id"] for item in items if _names_kept(item)]
    if not wanted:
        return body
    with rt.store.read() as conn:
        found = get_items(conn, account_id, wanted)
    now = rt.clock.now()
    # An item of a background response not done (or cancelled) has not been shown.
    shown = {
        key: item
        for key, (item, run) in found.items()
        if run is None or background.status_at(run, now) == "done"
    }
    out: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        if not _names_kept(item):
            out.append(item)
            continue
        stored = shown.get(item["id"])
        if stored is None and item.get("type") == "reasoning":
            raise NotFound(  # OpenAI's words and status
                f"Item with id {quoted(item['id'])} not found. Items are not persisted when "
                "`store` is set to false. Try again with `store` set to true, or remove this "
                "item from your input (or send it with its `encrypted_content`: `include` "
                "reasoning.encrypted_content).",
                param=f"input[{index}].id",
                code="item_not_found",
            )
        if stored is None:
            raise InvalidRequest(
                f"Item with id {quoted(item['id'])} not found: an {item['type']} names an "
                "output item of an earlier response of this account made with `store` true "
                "(the default), once it is shown (a background response's when it is done). "
                "Send the item itself instead (the AI SDK: providerOptions.openai.store false).",
                param=f"input[{index}].id",
                code="item_not_found",
            )
        out.append(stored)
    return {**body, "input": out}


def _names_kept(item: dict[str, Any]) -> bool:
    """An `item_reference`; a reasoning item by its `id`, without its `encrypted_content`
    (OpenAI reads it from the kept response: one made with `store` false has none); or
    an image generation call by its `id` alone (a failed one has `status` failed and no
    picture to find)."""
    kind = item.get("type")
    if kind == REFERENCE:
        return True
    if kind == "reasoning":
        return "id" in item and item.get("encrypted_content") is None
    return kind == IMAGE_ITEM and "result" not in item and item.get("status") != "failed"


@dataclass(frozen=True)
class Kept:
    """Where a response is to be kept: the account, its request's own input (references
    resolved), the state the request ran in (`Runtime.world`) and, for a background
    response, its run."""

    account_id: str
    input: Any
    world: int
    run: Run | None = None


def keep(
    rt: Runtime,
    kept: Kept,
    response: dict[str, Any],
    events: list[dict[str, Any]] | None = None,
    run: Run | None = None,
) -> None:
    """Keep a response (`store` was not false) with its request's own input items, each
    given an id when it came without one; not when a reset or restore replaced the state
    its request ran in. A background response keeps its stream `events`; `run` stands
    for the kept one's while it is still being streamed."""
    with rt.store.write() as conn:
        if kept.world != rt.world:
            return
        now = rt.clock.now_iso()
        items = [_with_id(rt, i) for i in own_items(kept.input)]
        save_stored(conn, kept.account_id, response, items, now, run or kept.run, events)
        save_items(conn, kept.account_id, response["id"], response["output"], now)


def keep_streamed(
    rt: Runtime, kept: Kept, response: dict[str, Any], events: list[dict[str, Any]]
) -> None:
    """A streamed background response, kept running since its first event, as it ended
    (whole, or failed); not when it was deleted meanwhile, or the state replaced."""
    with rt.store.write() as conn:
        if kept.world != rt.world or kept.run is None:
            return
        if update_response(conn, kept.account_id, response, kept.run, events):
            now = rt.clock.now_iso()
            save_items(conn, kept.account_id, response["id"], response["output"], now)


def _with_id(rt: Runtime, item: dict[str, Any]) -> dict[str, Any]:
    """An input item as `input_items` lists it: typed, with an id; a message's content
    as parts, a status."""
    kind = item.get("type", "message")
    out = {"type": kind, **item}
    if "id" not in out:
        out = {"id": rt.new_id(_ID_PREFIXES.get(kind, "item")), **out}
    if kind == "message":
        content = out.get("content")
        if isinstance(content, str):
            part = "output_text" if out.get("role") == "assistant" else "input_text"
            extra: dict[str, Any] = {"annotations": []} if part == "output_text" else {}
            out["content"] = [{"type": part, "text": content, **extra}]
        out.setdefault("status", "completed")
    elif kind == "function_call_output":  # as OpenAI lists it ("populated via API")
        out.setdefault("status", "completed")
    return out


def fetch(rt: Runtime, account_id: str, response_id: str) -> StoredResponse:
    with rt.store.read() as conn:
        found = get_response(conn, account_id, response_id)
    if found is None:
        raise _missing(response_id)
    return found


def forget(rt: Runtime, account_id: str, response_id: str) -> dict[str, Any]:
    with rt.store.write() as conn:
        if not delete_response(conn, account_id, response_id):
            raise _missing(response_id)
    return {"id": response_id, "object": "response", "deleted": True}


def cancel(rt: Runtime, account_id: str, response_id: str) -> dict[str, Any]:
    """Cancel a background response still queued or in progress; cancelling it again
    answers the same (OpenAI: idempotent)."""
    with rt.store.write() as conn:
        stored = get_response(conn, account_id, response_id)
        if stored is None:
            raise _missing(response_id)
        if stored.run is None:
            raise _not_cancellable(response_id, "it was not made in the background")
        now = rt.clock.now()
        status = background.status_at(stored.run, now)
        if status == "done":
            raise _not_cancellable(response_id, f"it is {stored.response['status']}")
        if status != "cancelled":
            cancel_run(conn, account_id, response_id, now)
    return background.pending(stored.response, "cancelled")


def _not_cancellable(response_id: str, why: str) -> InvalidRequest:
    return InvalidRequest(
        f"Response {response_id!r} cannot be cancelled: {why}. Only a response made with "
        "`background: true` that is still queued or in progress can be.",
        param="response_id",
    )


def _missing(response_id: str) -> NotFound:
    return NotFound(
        f"Response with id {quoted(response_id)} not found: responses are kept when made with "
        "`store` true (the default) or `background` true and answered whole (a stream cut "
        "short or left by its client is not kept), per account, until deleted or the "
        "emulator is reset.",
        param="response_id",
    )


def input_page(
    items: list[dict[str, Any]], limit: int, order: str, after: str | None, param: str = "after"
) -> dict[str, Any]:
    """A page of a response's input items as OpenAI lists them (`first_id`, `last_id`,
    `has_more`; `after` an item id), with SPEC's `next_cursor` (the same id); `param`
    names the query parameter `after` came in."""
    ordered = items if order == "asc" else items[::-1]
    start = 0
    if after is not None:
        ids = [item["id"] for item in ordered]
        if after not in ids:
            raise ValidationFailed(
                f"No input item {after!r} in this response: `after` (or `cursor`) takes the "
                "id of an item of the page before.",
                param=param,
            )
        start = ids.index(after) + 1
    data = ordered[start : start + limit]
    more = start + limit < len(ordered)
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": more,
        "next_cursor": data[-1]["id"] if more else None,
    }
