"""GET / DELETE /api/v1/responses/{id}, its input items, and cancel: stored responses."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any, Literal

from litestar import Controller, Request, delete, get, post, route
from litestar.params import FromPath, QueryParameter

from emulator.errors import NotFound
from emulator.gateway import background, stored_responses
from emulator.gateway.answers import EVENT_STREAM
from emulator.gateway.records import InputItemList, ResponseDeleted, ResponseObject
from emulator.gateway.streaming import replayed_lines
from emulator.openapi_answers import Streamed
from emulator.web import (
    API_PREFIX,
    BEARER,
    CallerDep,
    Cursor,
    Reply,
    RuntimeDep,
    answers,
    auth_opt,
)

ItemLimit = Annotated[
    int, QueryParameter(ge=1, le=100, description="Items a page, 1-100 (default 20).")
]
ItemId = Annotated[str | None, QueryParameter(description="List the items after this item id.")]


class StoredResponsesController(Controller):
    path = f"{API_PREFIX}/responses/{{response_id:str}}"
    opt = auth_opt("api_key", "ai.gateway")
    security = BEARER
    tags = ["Gateway"]

    @get(
        "/",
        summary="A stored response as it was given (a background one as it is by now), or "
        "a background one's events again (`stream=true`)",
        responses=answers(ResponseObject, "The response (its events again, with `stream=true`)"),
        operation_class=Streamed,
    )
    async def retrieve(
        self,
        rt: RuntimeDep,
        caller: CallerDep,
        response_id: FromPath[str],
        stream: Annotated[bool, QueryParameter(description="Stream its events again.")] = False,
        starting_after: Annotated[
            int | None, QueryParameter(ge=-1, description="Stream the events after this one.")
        ] = None,
    ) -> Any:
        stored = stored_responses.fetch(rt, caller.account_id, response_id)
        if not stream:
            return background.view(stored, rt.clock.now())
        events = background.replay(stored, rt.clock.now(), starting_after)
        whole = stored.response
        lines = _sent(replayed_lines(events, whole["model"], whole.get("provider") or ""))
        headers = {"cache-control": "no-cache"}
        return Reply(headers=headers, media_type=EVENT_STREAM, stream=lines).response()

    @delete(
        "/",
        status_code=200,
        summary="Forget a stored response and its output items",
        responses=answers(ResponseDeleted, "The response forgotten"),
    )
    async def forget(
        self, rt: RuntimeDep, caller: CallerDep, response_id: FromPath[str]
    ) -> dict[str, Any]:
        return stored_responses.forget(rt, caller.account_id, response_id)

    @get(
        "/input_items",
        summary="The input items a stored response read: earlier turns', then its own",
        responses=answers(InputItemList, "A page of the items, in the order sent"),
    )
    async def input_items(
        self,
        rt: RuntimeDep,
        caller: CallerDep,
        response_id: FromPath[str],
        limit: ItemLimit = 20,
        order: Annotated[Literal["asc", "desc"], QueryParameter()] = "desc",
        after: ItemId = None,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        items = stored_responses.input_items(rt, caller.account_id, response_id)
        param = "after" if after else "cursor"  # the one the client sent, for the error
        return stored_responses.input_page(items, limit, order, after or cursor, param)

    @post(
        "/cancel",
        status_code=200,
        summary="Cancel a background response not done yet",
        responses=answers(ResponseObject, "The response, cancelled"),
    )
    async def cancel(
        self, rt: RuntimeDep, caller: CallerDep, response_id: FromPath[str]
    ) -> dict[str, Any]:
        return stored_responses.cancel(rt, caller.account_id, response_id)


@route(
    f"{API_PREFIX}/responses/compact",
    http_method=["GET", "POST", "DELETE"],
    opt=auth_opt("api_key", "ai.gateway"),
    include_in_schema=False,
)
async def compact(request: Request[Any, Any, Any], rt: RuntimeDep, caller: CallerDep) -> None:
    """OpenAI's response compaction (the SDK's `responses.compact`): a clear 404, where
    the path would otherwise read as a POST on a stored response (a 405). Its other
    methods are a stored response's, of id `compact`: none is."""
    if request.method == "POST":
        raise NotFound(
            "Response compaction (`POST /responses/compact`) is not emulated: send the "
            "conversation whole, or continue it with `previous_response_id`."
        )
    stored_responses.fetch(rt, caller.account_id, "compact")


async def _sent(lines: Iterator[bytes]) -> AsyncIterator[bytes]:
    """Made at once: sent from the event loop (litestar would read a plain iterator
    in a worker thread)."""
    for line in lines:
        yield line
