"""The schema's migrations, oldest first: append new ones at the end, never edit one.

Each receives a sqlite_utils.Database on the caller's transaction;
`emulator.store.migrations` applies those not yet recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Migration = Callable[[Any], None]  # receives a sqlite_utils.Database
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m0001_foundation(db: Any) -> None:
    db["meta"].create({"key": str, "value": str}, pk="key")
    db["sequences"].create({"name": str, "value": int}, pk="name", not_null={"value"})
    db["platform"].create({"key": str, "value": str}, pk="key")
    db["accounts"].create(
        {
            "id": str,
            "name": str,
            "balance_micros": int,
            "studio_credits": int,
            "rate_limit_rpm": int,
            "premium_approved": int,
            "origin": str,  # "fixture" or "tenant"
            "created_at": str,
        },
        pk="id",
        not_null={"name", "balance_micros", "studio_credits", "rate_limit_rpm", "created_at"},
    )
    db["ledger"].create(
        {
            "id": str,
            "account_id": str,
            "asset": str,  # "usd_micros" or "studio_credits"
            "kind": str,  # opening, topup, charge, refund, ...
            "amount": int,
            "balance_after": int,
            "reference": str,
            "created_at": str,
        },
        pk="id",
        foreign_keys=[("account_id", "accounts", "id")],
        not_null={"account_id", "asset", "kind", "amount", "balance_after", "created_at"},
    )
    db["ledger"].create_index(["account_id", "asset", "created_at"])
    db["user_tokens"].create(
        {"token_hash": str, "account_id": str, "label": str, "created_at": str},
        pk="token_hash",
        foreign_keys=[("account_id", "accounts", "id")],
    )
    db["api_keys"].create(
        {
            "id": str,
            "account_id": str,
            "secret_hash": str,
            "secret_hint": str,
            "name": str,
            "scopes": str,  # JSON array
            "product": str,
            "environment": str,
            "spend_limit_micros": int,
            "spend_reset_interval": str,
            "rate_limit_rpm": int,
            "status": str,
            "created_at": str,
            "updated_at": str,
            "last_used_at": str,
            "revoked_at": str,
            "request_count": int,
            "charge_micros": int,
        },
        pk="id",
        foreign_keys=[("account_id", "accounts", "id")],
        not_null={"account_id", "secret_hash", "name", "scopes", "status", "created_at"},
        defaults={"request_count": 0, "charge_micros": 0},
    )
    db["api_keys"].create_index(["secret_hash"], unique=True)
    db["api_keys"].create_index(["account_id", "created_at"])
    db["providers"].create(
        {
            "name": str,
            "position": int,
            "wire_format": str,
            "status": str,
            "latency_ms": int,
            "body": str,  # JSON: display name, description, throughput, ...
        },
        pk="name",
        not_null={"wire_format", "status"},
    )
    db["models"].create(
        {"id": str, "position": int, "vendor": str, "modality": str, "premium": int, "body": str},
        pk="id",
        not_null={"vendor", "body"},
    )
    db["model_providers"].create(
        {
            "model_id": str,
            "provider": str,
            "position": int,
            "prompt_micros_per_mtok": int,
            "completion_micros_per_mtok": int,
            "body": str,  # JSON: image/request prices, context length, ...
        },
        pk=("model_id", "provider"),
        foreign_keys=[("model_id", "models", "id"), ("provider", "providers", "name")],
    )


@migration
def m0002_usage_events(db: Any) -> None:
    db["usage_events"].create(
        {
            "id": str,
            "account_id": str,
            "key_id": str,
            "created_at": str,
            "endpoint": str,
            "model": str,
            "provider": str,
            "status": str,  # succeeded, failed
            "prompt_tokens": int,
            "completion_tokens": int,
            "total_tokens": int,
            "provider_cost_micros": int,
            "platform_fee_micros": int,
            "charge_micros": int,
            "margin_micros": int,
            "route_attempts": str,  # JSON list
            "metadata": str,  # JSON object
        },
        pk="id",
        foreign_keys=[("account_id", "accounts", "id")],
        not_null={"account_id", "created_at", "endpoint", "model", "status"},
    )
    db["usage_events"].create_index(["account_id", "created_at"])


@migration
def m0003_idempotency(db: Any) -> None:
    db["idempotency_keys"].create(
        {
            "account_id": str,
            "key": str,
            "endpoint": str,
            "body_hash": str,
            "state": str,  # in_flight, done
            "status": int,
            "content_type": str,
            "headers": str,  # JSON object
            "body": bytes,
            "created_at": float,  # virtual clock, seconds
        },
        pk=("account_id", "key"),
        not_null={"endpoint", "body_hash", "state", "created_at"},
    )


@migration
def m0004_reservations(db: Any) -> None:
    db["reservations"].create(
        {
            "id": str,
            "account_id": str,
            "key_id": str,
            "status": str,  # active, failed, settled
            "amount_micros": int,
            "charge_micros": int,
            "idempotency_key": str,
            "usage_event_id": str,
            "reason": str,
            "created_at": str,
            "updated_at": str,
        },
        pk="id",
        foreign_keys=[("account_id", "accounts", "id")],
        not_null={"account_id", "status", "amount_micros", "created_at"},
    )
    db["reservations"].create_index(["account_id", "status"])


@migration
def m0005_spend_indexes(db: Any) -> None:
    db["usage_events"].create_index(["key_id", "created_at"])
    db["reservations"].create_index(["key_id", "status"])


# What authenticating a key reads: a change to any of it invalidates cached keys.
_KEY_AUTH_COLUMNS = (
    "account_id, secret_hash, scopes, status, revoked_at, spend_limit_micros, "
    "spend_reset_interval, rate_limit_rpm"
)


@migration
def m0006_auth_epoch(db: Any) -> None:
    """A counter the database bumps itself whenever what authentication reads changes
    (from this process, the CLI, or any future code path): the key cache's validity.
    Outside the data tables, so a reset never winds it back."""
    conn = db.conn
    conn.execute("CREATE TABLE _auth_epoch (value INTEGER NOT NULL)")
    conn.execute("INSERT INTO _auth_epoch (value) VALUES (0)")
    bump = "BEGIN UPDATE _auth_epoch SET value = value + 1; END"
    for name, event in (
        ("key_insert", "INSERT ON api_keys"),
        ("key_delete", "DELETE ON api_keys"),
        ("key_update", f"UPDATE OF {_KEY_AUTH_COLUMNS} ON api_keys"),
        ("account_delete", "DELETE ON accounts"),
        ("account_update", "UPDATE OF rate_limit_rpm, premium_approved ON accounts"),
    ):
        conn.execute(f"CREATE TRIGGER auth_epoch_{name} AFTER {event} {bump}")


@migration
def m0007_jobs(db: Any) -> None:
    """Long-running jobs (video generations, provider tasks). Their status is not
    stored: it is computed from the schedule and the virtual clock when read."""
    db["jobs"].create(
        {
            "id": str,
            "account_id": str,
            "key_id": str,
            "family": str,  # video_generation, vidprov_effects, ...
            "kind": str,  # generation | provider_task
            "model": str,
            "inputs": str,  # JSON
            "outputs": str,  # JSON: the media it ends with
            "created_at": str,
            "created_ts": float,  # virtual clock, seconds
            "queued_s": float,
            "processing_s": float,
            "fail_ts": float,  # when it fails (known at creation, or forced); else null
            "error_code": str,
            "error_message": str,
            "done_ts": float,  # a forced completion
            "charge_micros": int,
            "refunded": int,
            "idempotency_key": str,
            "provider_task_id": str,
            "external_task_id": str,
        },
        pk="id",
        foreign_keys=[("account_id", "accounts", "id")],
        not_null={"account_id", "family", "kind", "inputs", "created_at", "created_ts"},
        defaults={"refunded": 0, "charge_micros": 0},
    )
    db["jobs"].create_index(["account_id", "kind"])
    db["jobs"].create_index(["provider_task_id"])
    db["jobs"].create_index(["external_task_id"])
    db.conn.execute(
        "CREATE INDEX idx_jobs_refund_due ON jobs (account_id, fail_ts) WHERE refunded = 0"
    )


@migration
def m0008_response_items(db: Any) -> None:
    """The output items of stored responses (`store`, the default), which a later
    request's input names by `item_reference`."""
    db["response_items"].create(
        {
            "account_id": str,
            "item_id": str,
            "response_id": str,
            "item": str,  # JSON: the item as the response gave it
            "created_at": str,
        },
        pk=("account_id", "item_id"),
        foreign_keys=[("account_id", "accounts", "id")],
        not_null={"response_id", "item", "created_at"},
    )


