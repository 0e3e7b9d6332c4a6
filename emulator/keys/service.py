"""The rules of API keys: creation, listing, updates and revocation.

The raw secret exists only in the answer to its creation; the store keeps a
hash. A user token sees only its own account's keys: another account's key
id is a 404, so ids do not leak.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from emulator.auth.credentials import check_account
from emulator.billing.windows import window_bounds
from emulator.clock import iso
from emulator.errors import NotFound, ValidationFailed
from emulator.keys.rules import check_key_rules
from emulator.keys.schemas import ApiKeyCreated, ApiKeyOut, KeyCreate, KeyUpdate, KeyUsage
from emulator.paging import check_limit, decode_seq_cursor, page, seq_cursor
from emulator.store import keys as key_rows
from emulator.store.jobs import key_job_spend
from emulator.store.meta import new_id, next_sequence
from emulator.store.usage import key_usage

if TYPE_CHECKING:
    from emulator.runtime import Runtime

SECRET_PREFIX = "sk-emu-"


def create_key(rt: Runtime, account_id: str, body: KeyCreate) -> ApiKeyCreated:
    check_key_rules(body.product, body.scopes, body.spend_limit_micros, body.spend_reset_interval)
    with rt.store.write() as conn:
        check_account(conn, account_id)
        key, secret = issue_key(
            conn,
            rt,
            account_id,
            name=body.name,
            scopes=body.scopes,
            product=body.product,
            environment=body.environment,
            spend_limit_micros=body.spend_limit_micros,
            spend_reset_interval=body.spend_reset_interval,
            rate_limit_rpm=body.rate_limit_rpm,
        )
    return ApiKeyCreated(**to_wire(key, _NO_USAGE).model_dump(), key=secret)


def issue_key(
    conn: sqlite3.Connection, rt: Runtime, account_id: str, **fields: Any
) -> tuple[key_rows.ApiKey, str]:
    """Make, store and return a new key with its raw secret (the only time it exists)."""
    secret = rt.ids.secret(SECRET_PREFIX, next_sequence(conn, "api_key_secret"))
    key = key_rows.new_key(
        key_id=new_id(conn, rt.ids, "key"),
        account_id=account_id,
        secret=secret,
        now=rt.clock.now_iso(),
        **fields,
    )
    key_rows.insert_key(conn, key)
    return key, secret


def list_keys(
    rt: Runtime, account_id: str, limit: int | None, cursor: str | None
) -> dict[str, Any]:
    size = check_limit(limit, default=50, maximum=100)
    before = decode_seq_cursor(cursor, "keys")
    now = rt.clock.now()
    with rt.store.read() as conn:
        check_account(conn, account_id)
        keys = key_rows.list_keys(conn, account_id, size + 1, before)
        usages = {key.id: usage_of(conn, key, now) for _, key in keys}
    return page(
        keys,
        size,
        cursor_of=lambda item: seq_cursor("keys", item[0]),
        render=lambda item: to_wire(item[1], usages[item[1].id]).model_dump(),
    )


def get_key(rt: Runtime, account_id: str, key_id: str) -> ApiKeyOut:
    with rt.store.read() as conn:
        check_account(conn, account_id)
        key = _live_key(conn, account_id, key_id)
        return to_wire(key, usage_of(conn, key, rt.clock.now()))


def update_key(rt: Runtime, account_id: str, key_id: str, body: KeyUpdate) -> ApiKeyOut:
    changes = {field: getattr(body, field) for field in body.model_fields_set}
    for required in ("name", "status", "scopes", "environment"):
        if required in changes and changes[required] is None:
            raise ValidationFailed(f"`{required}` cannot be null.", param=required)
    if "spend_limit_micros" in changes and changes["spend_limit_micros"] is None:
        # Clearing the limit clears its interval, which means nothing without one.
        changes.setdefault("spend_reset_interval", None)
    now = rt.clock.now_iso()
    with rt.store.write() as conn:
        check_account(conn, account_id)
        key = _live_key(conn, account_id, key_id)
        fields: dict[str, Any] = {k: tuple(v) if k == "scopes" else v for k, v in changes.items()}
        merged = replace(key, **fields)
        check_key_rules(
            merged.product,
            merged.scopes,
            merged.spend_limit_micros,
            merged.spend_reset_interval,
        )
        if changes:
            key_rows.update_key(conn, key_id, changes, now)
            merged = replace(merged, updated_at=now)
        usage = usage_of(conn, merged, rt.clock.now())
    return to_wire(merged, usage)


def revoke_key(rt: Runtime, account_id: str, key_id: str) -> str:
    with rt.store.write() as conn:
        check_account(conn, account_id)
        _live_key(conn, account_id, key_id)
        key_rows.revoke_key(conn, key_id, rt.clock.now_iso())
    return key_id


def to_wire(key: key_rows.ApiKey, usage: KeyUsage) -> ApiKeyOut:
    return ApiKeyOut(
        id=key.id,
        name=key.name,
        scopes=list(key.scopes),
        product=key.product,
        environment=key.environment,
        spend_limit_micros=key.spend_limit_micros,
        spend_reset_interval=key.spend_reset_interval,
        rate_limit_rpm=key.rate_limit_rpm,
        status=key.status,
        key_hint=key.secret_hint,
        created_at=key.created_at,
        updated_at=key.updated_at,
        last_used_at=key.last_used_at,
        usage=usage,
    )


_NO_USAGE = KeyUsage(requests=0, charge_micros=0, window_charge_micros=0)  # a new key's


def usage_of(conn: sqlite3.Connection, key: key_rows.ApiKey, now: float) -> KeyUsage:
    """What the key was used for: all time, and in its spend-limit window (all time
    without an interval)."""
    start, _ = window_bounds(key.spend_reset_interval, now)
    requests, charge, window = key_usage(conn, key.id, iso(start))
    jobs_total, jobs_window = key_job_spend(conn, key.id, ["", iso(start)], now)
    return KeyUsage(
        requests=requests,
        charge_micros=charge + jobs_total,
        window_charge_micros=window + jobs_window,
    )


def _live_key(conn: sqlite3.Connection, account_id: str, key_id: str) -> key_rows.ApiKey:
    key = key_rows.get_key(conn, account_id, key_id)
    if key is None:
        raise NotFound(f"No API key {key_id!r} in this account.", param="id")
    return key
