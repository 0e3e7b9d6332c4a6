"""API keys: stored with a hash of the secret, never the secret itself."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from emulator.ids import hash_secret
from emulator.store.db import newest_first

# Columns that PATCH /keys/{id} may change; anything else is not updatable.
UPDATABLE = frozenset(
    {"name", "status", "scopes", "environment", "spend_limit_micros", "spend_reset_interval"}
)


@dataclass(frozen=True)
class ApiKey:
    id: str
    account_id: str
    secret_hash: str
    secret_hint: str
    name: str
    scopes: tuple[str, ...]
    product: str
    environment: str
    spend_limit_micros: int | None
    spend_reset_interval: str | None
    rate_limit_rpm: int | None
    status: str
    created_at: str
    updated_at: str
    last_used_at: str | None
    revoked_at: str | None


# The table's `request_count` and `charge_micros` (m0001) are no longer written or read:
# a key's usage is derived from its usage events (`store.usage.key_usage`).
_FIELDS = frozenset(field.name for field in fields(ApiKey))


def new_key(
    *,
    key_id: str,
    account_id: str,
    secret: str,
    name: str,
    scopes: Sequence[str],
    now: str,
    product: str = "ai_gateway",
    environment: str = "production",
    spend_limit_micros: int | None = None,
    spend_reset_interval: str | None = None,
    rate_limit_rpm: int | None = None,
    status: str = "active",
) -> ApiKey:
    """A key record as created: only the hash and a hint of the secret are kept."""
    return ApiKey(
        id=key_id,
        account_id=account_id,
        secret_hash=hash_secret(secret),
        secret_hint=secret_hint(secret),
        name=name,
        scopes=tuple(scopes),
        product=product,
        environment=environment,
        spend_limit_micros=spend_limit_micros,
        spend_reset_interval=spend_reset_interval,
        rate_limit_rpm=rate_limit_rpm,
        status=status,
        created_at=now,
        updated_at=now,
        last_used_at=None,
        revoked_at=None,
    )


def _key(row: sqlite3.Row | dict[str, Any]) -> ApiKey:
    data = {column: value for column, value in dict(row).items() if column in _FIELDS}
    data["scopes"] = tuple(json.loads(data["scopes"]))
    return ApiKey(**data)


def insert_key(conn: sqlite3.Connection, key: ApiKey) -> bool:
    data = key.__dict__ | {"scopes": json.dumps(list(key.scopes))}
    columns = ", ".join(data)
    marks = ", ".join("?" for _ in data)
    cur = conn.execute(
        f"INSERT OR IGNORE INTO api_keys ({columns}) VALUES ({marks})", list(data.values())
    )
    return cur.rowcount == 1


@dataclass(frozen=True)
class KeyOwner:
    """What a request needs of the key's account, read with the key in one query."""

    rate_limit_rpm: int
    premium_approved: bool


def key_by_secret_hash(
    conn: sqlite3.Connection, secret_hash: str
) -> tuple[ApiKey, KeyOwner] | None:
    row = conn.execute(
        "SELECT k.*, a.rate_limit_rpm AS owner_rpm, a.premium_approved AS owner_premium "
        "FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.secret_hash = ?",
        [secret_hash],
    ).fetchone()
    if row is None:
        return None
    data = dict(row)
    owner = KeyOwner(data.pop("owner_rpm"), bool(data.pop("owner_premium")))
    return _key(data), owner


