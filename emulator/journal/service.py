"""Reading the journal: a page of entries, newest first, paged as every list is."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from emulator.clock import instant_param
from emulator.journal.book import Entry, Filters, Journal
from emulator.paging import check_limit, decode_seq_cursor, page, seq_cursor

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


def list_entries(
    journal: Journal, filters: Filters, limit: int | None, cursor: str | None
) -> dict[str, Any]:
    size = check_limit(limit, default=DEFAULT_LIMIT, maximum=MAX_LIMIT)
    before = decode_seq_cursor(cursor, "requests")
    bounds = replace(
        filters,
        since=filters.since and instant_param(filters.since, "since"),
        until=filters.until and instant_param(filters.until, "until"),
    )
    return page(
        journal.query(bounds, size + 1, before),
        size,
        cursor_of=lambda entry: seq_cursor("requests", entry.seq),
        render=Entry.summary,
    )
