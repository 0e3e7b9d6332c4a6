"""/_emulator/faults: fault rules, with their hit counters."""

from __future__ import annotations

from typing import Any

from litestar import Controller, delete, get, post
from litestar.params import FromPath, JSONBody

from emulator.control.records import Cleared, Deleted, FaultRuleList, FaultRuleOut
from emulator.control.routes import ADMIN, ControlLimit
from emulator.faults import service
from emulator.faults.schemas import FaultCreate
from emulator.web import Cursor, RuntimeDep, answers, auth_opt


class FaultsController(Controller):
    path = "/_emulator/faults"
    tags = ["Control plane"]
    opt = auth_opt("admin")
    security = ADMIN

    @get(
        "/",
        summary="The fault rules in force, with their hit counters",
        responses=answers(FaultRuleList, "A page of rules, in the order they are tried"),
    )
    async def list_rules(
        self, rt: RuntimeDep, limit: ControlLimit = None, cursor: Cursor = None
    ) -> dict[str, Any]:
        return service.list_rules(rt, limit, cursor)

    @post(
        "/",
        status_code=201,
        summary="Add a fault rule: match, action, times or probability",
        responses=answers(FaultRuleOut, "The rule added", 201),
    )
    async def add_rule(self, rt: RuntimeDep, data: JSONBody[FaultCreate]) -> dict[str, Any]:
        return service.add_rule(rt, data)

    @delete(
        "/",
        status_code=200,
        summary="Remove every fault rule",
        responses=answers(Cleared, "How many rules there were"),
    )
    async def clear_rules(self, rt: RuntimeDep) -> dict[str, Any]:
        return service.clear_rules(rt)

    @get(
        "/{rule_id:str}",
        summary="One fault rule and its counters",
        responses=answers(FaultRuleOut, "The rule"),
    )
    async def get_rule(self, rt: RuntimeDep, rule_id: FromPath[str]) -> dict[str, Any]:
        return service.get_rule(rt, rule_id)

    @delete(
        "/{rule_id:str}",
        status_code=200,
        summary="Remove one fault rule",
        responses=answers(Deleted, "The rule removed"),
    )
    async def remove_rule(self, rt: RuntimeDep, rule_id: FromPath[str]) -> dict[str, Any]:
        return service.remove_rule(rt, rule_id)
