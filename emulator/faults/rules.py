"""Fault rules: what they match, when they fire, what they do; and the book that holds them.

A rule matches a request on any of path (glob), method, model, provider, API key
and account; fires on the next `times` matches, with a seeded `probability`, or
until removed; and its action does any of, each at its point of the request:

    delay_ms          before the handler: the answer is delayed
    status (+ type, code, message, retry_after)
                      before the handler: the request is answered with this error
    fail_route        on each provider route: the route fails (fallbacks happen and
                      are recorded); `times` counts route attempts
    cut_stream_after  in a stream: it stops after N chunks with an error event
    fail_job          a job created by the request fails (and is refunded), or a
                      background response (its charge stands)

The book lives in memory (rules are test set-up, not state: a reset clears
them, snapshots do not carry them) and costs nothing when it is empty.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emulator.ids import Ids


# What an action can do at each point of a request; a rule's action may do several.
EFFECTS: dict[str, tuple[str, ...]] = {
    "request": ("delay", "error"),
    "route": ("fail_route",),
    "stream": ("cut",),
    "job": ("fail_job",),
}


@dataclass(slots=True)  # hot: not frozen (made per request and per route)
class Subject:
    """What a rule can match of a request, as far as it is known at a point."""

    path: str
    method: str
    account_id: str | None = None
    key_id: str | None = None
    key_hash: str | None = None
    model: str | None = None
    provider: str | None = None

    def at(self, model: str | None, provider: str | None = None) -> Subject:
        """The same request at a provider route (or a job) of `model`."""
        return Subject(
            self.path, self.method, self.account_id, self.key_id, self.key_hash, model, provider
        )


@functools.cache
def _glob(pattern: str) -> Callable[[str], re.Match[str] | None]:
    """A path glob (`/api/v1/chat/*`), compiled once: `fnmatchcase` costs a cache lookup
    and a call more each time."""
    return re.compile(fnmatch.translate(pattern)).match


@dataclass(frozen=True)
class Match:
    path: str | None = None  # a glob: /api/v1/chat/*
    method: str | None = None
    model: str | None = None
    provider: str | None = None
    key_id: str | None = None
    key_hash: str | None = None  # of a raw `api_key` given when the rule was made
    account_id: str | None = None

    def accepts(self, s: Subject) -> bool:
        return self.accepts_request(s) and self.accepts_route(s)

    def accepts_request(self, s: Subject) -> bool:
        """What stays the same at every point of one request; the glob last, as the one
        comparison that costs."""
        return (
            (self.account_id is None or s.account_id == self.account_id)
            and (self.key_id is None or s.key_id == self.key_id)
            and (self.method is None or s.method == self.method)
            and (self.key_hash is None or s.key_hash == self.key_hash)
            and (self.path is None or _glob(self.path)(s.path) is not None)
        )

    def accepts_route(self, s: Subject) -> bool:
        """What a request's points may differ in: the model and the provider route."""
        return (self.model is None or s.model == self.model) and (
            self.provider is None or s.provider == self.provider
        )

    @property
    def needs_model(self) -> bool:
        return self.model is not None


@dataclass(frozen=True)
class Action:
    """SPEC section 10's action: any of an error answer, a delay, a failed route, a cut."""

    status: int | None = None
    type: str | None = None  # the error's `type` (default: the status's usual one)
    code: str | None = None
    message: str | None = None
    retry_after: int | None = None  # seconds; a 429 gets 1 unless told
    delay_ms: int = 0
    fail_route: bool = False
    cut_stream_after: int | None = None
    fail_job: bool = False

    @functools.cached_property
    def effects(self) -> frozenset[str]:
        found = set()
        if self.delay_ms:
            found.add("delay")
        if self.status is not None:
            found.add("error")
        if self.fail_route:
            found.add("fail_route")
        if self.cut_stream_after is not None:
            found.add("cut")
        if self.fail_job:
            found.add("fail_job")
        return frozenset(found)

    def acts_at(self, point: str) -> bool:
        return not self.effects.isdisjoint(EFFECTS[point])

    @functools.cached_property
    def points(self) -> int:
        """At how many points it acts: more than one, it fires once a request for all."""
        return sum(1 for point in EFFECTS if self.acts_at(point))

    def wire(self) -> dict[str, Any]:
        cached = ("effects", "points")  # cached properties, in __dict__ once read
        fields = {k: v for k, v in self.__dict__.items() if v is not None and k not in cached}
        return {
            k: v for k, v in fields.items() if v is not False and not (k == "delay_ms" and not v)
        }


