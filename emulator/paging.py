"""The list shape of SPEC section 8, with `limit` and an opaque `cursor`."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from emulator.errors import InternalError, ValidationFailed

T = TypeVar("T")

# A row sequence as `str(seq)` writes it, and the largest SQLite INTEGER: a bigger one
# would overflow when bound to the query.
_SEQ = re.compile(r"0|[1-9][0-9]{0,18}")
_MAX_SEQ = 2**63 - 1


def check_limit(limit: int | None, default: int, maximum: int) -> int:
    if limit is None:
        return default
    if not 1 <= limit <= maximum:
        raise ValidationFailed(
            f"limit must be between 1 and {maximum}; got {limit}.", param="limit"
        )
    return limit


def encode_cursor(*parts: str) -> str:
    return base64.urlsafe_b64encode(json.dumps(parts).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, size: int) -> tuple[str, ...] | None:
    """The parts of a cursor made by `encode_cursor`; a garbled one is a 422."""
    if cursor is None or cursor == "":
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        parts = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
        parts = None
    if (
        not isinstance(parts, list)
        or len(parts) != size
        or not all(isinstance(p, str) for p in parts)
    ):
        raise _not_ours()
    return tuple(parts)


def seq_cursor(listing: str, seq: int) -> str:
    """The cursor after row `seq` of the list `listing` (its name: a cursor of one list
    given to another is refused, not read as a place in it)."""
    return encode_cursor(listing, str(seq))


def decode_seq_cursor(cursor: str | None, listing: str) -> int | None:
    """The row sequence of a cursor made by `seq_cursor(listing, seq)`; any other is a 422."""
    after = decode_cursor(cursor, 2)
    if after is None:
        return None
    tag, seq = after
    if tag != listing or not _SEQ.fullmatch(seq) or int(seq) > _MAX_SEQ:
        raise _not_ours()
    return int(seq)


def _not_ours() -> ValidationFailed:
    return ValidationFailed(
        "cursor is not one this emulator gave out: pass the `next_cursor` of the "
        "previous page unchanged.",
        param="cursor",
    )


def page(
    items: Sequence[T],
    limit: int,
    cursor_of: Callable[[T], str],
    render: Callable[[T], Any],
) -> dict[str, Any]:
    """One page from up to `limit + 1` items, newest first (the extra one says more exist)."""
    shown = items[:limit]
    has_more = len(items) > limit
    return {
        "object": "list",
        "data": [render(item) for item in shown],
        "has_more": has_more,
        "next_cursor": cursor_of(shown[-1]) if has_more and shown else None,
    }


def page_in_order(
    items: Sequence[T],
    limit: int | None,
    cursor: str | None,
    name_of: Callable[[T], str],
    render: Callable[[T], Any],
    *,
    default: int,
    maximum: int,
    param: str = "cursor",
) -> dict[str, Any]:
    """A page of a list kept in memory, in its own order: the cursor names the last item
    shown. One the list does not hold (gone since, or never there) is a 422 naming it:
    an empty last page would end a client's walk early without a word. Names should be
    unique (the fixtures loader sees to the catalog's); a cursor naming a repeated one is
    a 500, as it could only restart the walk from an earlier page, for ever."""
    size = check_limit(limit, default=default, maximum=maximum)
    after = decode_cursor(cursor, 1)
    start = 0
    if after is not None:
        names = [name_of(item) for item in items]
        if names.count(after[0]) > 1:  # the cursor cannot say which: the walk would loop
            raise InternalError(
                f"This list holds {after[0]!r} twice, so it cannot be paged by name: "
                "list it without `limit` and `cursor`."
            )
        if after[0] not in names:
            raise ValidationFailed(
                f"{param} names {after[0]!r}, which this list does not hold (removed "
                "since, or never in it): list again from the start, without it.",
                param=param,
            )
        start = names.index(after[0]) + 1
    shown = items[start : start + size + 1]
    return page(shown, size, cursor_of=lambda item: encode_cursor(name_of(item)), render=render)


def page_in_sequence(
    items: Sequence[T],
    limit: int | None,
    cursor: str | None,
    seq_of: Callable[[T], int],
    render: Callable[[T], Any],
    *,
    default: int,
    maximum: int,
    listing: str,
) -> dict[str, Any]:
    """A page of a list kept in memory in ascending `seq_of` order (the order items were
    added): the cursor holds the last sequence shown, so the next page starts after it
    even when that item was removed in between."""
    size = check_limit(limit, default=default, maximum=maximum)
    after = decode_seq_cursor(cursor, listing)
    start = (
        0
        if after is None
        else next((i for i, item in enumerate(items) if seq_of(item) > after), len(items))
    )
    shown = items[start : start + size + 1]
    return page(
        shown, size, cursor_of=lambda item: seq_cursor(listing, seq_of(item)), render=render
    )
