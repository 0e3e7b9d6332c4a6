"""The control-plane helpers of an `EmulatorHandle`: fault rules, the request journal,
scripted replies, snapshots, the providers' status and jobs' outcomes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

if TYPE_CHECKING:
    from emulator.testing.handles import EmulatorHandle

MATCH_FIELDS = {"path", "method", "model", "provider", "key_id", "api_key", "account_id"}


class FaultRule:
    """A fault rule on the emulator; as a context manager it removes itself on exit."""

    def __init__(self, handle: EmulatorHandle, data: dict[str, Any]) -> None:
        self._handle = handle
        self.id: str = data["id"]
        self.data = data  # as it was made: `hits` is the live count
        self._final_hits: int | None = None

    @property
    def hits(self) -> int:
        """How many times it fired so far (read from the emulator; once the rule is
        removed, as many as when it was)."""
        if self._final_hits is not None:
            return self._final_hits
        return int(self._handle.control("GET", f"/faults/{self.id}")["hits"])

    def remove(self) -> None:
        if self._final_hits is not None:
            return
        found = self._handle._control.get(f"/faults/{self.id}")
        self._final_hits = int(found.json()["hits"]) if found.status_code == 200 else 0
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
        """Every rule, in the order they are tried (the pages followed)."""
        found: list[dict[str, Any]] = []
        path = "/faults?limit=1000"
        while True:
            page = self._handle.control("GET", path)
            found += page["data"]
            if not page["has_more"]:
                return found
            path = f"/faults?{urlencode({'limit': 1000, 'cursor': page['next_cursor']})}"

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
            page = self._handle.control("GET", f"/requests?{urlencode(params)}")
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


class Providers:
    """The fake providers' status: `with emulator.providers.down("openai"):` its routes
    fail (fallbacks happen), and afterwards it is as it was, even if the test fails."""

    def __init__(self, handle: EmulatorHandle) -> None:
        self._handle = handle

    def set(self, name: str, status: str, latency_ms: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"status": status}
        if latency_ms is not None:
            body["latency_ms"] = latency_ms
        result: dict[str, Any] = self._handle.control("POST", f"/providers/{name}", body)
        return result

    @contextmanager
    def down(self, name: str) -> Iterator[dict[str, Any]]:
        with self._status(name, "down") as provider:
            yield provider

    @contextmanager
    def slow(self, name: str) -> Iterator[dict[str, Any]]:
        with self._status(name, "slow") as provider:
            yield provider

    def get(self, name: str) -> dict[str, Any]:
        listed = self._handle.control("GET", "/providers")["data"]
        for provider in listed:
            if provider["name"] == name:
                found: dict[str, Any] = provider
                return found
        names = ", ".join(p["name"] for p in listed)
        raise LookupError(f"No provider {name!r}; the providers are {names}.")

    @contextmanager
    def _status(self, name: str, status: str) -> Iterator[dict[str, Any]]:
        before = self.get(name)
        try:
            yield self.set(name, status)
        finally:
            self.set(name, before["status"], before["latency_ms"])


class Jobs:
    """Force a running job's outcome now: `emulator.jobs.complete(job_id)`."""

    def __init__(self, handle: EmulatorHandle) -> None:
        self._handle = handle

    def complete(self, job_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._handle.control("POST", f"/jobs/{job_id}/complete")
        return result

    def fail(self, job_id: str, code: str | None = None, message: str | None = None) -> Any:
        body = {k: v for k, v in (("code", code), ("message", message)) if v is not None}
        return self._handle.control("POST", f"/jobs/{job_id}/fail", body)
