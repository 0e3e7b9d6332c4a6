"""/_emulator/replies: the scripted replies in force, replaced at run time.

They live in the store beside the catalog (platform `replies`), as the fixtures
put them there, so a reset brings back the fixtures' rules and a snapshot keeps
the ones in force. A change rebuilds the catalog view, which serves them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emulator.control.schemas import RepliesSet
from emulator.store.meta import count_catalog_change, get_platform, set_platform

if TYPE_CHECKING:
    from emulator.runtime import Runtime


def current(rt: Runtime) -> dict[str, Any]:
    with rt.store.read() as conn:
        return {"replies": get_platform(conn, "replies") or []}


def replace(rt: Runtime, body: RepliesSet) -> dict[str, Any]:
    """Put these rules in force (checked as the fixtures' are) until the next reset."""
    rules = [rule.stored() for rule in body.replies]
    with rt.store.write() as conn:
        set_platform(conn, "replies", rules)
        count_catalog_change(conn)
    rt.catalog.invalidate()
    return {"replies": rules}