class KeyCache:
    """Keys by secret hash, as authentication reads them, without a query per request.

    Valid while the database's auth epoch is unchanged: triggers bump it on any
    write to what authentication reads (m0006), whoever writes. The epoch is read
    again only when something may have changed it: always for a file (another
    process, the CLI, may write), and for an in-memory database, which no other
    process can reach, only after this connection has written anything at all
    (`total_changes` moved), so a run of reads (polls) costs no query. Usage
    counters in a cached key are stale by design: authentication does not read them."""

    def __init__(self, other_writers: bool = True) -> None:
        self._other_writers = other_writers
        self._epoch = -1
        self._changes = -1  # the connection's total_changes when the epoch was read
        self._keys: dict[str, tuple[ApiKey, KeyOwner]] = {}

    def _follow_epoch(self, conn: sqlite3.Connection) -> None:
        """Empty the cache if the auth epoch has moved since it was last read."""
        changes = conn.total_changes
        if self._other_writers or changes != self._changes:
            epoch = conn.execute("SELECT value FROM _auth_epoch").fetchone()[0]
            if epoch != self._epoch:
                self._keys.clear()  # bounded by the keys in the database: never grows otherwise
                self._epoch = epoch
            self._changes = changes

    def lookup(self, conn: sqlite3.Connection, secret_hash: str) -> tuple[ApiKey, KeyOwner] | None:
        self._follow_epoch(conn)
        found = self._keys.get(secret_hash)
        if found is None:
            found = key_by_secret_hash(conn, secret_hash)
            if found is not None:
                self._keys[secret_hash] = found
        return found

    def current(self, conn: sqlite3.Connection, key: ApiKey) -> ApiKey | None:
        """The key as the database has it now (in the caller's transaction), or None if
        it is gone (deleted; a revoked one read again is gone too: the caller refuses
        both). The cached copy while the auth epoch has not moved since the cache was
        filled (nothing a key's use depends on has changed), not the key's row made a
        record again (~15 us a request); the epoch is read as `lookup` reads it (not at
        all on an in-memory database this connection has not written to since).
        Otherwise the row, read again."""
        self._follow_epoch(conn)
        found = self._keys.get(key.secret_hash)
        if found is not None and found[0].id == key.id:
            return found[0]  # revoked or not: the caller checks it
        return get_key(conn, key.account_id, key.id)

    def remember(self, key: ApiKey, owner: KeyOwner) -> None:
        """A newer copy of a cached key (its `last_used_at` moved)."""
        if key.secret_hash in self._keys:
            self._keys[key.secret_hash] = (key, owner)


def get_key(conn: sqlite3.Connection, account_id: str, key_id: str) -> ApiKey | None:
    """A live (not revoked) key of this account; another account's id is None."""
    row = conn.execute(
        "SELECT * FROM api_keys WHERE id = ? AND account_id = ? AND revoked_at IS NULL",
        [key_id, account_id],
    ).fetchone()
    return None if row is None else _key(row)


def list_keys(
    conn: sqlite3.Connection, account_id: str, limit: int, before_seq: int | None
) -> list[tuple[int, ApiKey]]:
    """Live keys with their insertion sequence, newest first (the clock never goes back,
    so insertion order is creation order, ties included); `before_seq` pages."""
    sql = "SELECT rowid AS seq, * FROM api_keys WHERE account_id = ? AND revoked_at IS NULL"
    rows = newest_first(conn, sql, [account_id], limit, before_seq)
    return [(seq, _key(row)) for seq, row in rows]


def update_key(
    conn: sqlite3.Connection, key_id: str, changes: dict[str, Any], updated_at: str
) -> None:
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(f"not updatable: {sorted(unknown)}")
    values = {k: json.dumps(list(v)) if k == "scopes" else v for k, v in changes.items()}
    values["updated_at"] = updated_at
    assignments = ", ".join(f"{column} = ?" for column in values)
    conn.execute(f"UPDATE api_keys SET {assignments} WHERE id = ?", [*values.values(), key_id])


def revoke_key(conn: sqlite3.Connection, key_id: str, revoked_at: str) -> None:
    conn.execute(
        "UPDATE api_keys SET revoked_at = ?, updated_at = ?, status = 'revoked' WHERE id = ?",
        [revoked_at, revoked_at, key_id],
    )


def touch_key(conn: sqlite3.Connection, key_id: str, used_at: str) -> None:
    conn.execute("UPDATE api_keys SET last_used_at = ? WHERE id = ?", [used_at, key_id])


def secret_hint(secret: str) -> str:
    """What a list may show of a secret: its prefix and its last four characters."""
    return f"{secret[:7]}...{secret[-4:]}"
