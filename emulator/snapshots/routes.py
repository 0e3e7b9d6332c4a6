"""/_emulator/snapshots: save, list, restore and delete named snapshots of the state."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, delete, get, post
from litestar.params import FromPath, JSONBody
from pydantic import Field

from emulator.bodies import RequestBody
from emulator.control.records import SnapshotDeleted, SnapshotList, SnapshotOut, SnapshotRestored
from emulator.control.routes import ADMIN, ControlLimit
from emulator.paging import page_in_sequence
from emulator.snapshots.service import NAME, restore_from
from emulator.web import Cursor, RuntimeDep, answers, auth_opt


class SnapshotCreate(RequestBody):
    name: Annotated[str, Field(pattern=NAME.pattern)]


class SnapshotsController(Controller):
    path = "/_emulator/snapshots"
    tags = ["Control plane"]
    opt = auth_opt("admin")
    security = ADMIN

    @post(
        "/",
        status_code=201,
        summary="Save the whole state under a name (replaces that name)",
        responses=answers(SnapshotOut, "The snapshot saved", 201),
    )
    async def save(self, rt: RuntimeDep, data: JSONBody[SnapshotCreate]) -> dict[str, Any]:
        return rt.snapshots.save(rt, data.name).wire()

    @get(
        "/",
        summary="The saved snapshots",
        responses=answers(SnapshotList, "A page of snapshots, in the order saved"),
    )
    async def list_snapshots(
        self, rt: RuntimeDep, limit: ControlLimit = None, cursor: Cursor = None
    ) -> dict[str, Any]:
        saved = rt.snapshots.list()  # in the order they were saved
        return page_in_sequence(
            saved,
            limit,
            cursor,
            lambda s: s.seq,
            lambda s: s.wire(),
            default=100,
            maximum=1000,
            listing="snapshots",
        )

    @post(
        "/{name:str}/restore",
        status_code=200,
        summary="Put the state back as it was saved",
        responses=answers(SnapshotRestored, "The snapshot restored, and the clock now"),
    )
    async def restore(self, rt: RuntimeDep, name: FromPath[str]) -> dict[str, Any]:
        snapshot = rt.snapshots.get(name)
        restore_from(rt, snapshot.conn)
        return {**snapshot.wire(), "restored": True, "clock": rt.clock.now_iso()}

    @delete(
        "/{name:str}",
        status_code=200,
        summary="Forget a snapshot",
        responses=answers(SnapshotDeleted, "The snapshot forgotten"),
    )
    async def remove(self, rt: RuntimeDep, name: FromPath[str]) -> dict[str, Any]:
        rt.snapshots.delete(name)
        return {"object": "snapshot", "name": name, "deleted": True}
