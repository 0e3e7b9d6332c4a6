"""Write a fixtures folder into the database.

The catalog and pricing are replaced by the fixtures' version; accounts,
user tokens and keys are added when missing and left alone when present, so
`emulator seed` can merge new fixtures into a running demo without wiping
balances. On an empty database (start-up, reset) that is simply a full load.
Opening balances are ledger entries, like every later change.
"""

from __future__ import annotations

import sqlite3

from emulator.ids import Ids, hash_secret
from emulator.store import accounts as account_rows
from emulator.store import catalog as catalog_rows
from emulator.store import keys as key_rows
from emulator.store.fixture_models import AccountFixture, Fixtures, ModelFixture
from emulator.store.meta import set_platform


def seed(conn: sqlite3.Connection, fx: Fixtures, ids: Ids, now: str) -> None:
    set_platform(conn, "pricing", fx.pricing.model_dump())
    set_platform(conn, "world", fx.world.model_dump())
    set_platform(conn, "replies", [r.stored() for r in fx.replies])
    set_platform(conn, "video", fx.video.model_dump(mode="json"))
    for position, provider in enumerate(fx.providers):
        body = provider.model_dump(exclude={"name", "wire_format", "status", "latency_ms"})
        catalog_rows.upsert_provider(
            conn,
            catalog_rows.ProviderRow(
                name=provider.name,
                position=position,
                wire_format=provider.wire_format,
                status=provider.status,
                latency_ms=provider.latency_ms,
                body=body,
            ),
        )
    for position, model in enumerate(fx.models):
        _seed_model(conn, position, model)
    # replaced, not merged: a model or provider the fixtures dropped must stop being served
    catalog_rows.prune_catalog(conn, [m.id for m in fx.models], [p.name for p in fx.providers])
    for account in fx.accounts:
        _seed_account(conn, account, fx.world.default_rate_limit_rpm, ids, now)


def _seed_model(conn: sqlite3.Connection, position: int, model: ModelFixture) -> None:
    body = model.model_dump(mode="json", exclude={"providers"})
    serving = [
        catalog_rows.ServingRow(
            model_id=model.id,
            provider=entry.provider,
            position=index,
            prompt_micros_per_mtok=entry.prompt_micros_per_mtok,
            completion_micros_per_mtok=entry.completion_micros_per_mtok,
            body=entry.model_dump(
                exclude={"provider", "prompt_micros_per_mtok", "completion_micros_per_mtok"}
            ),
        )
        for index, entry in enumerate(model.providers)
    ]
    row = catalog_rows.ModelRow(
        id=model.id,
        position=position,
        vendor=model.id.split("/", 1)[0],
        modality=model.modality,
        premium=model.premium,
        body=body,
    )
    catalog_rows.upsert_model(conn, row, serving)


def _seed_account(
    conn: sqlite3.Connection, fx: AccountFixture, default_rpm: int, ids: Ids, now: str
) -> None:
    account = account_rows.Account(
        id=fx.id,
        name=fx.name,
        balance_micros=fx.balance_micros,
        studio_credits=fx.studio_credits,
        rate_limit_rpm=fx.rate_limit_rpm or default_rpm,
        premium_approved=fx.premium_approved,
        origin="fixture",
        created_at=now,
    )
    if account_rows.insert_account(conn, account):
        account_rows.open_balances(conn, ids, account, now)
    for token in fx.user_tokens:
        account_rows.insert_user_token(conn, hash_secret(token), fx.id, "fixture", now)
    for key in fx.keys:
        key_rows.insert_key(
            conn,
            key_rows.new_key(
                key_id=key.id,
                account_id=fx.id,
                now=now,
                **key.model_dump(exclude={"id"}),
            ),
        )