@migration
def m0009_stored_responses(db: Any) -> None:
    """Stored responses (`store`, the default) whole, for `GET /responses/{id}`, with
    the input items of their request, for `input_items` and `previous_response_id`."""
    db["stored_responses"].create(
        {
            "id": str,
            "account_id": str,
            "previous_response_id": str,
            "response": str,  # JSON: the response object as the client got it
            "input": str,  # JSON: the request's own input items, each with an id
            "created_at": str,
        },
        pk="id",
        foreign_keys=[("account_id", "accounts", "id")],
        not_null={"account_id", "response", "input", "created_at"},
    )


@migration
def m0010_usage_reasoning_and_finish(db: Any) -> None:
    """What billing code asks of a usage event besides its tokens: how many of the
    output tokens were reasoning, and why the answer ended (the first choice's)."""
    db["usage_events"].add_column("reasoning_tokens", int, not_null_default=0)
    db["usage_events"].add_column("finish_reason", str)


@migration
def m0011_jobs_by_key(db: Any) -> None:
    """A key's spend limit counts its jobs' charges in the window (`billing.spend`)."""
    db["jobs"].create_index(["key_id", "created_at"])


@migration
def m0012_prompt_cache(db: Any) -> None:
    """The prompt prefixes providers keep (`gateway.prompt_cache`), and what each usage
    event read from and wrote to them, of its prompt tokens."""
    db["prompt_cache"].create(
        {
            "account_id": str,
            "provider": str,
            "model": str,
            "digest": str,
            "tokens": int,
            "expires_at": float,  # seconds since the epoch, on the virtual clock
        },
        pk=("account_id", "provider", "model", "digest"),
        not_null={"tokens", "expires_at"},
    )
    db["usage_events"].add_column("cached_tokens", int, not_null_default=0)
    db["usage_events"].add_column("cache_write_tokens", int, not_null_default=0)


