"""/_emulator/requests: the request journal, filterable, for verification."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, delete, get
from litestar.params import FromPath, QueryParameter

from emulator.control.routes import ADMIN
from emulator.errors import NotFound
from emulator.journal.book import Filters
from emulator.paging import check_limit
from emulator.web import RuntimeDep, auth_opt

Text = Annotated[str | None, QueryParameter(max_length=500)]


class JournalController(Controller):
    path = "/_emulator/requests"
    tags = ["Control plane"]
    opt = auth_opt("admin")
    security = ADMIN

    @get("/", summary="Recent requests to /api/*, newest first, filterable")
    async def list_requests(
        self,
        rt: RuntimeDep,
        path: Annotated[
            str | None, QueryParameter(description="A glob, e.g. /api/v1/chat/*")
        ] = None,
        method: Text = None,
        status: Annotated[int | None, QueryParameter(ge=100, le=599)] = None,
        key_id: Text = None,
        account_id: Text = None,
        since: Annotated[str | None, QueryParameter(description="Virtual-clock ISO time")] = None,
        until: Annotated[str | None, QueryParameter(description="Virtual-clock ISO time")] = None,
        limit: Annotated[int | None, QueryParameter(ge=1, le=1000)] = None,
    ) -> dict[str, Any]:
        filters = Filters(
            path=path,
            method=method.upper() if method else None,
            status=status,
            key_id=key_id,
            account_id=account_id,
            since=since,
            until=until,
        )
        size = check_limit(limit, default=100, maximum=1000)
        entries = rt.journal.query(filters, size)
        return {
            "object": "list",
            "data": [entry.summary() for entry in entries],
            "has_more": False,
            "next_cursor": None,
        }

    @get("/{request_id:str}", summary="One request with its bodies (secrets redacted)")
    async def get_request(self, rt: RuntimeDep, request_id: FromPath[str]) -> dict[str, Any]:
        entry = rt.journal.get(request_id)
        if entry is None:
            raise NotFound(
                f"No request {request_id!r} in the journal (it keeps the last {rt.journal.size}).",
                param="id",
            )
        return entry.detail()

    @delete("/", status_code=200, summary="Empty the journal")
    async def clear(self, rt: RuntimeDep) -> dict[str, Any]:
        return {"object": "list", "deleted": rt.journal.clear()}
