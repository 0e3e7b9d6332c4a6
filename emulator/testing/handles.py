"""What the pytest fixtures hand a test: the running emulator and an isolated tenant."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx


@dataclass(frozen=True)
class Tenant:
    """A fresh account of its own: nothing another test does can touch it."""

    account_id: str
    api_key: str
    api_key_id: str
    user_token: str
    base_url: str
    balance_micros: int
    studio_credits: int

    def client(self, **kwargs: Any) -> httpx.Client:
        """An httpx client on /api/v1 that sends this tenant's API key."""
        headers = {"Authorization": f"Bearer {self.api_key}", **kwargs.pop("headers", {})}
        return httpx.Client(base_url=self.base_url, headers=headers, **kwargs)


MATCH_FIELDS = {"path", "method", "model", "provider", "key_id", "api_key", "account_id"}


class FaultRule:
    """A fault rule on the emulator; as a context manager it removes itself on exit."""

    def __init__(self, handle: EmulatorHandle, data: dict[str, Any]) -> None:
        self._handle = handle
        self.id: str = data["id"]
        self.data = data

    @property
    def hits(self) -> int:
        """How many times it fired so far (read from the emulator)."""
        return int(self._handle.control("GET", f"/faults/{self.id}")["hits"])

    def remove(self) -> None:
        self._handle._control.delete(f"/faults/{self.id}")  # gone already is fine

    def __enter__(self) -> FaultRule:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Faults:
    """`emulator.faults.add(status=503, path="/api/v1/chat/*", times=1)`: match fields
    and action fields may be given flat; `match=` and `action=` dicts work too."""

    def __init__(self, handle: EmulatorHandle) -> None:
        self._handle = handle

    def add(
        self,
        *,
        times: int | None = None,
        probability: float | None = None,
        match: dict[str, Any] | None = None,
        action: dict[str, Any] | None = None,
        **fields: Any,
    ) -> FaultRule:
        flat_match = {k: v for k, v in fields.items() if k in MATCH_FIELDS}
        flat_action = {k: v for k, v in fields.items() if k not in MATCH_FIELDS}
        body: dict[str, Any] = {
            "match": {**(match or {}), **flat_match},
            "action": {**(action or {}), **flat_action},
        }
        if times is not None:
            body["times"] = times
        if probability is not None:
            body["probability"] = probability
        return FaultRule(self._handle, self._handle.control("POST", "/faults", body))

    def list(self) -> list[dict[str, Any]]:
        return list(self._handle.control("GET", "/faults")["data"])

    def clear(self) -> None:
        self._handle.control("DELETE", "/faults")


