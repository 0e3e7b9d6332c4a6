"""The control-plane helpers of an `EmulatorHandle`: fault rules, the request journal,
scripted replies, snapshots, the providers' status and jobs' outcomes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from emulator.faults.schemas import ActionIn, MatchIn

if TYPE_CHECKING:
    from emulator.testing.handles import EmulatorHandle

MATCH_FIELDS = frozenset(MatchIn.model_fields)
ACTION_FIELDS = frozenset(ActionIn.model_fields)


_RULE_FIELDS = ("match", "action", "times", "probability", "created_at")


def every(handle: EmulatorHandle, path: str, **query: Any) -> Iterator[dict[str, Any]]:
    """Each item of a control-plane list, its pages followed (1000 a page)."""
    query = {"limit": 1000, **query}
    while True:
        page = handle.control("GET", f"{path}?{urlencode(query)}")
        yield from page["data"]
        if not page["has_more"]:
            return
        query["cursor"] = page["next_cursor"]


class FaultRule:
    """A fault rule on the emulator; as a context manager it removes itself on exit.

    Only itself: after a reset, rule ids start again, so another rule may have its id;
    a rule of another content (or made after a reset through this handle) is left."""

    def __init__(self, handle: EmulatorHandle, data: dict[str, Any]) -> None:
        self._handle = handle
        self.id: str = data["id"]
        self.data = data  # as it was made: `hits` is the live count
        self._final_hits: int | None = None
        self._resets = handle.resets  # the resets through the handle when it was made

    @property
    def hits(self) -> int:
        """How many times it fired so far (read from the emulator; once the rule is
        removed, here or by `faults.clear()` or `reset()`, as many as when it was)."""
        if self._final_hits is not None:
            return self._final_hits
        found = self._current()
        if found is None:
            raise LookupError(
                f"The fault rule {self.id} is gone (removed, or reset by another client): "
                "its hits are unknown."
            )
        return int(found["hits"])

    def _current(self) -> dict[str, Any] | None:
        """The rule as the emulator has it now, if it is still this one."""
        found = self._handle._control.get(f"/faults/{self.id}")
        return self._if_mine(found.json() if found.status_code == 200 else None)

    def _if_mine(self, data: dict[str, Any] | None) -> dict[str, Any] | None:
        """`data` (a rule the emulator has under this id), if it is this rule."""
        if data is None or self._handle.resets != self._resets:
            return None
        return data if all(data.get(k) == self.data.get(k) for k in _RULE_FIELDS) else None

    def settle(self, hits: int) -> None:
        """Removed elsewhere (a clear, a reset): `hits` is its count then."""
        if self._final_hits is None:
            self._final_hits = hits

    def remove(self) -> None:
        if self._final_hits is not None:
            return
        found = self._current()
        self._final_hits = int(found["hits"]) if found is not None else 0
        if found is not None:
            self._handle._control.delete(f"/faults/{self.id}")

    def __enter__(self) -> FaultRule:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Faults:
    """`emulator.faults.add(status=503, path="/api/v1/chat/*", times=1)`: match fields
    and action fields may be given flat; `match=` and `action=` dicts work too."""

    def __init__(self, handle: EmulatorHandle) -> None:
        self._handle = handle
        self._made: list[FaultRule] = []  # the rules made here, to settle on a clear

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
        unknown = set(flat_action) - ACTION_FIELDS
        if unknown:  # a misspelt match field would read as an action field
            raise TypeError(
                f"faults.add() got unknown fields {sorted(unknown)}: match fields are "
                f"{sorted(MATCH_FIELDS)}, action fields {sorted(ACTION_FIELDS)}."
            )
        body: dict[str, Any] = {
            "match": {**(match or {}), **flat_match},
            "action": {**(action or {}), **flat_action},
        }
        if times is not None:
            body["times"] = times
        if probability is not None:
            body["probability"] = probability
        rule = FaultRule(self._handle, self._handle.control("POST", "/faults", body))
        self._made = [r for r in self._made if r._final_hits is None] + [rule]
        return rule

    def list(self) -> list[dict[str, Any]]:
        """Every rule, in the order they are tried (the pages followed)."""
        return list(every(self._handle, "/faults"))

    def clear(self) -> None:
        self.settle_all()
        self._handle.control("DELETE", "/faults")

    def settle_all(self) -> None:
        """Before every rule goes (a clear, a reset): each rule made here keeps its count."""
        if not self._made:
            return
        listed = {rule["id"]: rule for rule in self.list()}
        for rule in self._made:
            mine = rule._if_mine(listed.get(rule.id))
            if mine is not None:
                rule.settle(int(mine["hits"]))
        self._made = []


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
        filters.pop("limit", None)  # one, the newest
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
        result: dict[str, Any] = self._handle.control("POST", f"/snapshots/{_named(name)}/restore")
        return result

    def delete(self, name: str) -> None:
        self._handle.control("DELETE", f"/snapshots/{_named(name)}")

    def exists(self, name: str) -> bool:
        return any(snapshot["name"] == name for snapshot in every(self._handle, "/snapshots"))

    @contextmanager
    def saved(self, name: str) -> Iterator[dict[str, Any]]:
        """`with emulator.snapshots.saved("clean"):` the state comes back afterwards (a
        snapshot of its own, deleted then: a name already saved is refused, not lost)."""
        if self.exists(name):
            raise ValueError(
                f"A snapshot {name!r} exists already: saved() would overwrite it and delete "
                "it afterwards. Give the block a name of its own."
            )
        snapshot = self.save(name)
        try:
            yield snapshot
        finally:
            self.restore(name)
            self.delete(name)


def _named(name: str) -> str:
    if not name:
        raise ValueError("a snapshot's name must not be empty")
    return name


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
