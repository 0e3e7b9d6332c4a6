"""Usage events: one per gateway request, with its route attempts."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class UsageEvent:
    id: str
    account_id: str
    key_id: str | None
    created_at: str
    endpoint: str
    model: str
    provider: str | None
    status: str
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    provider_cost_micros: int
    platform_fee_micros: int
    charge_micros: int
    margin_micros: int
    route_attempts: list[dict[str, Any]]
    metadata: dict[str, Any]


def insert_usage_event(conn: sqlite3.Connection, event: UsageEvent) -> None:
    row = asdict(event)
    row["route_attempts"] = json.dumps(event.route_attempts)
    row["metadata"] = json.dumps(event.metadata)
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    conn.execute(f"INSERT INTO usage_events ({columns}) VALUES ({marks})", list(row.values()))


def get_usage_event(conn: sqlite3.Connection, account_id: str, event_id: str) -> UsageEvent | None:
    row = conn.execute(
        "SELECT * FROM usage_events WHERE id = ? AND account_id = ?", [event_id, account_id]
    ).fetchone()
    if row is None:
        return None
    data = dict(row)
    data["route_attempts"] = json.loads(data["route_attempts"])
    data["metadata"] = json.loads(data["metadata"])
    return UsageEvent(**data)
