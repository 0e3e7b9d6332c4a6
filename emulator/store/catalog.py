"""The model catalog: providers, models and which provider serves which model."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ProviderRow:
    name: str
    position: int
    wire_format: str
    status: str
    latency_ms: int
    body: dict[str, Any]


@dataclass(frozen=True)
class ModelRow:
    id: str
    position: int
    vendor: str
    modality: str
    premium: bool
    body: dict[str, Any]


@dataclass(frozen=True)
class ServingRow:
    model_id: str
    provider: str
    position: int
    prompt_micros_per_mtok: int
    completion_micros_per_mtok: int
    body: dict[str, Any]


@dataclass(frozen=True)
class CatalogRows:
    providers: list[ProviderRow]
    models: list[ModelRow]
    serving: list[ServingRow]


def upsert_provider(conn: sqlite3.Connection, row: ProviderRow) -> None:
    conn.execute(
        "INSERT INTO providers (name, position, wire_format, status, latency_ms, body) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position, "
        "wire_format = excluded.wire_format, status = excluded.status, "
        "latency_ms = excluded.latency_ms, body = excluded.body",
        [row.name, row.position, row.wire_format, row.status, row.latency_ms, json.dumps(row.body)],
    )


def upsert_model(conn: sqlite3.Connection, row: ModelRow, serving: list[ServingRow]) -> None:
    conn.execute(
        "INSERT INTO models (id, position, vendor, modality, premium, body) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET position = excluded.position, "
        "vendor = excluded.vendor, modality = excluded.modality, premium = excluded.premium, "
        "body = excluded.body",
        [row.id, row.position, row.vendor, row.modality, int(row.premium), json.dumps(row.body)],
    )
    conn.execute("DELETE FROM model_providers WHERE model_id = ?", [row.id])
    conn.executemany(
        "INSERT INTO model_providers (model_id, provider, position, prompt_micros_per_mtok, "
        "completion_micros_per_mtok, body) VALUES (?, ?, ?, ?, ?, ?)",
        [
            [
                s.model_id,
                s.provider,
                s.position,
                s.prompt_micros_per_mtok,
                s.completion_micros_per_mtok,
                json.dumps(s.body),
            ]
            for s in serving
        ],
    )


def prune_catalog(
    conn: sqlite3.Connection, model_ids: list[str], provider_names: list[str]
) -> None:
    """Delete the models and providers a new catalog no longer names, with their serving rows."""
    models = json.dumps(model_ids)
    providers = json.dumps(provider_names)
    conn.execute(
        "DELETE FROM model_providers WHERE model_id NOT IN (SELECT value FROM json_each(?)) "
        "OR provider NOT IN (SELECT value FROM json_each(?))",
        [models, providers],
    )
    conn.execute("DELETE FROM models WHERE id NOT IN (SELECT value FROM json_each(?))", [models])
    conn.execute(
        "DELETE FROM providers WHERE name NOT IN (SELECT value FROM json_each(?))", [providers]
    )


def load_catalog(conn: sqlite3.Connection) -> CatalogRows:
    providers = [
        ProviderRow(
            name=r["name"],
            position=r["position"],
            wire_format=r["wire_format"],
            status=r["status"],
            latency_ms=r["latency_ms"],
            body=json.loads(r["body"]),
        )
        for r in conn.execute("SELECT * FROM providers ORDER BY position, name")
    ]
    models = [
        ModelRow(
            id=r["id"],
            position=r["position"],
            vendor=r["vendor"],
            modality=r["modality"],
            premium=bool(r["premium"]),
            body=json.loads(r["body"]),
        )
        for r in conn.execute("SELECT * FROM models ORDER BY position, id")
    ]
    serving = [
        ServingRow(
            model_id=r["model_id"],
            provider=r["provider"],
            position=r["position"],
            prompt_micros_per_mtok=r["prompt_micros_per_mtok"],
            completion_micros_per_mtok=r["completion_micros_per_mtok"],
            body=json.loads(r["body"]),
        )
        for r in conn.execute("SELECT * FROM model_providers ORDER BY model_id, position")
    ]
    return CatalogRows(providers=providers, models=models, serving=serving)


def set_provider_status(
    conn: sqlite3.Connection, name: str, status: str, latency_ms: int | None
) -> bool:
    sql = "UPDATE providers SET status = ?" + (", latency_ms = ?" if latency_ms is not None else "")
    params: list[Any] = [status] + ([latency_ms] if latency_ms is not None else [])
    cur = conn.execute(sql + " WHERE name = ?", [*params, name])
    return cur.rowcount == 1
