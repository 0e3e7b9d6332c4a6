"""The control plane's fault rules: add, list, remove."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.errors import NotFound, ValidationFailed
from emulator.faults.rules import Action, Match
from emulator.faults.schemas import FaultCreate, MatchIn
from emulator.gateway.routing import listed, provider_slugs
from emulator.ids import hash_secret
from emulator.paging import page_in_sequence

if TYPE_CHECKING:
    from emulator.runtime import Runtime


def add_rule(rt: Runtime, body: FaultCreate) -> dict[str, Any]:
    m, a = body.match or MatchIn(), body.action
    match = Match(
        path=m.path,
        method=m.method.upper() if m.method else None,
        model=m.model,
        provider=provider_slug(rt, m.provider, "match.provider") if m.provider else None,
        key_id=m.key_id,
        key_hash=hash_secret(m.api_key) if m.api_key else None,
        account_id=m.account_id,
    )
    action = Action(
        status=a.status,
        type=a.type,
        code=a.code,
        message=a.message,
        retry_after=a.retry_after,
        delay_ms=a.delay_ms,
        fail_route=a.fail_route,
        cut_stream_after=a.cut_stream_after,
        fail_job=a.fail_job,
    )
    rule = rt.faults.add(match, action, body.times, body.probability, rt.clock.now_iso())
    return rule.wire()


def provider_slug(rt: Runtime, name: str, param: str) -> str:
    """The slug of the provider `name` names, as routing preferences take it (its slug
    or its display name, in any case); 422 for a name that is no provider's, as a rule
    on it would never fire."""
    slugs = provider_slugs(rt.catalog.view())
    slug = slugs.get(name.lower())
    if slug is None:
        raise ValidationFailed(
            f"No provider {name!r}: name one by its slug or display name ({listed(slugs)}).",
            param=param,
        )
    return slug


def list_rules(rt: Runtime, limit: int | None, cursor: str | None) -> dict[str, Any]:
    """In the order they are tried."""
    rules = list(rt.faults.rules)
    return page_in_sequence(
        rules,
        limit,
        cursor,
        lambda r: r.seq,
        lambda r: r.wire(),
        default=100,
        maximum=1000,
        listing="faults",
    )


def get_rule(rt: Runtime, rule_id: str) -> dict[str, Any]:
    rule = rt.faults.get(rule_id)
    if rule is None:
        raise NotFound(f"No fault rule {rule_id!r}.", param="id")
    return rule.wire()


def remove_rule(rt: Runtime, rule_id: str) -> dict[str, Any]:
    if not rt.faults.remove(rule_id):
        raise NotFound(f"No fault rule {rule_id!r}.", param="id")
    return {"id": rule_id, "object": "fault_rule", "deleted": True}


def clear_rules(rt: Runtime) -> dict[str, Any]:
    return {"object": "list", "deleted": rt.faults.clear()}