@migration
def m0013_usage_web_search(db: Any) -> None:
    """How many web search results a usage event's prompt held (each is charged)."""
    db["usage_events"].add_column("web_search_results", int, not_null_default=0)


@migration
def m0014_prompt_cache_ttl(db: Any) -> None:
    """How long a kept prefix lives at a time: a read renews it for that long."""
    db["prompt_cache"].add_column("ttl", int, not_null_default=300)


@migration
def m0015_background_responses(db: Any) -> None:
    """A response made with `background: true` moves queued -> in_progress -> completed
    on the virtual clock (`gateway.background`): its schedule, and when it was cancelled."""
    table = db["stored_responses"]
    table.add_column("created_ts", float)  # on the virtual clock; NULL: not background
    table.add_column("queued_s", float)
    table.add_column("processing_s", float)
    table.add_column("cancelled_ts", float)
    table.add_column("events", str)  # JSON: its stream events, to be streamed again


@migration
def m0016_usage_stop_sequence(db: Any) -> None:
    """Which stop sequence ended an answer, when the provider told: generation stats
    give a messages provider's own finish for it (`native_finish_reason`)."""
    db["usage_events"].add_column("stop_sequence", str)


@migration
def m0017_world(db: Any) -> None:
    """Which state the file holds: a reset or a restore, by any process, counts one more.
    A server learns from it that `emulator reset` replaced its state (`Runtime`).
    Outside the data tables, so a reset never winds it back."""
    db.conn.execute("CREATE TABLE _world (value INTEGER NOT NULL)")
    db.conn.execute("INSERT INTO _world (value) VALUES (0)")


@migration
def m0018_jobs_without_idempotency_key(db: Any) -> None:
    """Jobs are created once per `Idempotency-Key` by `idempotency_keys`; the column
    for it on the job was never filled."""
    db.conn.execute("ALTER TABLE jobs DROP COLUMN idempotency_key")


@migration
def m0019_usage_web_fetches(db: Any) -> None:
    """How many pages the web fetch tool read for a usage event (each is charged)."""
    db["usage_events"].add_column("web_fetches", int, not_null_default=0)


@migration
def m0020_kept_audio(db: Any) -> None:
    """The transcripts of answers' sound, kept while the sound lives, so that a later
    turn may send the sound back by its id (`gateway.kept_audio`)."""
    db["kept_audio"].create(
        {
            "account_id": str,
            "id": str,
            "transcript": str,
            "expires_at": float,  # seconds since the epoch, on the virtual clock
        },
        pk=("account_id", "id"),
        not_null={"transcript", "expires_at"},
    )
