"""The transcripts of answers' sound (`gateway.kept_audio`), by account and audio id."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable


def keep(
    conn: sqlite3.Connection,
    account_id: str,
    transcripts: Iterable[tuple[str, str]],
    expires_at: float,
    now: float,
) -> None:
    """Keep each (id, transcript) until `expires_at`; the account's expired ones go."""
    conn.execute(
        "DELETE FROM kept_audio WHERE account_id = ? AND expires_at <= ?", [account_id, now]
    )
    conn.executemany(
        "INSERT OR REPLACE INTO kept_audio (account_id, id, transcript, expires_at) "
        "VALUES (?, ?, ?, ?)",
        [[account_id, audio_id, text, expires_at] for audio_id, text in transcripts],
    )


def transcripts(
    conn: sqlite3.Connection, account_id: str, ids: list[str], now: float
) -> dict[str, str]:
    """Of `ids`, the transcripts the account still keeps."""
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"SELECT id, transcript FROM kept_audio WHERE account_id = ? AND id IN ({marks}) "
        "AND expires_at > ?",
        [account_id, *ids, now],
    )
    return {row[0]: row[1] for row in rows}
