"""/_emulator/requests: the request journal, filterable, for verification."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, delete, get
from litestar.params import FromPath, QueryParameter

from emulator.control.records import Cleared, JournalEntryDetail, JournalList
from emulator.control.routes import ADMIN
from emulator.errors import NotFound
from emulator.journal import service
from emulator.journal.book import Filters
from emulator.web import Cursor, RuntimeDep, answers, auth_opt

Text = Annotated[str | None, QueryParameter(max_length=500)]
Instant = Annotated[
    str | None,
    QueryParameter(
        max_length=100, description="Virtual-clock ISO-8601 instant, inclusive; any offset"
    ),
]
Limit = Annotated[
    int | None,
    QueryParameter(
        ge=1,
        le=service.MAX_LIMIT,
        description=f"Items a page, 1-{service.MAX_LIMIT} (default {service.DEFAULT_LIMIT}).",
    ),
]


class JournalController(Controller):
    path = "/_emulator/requests"
    tags = ["Control plane"]
    opt = auth_opt("admin")
    security = ADMIN

    @get(
        "/",
        summary="Recent requests to /api/*, newest first, filterable",
        responses=answers(JournalList, "A page of requests, newest first"),
    )
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
        since: Instant = None,
        until: Instant = None,
        limit: Limit = None,
        cursor: Cursor = None,
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
        return service.list_entries(rt.journal, filters, limit, cursor)

    @get(
        "/{request_id:str}",
        summary="One request with its bodies (secrets redacted)",
        responses=answers(JournalEntryDetail, "The request, its headers and bodies"),
    )
    async def get_request(self, rt: RuntimeDep, request_id: FromPath[str]) -> dict[str, Any]:
        entry = rt.journal.get(request_id)
        if entry is None:
            raise NotFound(
                f"No request {request_id!r} in the journal (it keeps the last {rt.journal.size}).",
                param="id",
            )
        return entry.detail()

    @delete(
        "/",
        status_code=200,
        summary="Empty the journal",
        responses=answers(Cleared, "How many requests it held"),
    )
    async def clear(self, rt: RuntimeDep) -> dict[str, Any]:
        return {"object": "list", "deleted": rt.journal.clear()}