class Journal:
    """What clients sent and got: `emulator.journal.last(path="/api/v1/chat/*")`."""

    page_size = 1000  # the most the journal gives a page

    def __init__(self, handle: EmulatorHandle) -> None:
        self._handle = handle

    def list(self, **filters: Any) -> list[dict[str, Any]]:
        """Newest first; filters: path (glob), method, status, key_id, account_id,
        since, until. Every match (the pages followed), or the first `limit`."""
        params = {k: v for k, v in filters.items() if v is not None}
        whole = "limit" not in params
        params.setdefault("limit", self.page_size)
        found: list[dict[str, Any]] = []
        while True:
            response = self._handle._control.get("/requests", params=params)
            response.raise_for_status()
            page = response.json()
            found += page["data"]
            if not (whole and page["has_more"]):
                return found
            params["cursor"] = page["next_cursor"]

    def last(self, **filters: Any) -> dict[str, Any] | None:
        """The newest matching request, with its bodies."""
        found = self.list(**filters, limit=1)
        return self.get(found[0]["id"]) if found else None

    def get(self, request_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._handle.control("GET", f"/requests/{request_id}")
        return result

    def clear(self) -> None:
        self._handle.control("DELETE", "/requests")


Rules = list[dict[str, Any]]  # scripted replies, as fixtures/replies.yaml writes them


class Replies:
    """Scripted replies in force (fixtures/replies.yaml's rules):
    `with emulator.replies.scripted({"pattern": "^hi$", "tool_calls": [...]}):`"""

    def __init__(self, handle: EmulatorHandle) -> None:
        self._handle = handle

    def list(self) -> Rules:
        return list(self._handle.control("GET", "/replies")["replies"])

    def set(self, rules: Rules) -> Rules:
        """Replace every rule (a 422 names the field of a bad one)."""
        return list(self._handle.control("PUT", "/replies", {"replies": rules})["replies"])

    @contextmanager
    def scripted(self, *rules: dict[str, Any]) -> Iterator[Rules]:
        """These rules first (the first match wins), then those in force; afterwards
        the rules in force before."""
        before = self.list()
        try:
            yield self.set([*rules, *before])
        finally:
            self.set(before)


class Snapshots:
    def __init__(self, handle: EmulatorHandle) -> None:
        self._handle = handle

    def save(self, name: str) -> dict[str, Any]:
        result: dict[str, Any] = self._handle.control("POST", "/snapshots", {"name": name})
        return result

    def restore(self, name: str) -> dict[str, Any]:
        result: dict[str, Any] = self._handle.control("POST", f"/snapshots/{name}/restore")
        return result

    def delete(self, name: str) -> None:
        self._handle.control("DELETE", f"/snapshots/{name}")

    @contextmanager
    def saved(self, name: str) -> Iterator[dict[str, Any]]:
        """`with emulator.snapshots.saved("clean"):` the state comes back afterwards."""
        snapshot = self.save(name)
        try:
            yield snapshot
        finally:
            self.restore(name)
            self.delete(name)


class EmulatorHandle:
    """A running emulator: its URLs and its control plane, with helpers for faults,
    the request journal, snapshots and the clock."""

    def __init__(self, url: str, admin_token: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.base_url = f"{self.url}/api/v1"
        headers = {"X-Emulator-Admin-Token": admin_token} if admin_token else {}
        self._control = httpx.Client(base_url=f"{self.url}/_emulator", headers=headers)
        self.faults = Faults(self)
        self.journal = Journal(self)
        self.snapshots = Snapshots(self)
        self.replies = Replies(self)

    def control(self, method: str, path: str, json: Any = None) -> Any:
        response = self._control.request(method, path, json=json)
        response.raise_for_status()
        return response.json()

    def health(self) -> dict[str, Any]:
        result: dict[str, Any] = self.control("GET", "/health")
        return result

    def reset(self) -> None:
        self.control("POST", "/reset")

    def create_tenant(self, **body: Any) -> Tenant:
        """POST /_emulator/accounts: balance_micros, studio_credits, rate_limit_rpm, ..."""
        data = self.control("POST", "/accounts", json=body)
        return Tenant(
            account_id=data["account_id"],
            api_key=data["api_key"],
            api_key_id=data["api_key_id"],
            user_token=data["user_token"],
            base_url=self.base_url,
            balance_micros=data["balance_micros"],
            studio_credits=data["studio_credits"],
        )

    def account(self, account_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self.control("GET", f"/accounts/{account_id}")
        return result

    def top_up(self, account_id: str, amount_micros: int) -> dict[str, Any]:
        body = {"amount_micros": amount_micros}
        result: dict[str, Any] = self.control("POST", f"/accounts/{account_id}/topup", body)
        return result

    def ledger(self, account_id: str, **filters: str) -> list[dict[str, Any]]:
        """Every ledger entry of the account (`asset`, `kind` filter), newest first."""
        entries: list[dict[str, Any]] = []
        query = {"limit": "1000", **filters}
        while True:
            page = self.control("GET", f"/accounts/{account_id}/ledger?{urlencode(query)}")
            entries += page["data"]
            if not page["has_more"]:
                return entries
            query["cursor"] = page["next_cursor"]

    def clock(self) -> dict[str, Any]:
        result: dict[str, Any] = self.control("GET", "/clock")
        return result

    def advance(self, seconds: float) -> dict[str, Any]:
        """Move the virtual clock forward (spend windows, rate limits, jobs follow it)."""
        result: dict[str, Any] = self.control("POST", "/clock", {"advance_seconds": seconds})
        return result

    def close(self) -> None:
        self._control.close()
