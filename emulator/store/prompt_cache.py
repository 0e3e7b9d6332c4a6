"""Prompt prefixes a provider keeps (`gateway.prompt_cache`), by account, route and digest."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable


def longest_kept(
    conn: sqlite3.Connection,
    account_id: str,
    route: tuple[str, str],
    digests: list[str],
    now: float,
) -> tuple[str, int, int] | None:
    """Of `digests`, the kept (unexpired) prefix with the most tokens: (digest, tokens,
    how long it is kept at a time)."""
    marks = ", ".join("?" for _ in digests)
    row = conn.execute(
        "SELECT digest, tokens, ttl FROM prompt_cache WHERE account_id = ? AND provider = ? "
        f"AND model = ? AND expires_at > ? AND digest IN ({marks}) ORDER BY tokens DESC LIMIT 1",
        [account_id, *route, now, *digests],
    ).fetchone()
    return None if row is None else (row[0], int(row[1]), int(row[2]))


def keep(
    conn: sqlite3.Connection,
    account_id: str,
    route: tuple[str, str],
    prefixes: Iterable[tuple[str, int, int]],
    now: float,
) -> None:
    """Keep each (digest, tokens, ttl) prefix until `now + ttl`, or longer if it already
    was (and for the longer ttl from then on); the route's expired prefixes go."""
    conn.execute(
        "DELETE FROM prompt_cache WHERE account_id = ? AND provider = ? AND model = ? "
        "AND expires_at <= ?",
        [account_id, *route, now],
    )
    conn.executemany(
        "INSERT INTO prompt_cache (account_id, provider, model, digest, tokens, expires_at, "
        "ttl) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, provider, model, digest) "
        "DO UPDATE SET expires_at = MAX(expires_at, excluded.expires_at), "
        "ttl = MAX(ttl, excluded.ttl)",
        [[account_id, *route, digest, tokens, now + ttl, ttl] for digest, tokens, ttl in prefixes],
    )