@dataclass
class FaultRule:
    id: str
    match: Match
    action: Action
    times: int | None = None  # fire on the next N matches...
    probability: float | None = None  # ...or with this (seeded) probability...
    created_at: str = ""  # ...or, with neither, until removed
    hits: int = 0  # times it fired
    matched: int = 0  # times it matched (fired or not)
    seq: int = 0  # its place among the rules added: what a list's cursor keeps

    @property
    def draw_key(self) -> str:
        """What a `probability` draw is keyed by, with the match's count: what the rule
        does and to which routes, not its id or the tenant it names, which depend on
        what ran before it. The same rule fires on the same matches in any test order."""
        m = self.match
        return repr((m.path, m.method, m.model, m.provider, self.action, self.probability))

    @property
    def spent(self) -> bool:
        return self.times is not None and self.hits >= self.times

    def wire(self) -> dict[str, Any]:
        match = {k: v for k, v in self.match.__dict__.items() if v is not None}
        if match.pop("key_hash", None):
            match["api_key"] = "(redacted)"
        return {
            "object": "fault_rule",
            "id": self.id,
            "match": match,
            "action": self.action.wire(),
            "times": self.times,
            "probability": self.probability,
            "hits": self.hits,
            "matched": self.matched,
            "remaining": None if self.times is None else max(self.times - self.hits, 0),
            "created_at": self.created_at,
        }


class FaultBook:
    """The rules in force, in the order they were added; the first that fires wins."""

    def __init__(self, ids: Ids) -> None:
        self.ids = ids
        self.rules: list[FaultRule] = []
        self._at: dict[str, list[FaultRule]] = {}  # the rules that act at each point
        self._needs_model = False
        self._lock = threading.Lock()
        self._count = 0

    def _index(self) -> None:
        self._at = {p: [r for r in self.rules if r.action.acts_at(p)] for p in EFFECTS}
        self._needs_model = any(r.match.needs_model for r in self._at["request"])

    def add(self, match: Match, action: Action, times: int | None, probability: float | None,
            now: str) -> FaultRule:  # fmt: skip
        with self._lock:
            self._count += 1
            rule = FaultRule(self.ids.make("fault", self._count), match, action, times,
                             probability, now, seq=self._count)  # fmt: skip
            self.rules.append(rule)
            self._index()
            return rule

    def get(self, rule_id: str) -> FaultRule | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def remove(self, rule_id: str) -> bool:
        with self._lock:
            before = len(self.rules)
            self.rules = [r for r in self.rules if r.id != rule_id]
            self._index()
            return len(self.rules) < before

    def clear(self) -> int:
        """Remove every rule; ids go on from the last given, so a handle kept from before
        (the pytest plugin's `FaultRule`) never names a rule added after."""
        with self._lock:
            count, self.rules = len(self.rules), []
            self._index()
            return count

    def reset(self) -> None:
        """A fresh start (a reset): no rules, and ids start again, as the state's do."""
        with self._lock:
            self.rules, self._count = [], 0
            self._index()

    def needs_model(self) -> bool:
        """Whether a rule acting before the handler matches on the model (read from the body)."""
        return self._needs_model

    def give_back(self, rule: FaultRule) -> None:
        """A hit the rule's only effect never made (a stream that ended before its
        cut): it is not counted, and a rule of `times` stays for the next match."""
        if rule.action.points > 1:
            return  # its other effect (a delay) acted: the hit stands
        with self._lock:
            rule.hits = max(rule.hits - 1, 0)

    def at(self, point: str) -> list[FaultRule]:
        """The rules that act at a point, first added first."""
        return self._at.get(point, [])

    def fire(
        self,
        point: str,
        subject: Subject,
        open_effects: set[str],
        rules: list[FaultRule],
        decided: dict[str, bool],
    ) -> list[Action]:
        """The actions of `rules` (acting at this point, and accepting the request) that
        fire for `subject`, first added first; a rule fires only if it does something
        still open (then that is closed): two error rules never both count a hit for one
        answer. A rule acting at several points (a delay and a cut) is one hit, and one
        draw, for the request: `decided` (per request) keeps whether it fired, and then
        its other effects act too, even if that hit spent it; one that fails a job
        counts its hit at the job."""
        if not rules:
            return []
        fired: list[Action] = []
        with self._lock:
            for rule in rules:
                known = decided.get(rule.id)
                if (known is False or (known is None and rule.spent)) or not (
                    rule.match.accepts_route(subject)
                ):
                    continue
                effects = open_effects.intersection(rule.action.effects)
                if not effects:
                    continue
                # A rule that fails a job counts its hit where the job is made: a request
                # refused before (a 402) is delayed by it but does not use it up.
                job_hit = rule.action.fail_job and rule.action.points > 1
                if known is None:
                    rule.matched += 1
                    if rule.probability is not None:
                        draw = self.ids.rng("fault", rule.draw_key, rule.matched).random()
                        if draw >= rule.probability:
                            if rule.action.points > 1:
                                decided[rule.id] = False
                            continue
                    if not job_hit or point == "job":
                        rule.hits += 1
                    if rule.action.points > 1:
                        decided[rule.id] = True
                elif job_hit and point == "job":
                    if rule.spent:  # spent meanwhile by a request that made its job first
                        continue
                    rule.hits += 1
                open_effects -= effects
                fired.append(rule.action)
        return fired
