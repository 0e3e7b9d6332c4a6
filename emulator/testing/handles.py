"""What the pytest fixtures hand a test: the running emulator and an isolated tenant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from emulator.testing.control_helpers import (
    FaultRule,
    Faults,
    Jobs,
    Journal,
    Providers,
    Replies,
    Snapshots,
    every,
)

__all__ = ["ControlError", "EmulatorHandle", "FaultRule", "Tenant"]


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

    def openai(self, **kwargs: Any) -> Any:
        """An `openai.OpenAI` client with this tenant's key (the `openai` package needed).
        `max_retries` is 0 unless given: on the manual clock a 429's `Retry-After` is
        virtual time, which the SDK would sleep out in real time for nothing."""
        import openai

        kwargs.setdefault("max_retries", 0)
        return openai.OpenAI(api_key=self.api_key, base_url=self.base_url, **kwargs)

    def create_key(self, **body: Any) -> dict[str, Any]:
        """POST /keys with this tenant's user token (`name` defaults to "test"): the key
        with its secret in `key`; e.g. `spend_limit_micros=100, spend_reset_interval=
        "daily"`, or `scopes=["video"], product="video"`."""
        body.setdefault("name", "test")
        headers = {"Authorization": f"Bearer {self.user_token}"}
        with httpx.Client(base_url=self.base_url, headers=headers) as keys:
            created = keys.post("/keys", json=body)
        _raise_for(created, "POST", "/api/v1/keys")
        result: dict[str, Any] = created.json()
        return result


class ControlError(httpx.HTTPStatusError):
    """A control-plane call the emulator refused, with its error message (not just the
    status): e.g. "Invalid field `action.tiems`: Extra inputs are not permitted"."""


def _raise_for(response: httpx.Response, method: str, path: str) -> None:
    if response.is_success:
        return
    try:
        error = response.json()["error"]
        said = f"{error.get('code')}: {error.get('message')}"
    except (ValueError, KeyError, TypeError, AttributeError):
        said = response.text[:500]
    raise ControlError(
        f"{method} {path} answered {response.status_code} {said}",
        request=response.request,
        response=response,
    )


class EmulatorHandle:
    """A running emulator: its URLs and its control plane, with helpers for faults,
    the request journal, snapshots and the clock."""

    def __init__(self, url: str, admin_token: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.base_url = f"{self.url}/api/v1"
        headers = {"X-Emulator-Admin-Token": admin_token} if admin_token else {}
        self._control = httpx.Client(base_url=f"{self.url}/_emulator", headers=headers)
        self.resets = 0  # resets through this handle (a fault rule's id starts again)
        self.faults = Faults(self)
        self.journal = Journal(self)
        self.snapshots = Snapshots(self)
        self.replies = Replies(self)
        self.providers = Providers(self)
        self.jobs = Jobs(self)

    def control(self, method: str, path: str, json: Any = None) -> Any:
        """Any control-plane call; a refusal raises `ControlError` with its message."""
        response = self._control.request(method, path, json=json)
        _raise_for(response, method, f"/_emulator{path}")
        return response.json()

    def health(self) -> dict[str, Any]:
        result: dict[str, Any] = self.control("GET", "/health")
        return result

    def reset(self) -> None:
        self.faults.settle_all()  # each rule made here keeps its count
        self.control("POST", "/reset")
        self.resets += 1  # rule ids start again: the rules made before are gone

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
        return list(every(self, f"/accounts/{account_id}/ledger", **filters))

    def clock(self) -> dict[str, Any]:
        result: dict[str, Any] = self.control("GET", "/clock")
        return result

    def advance(self, seconds: float) -> dict[str, Any]:
        """Move the virtual clock forward (spend windows, rate limits, jobs follow it)."""
        result: dict[str, Any] = self.control("POST", "/clock", {"advance_seconds": seconds})
        return result

    def close(self) -> None:
        self._control.close()
