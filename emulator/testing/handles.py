"""What the pytest fixtures hand a test: the running emulator and an isolated tenant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


class EmulatorHandle:
    """A running emulator: its URLs and its control plane."""

    def __init__(self, url: str, admin_token: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.base_url = f"{self.url}/api/v1"
        headers = {"X-Emulator-Admin-Token": admin_token} if admin_token else {}
        self._control = httpx.Client(base_url=f"{self.url}/_emulator", headers=headers)

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

    def clock(self) -> dict[str, Any]:
        result: dict[str, Any] = self.control("GET", "/clock")
        return result

    def advance(self, seconds: float) -> dict[str, Any]:
        """Move the virtual clock forward (spend windows, rate limits, jobs follow it)."""
        result: dict[str, Any] = self.control("POST", "/clock", {"advance_seconds": seconds})
        return result

    def close(self) -> None:
        self._control.close()
