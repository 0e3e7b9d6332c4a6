"""Reading usage events: one per gateway request, newest first, only the account's own."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from emulator.clock import instant_param
from emulator.errors import NotFound, ValidationFailed
from emulator.gateway.wire.responses_items import generation_of
from emulator.paging import check_limit, decode_seq_cursor, page, seq_cursor
from emulator.store.usage import UsageEvent, get_usage_event, list_usage_events

if TYPE_CHECKING:
    from emulator.runtime import Runtime


STATUSES = ("succeeded", "failed")  # a usage event's


def list_events(
    rt: Runtime,
    account_id: str,
    filters: dict[str, str | None],
    limit: int | None,
    cursor: str | None,
) -> dict[str, Any]:
    size = check_limit(limit, default=50, maximum=200)
    before = decode_seq_cursor(cursor, "usage")
    clean = {k: v for k, v in filters.items() if v}
    if clean.get("status") not in (None, *STATUSES):  # as the reservations list checks
        raise ValidationFailed(f"status is one of {', '.join(STATUSES)}.", param="status")
    for bound in ("created_after", "created_before"):
        if bound in clean:
            clean[bound] = instant_param(clean[bound], bound)
    with rt.store.read() as conn:
        events = list_usage_events(conn, account_id, clean, size + 1, before)
    return page(
        events,
        size,
        cursor_of=lambda item: seq_cursor("usage", item[0]),
        render=lambda item: wire(item[1]),
    )


def get_event(rt: Runtime, account_id: str, event_id: str) -> dict[str, Any]:
    """One usage event, by its id or by the id of the response it billed (`resp_x` is
    the response of `gen_x`)."""
    with rt.store.read() as conn:
        event = get_usage_event(conn, account_id, generation_of(event_id))
    if event is None:
        raise NotFound(f"No usage event {event_id!r} in this account.", param="id")
    return wire(event)


def wire(event: UsageEvent) -> dict[str, Any]:
    data = asdict(event)
    data.pop("account_id")
    return {"object": "usage_event", **data}
