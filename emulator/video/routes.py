"""POST /generate/video and the generation records."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, JSONBody, QueryParameter
from pydantic import BaseModel

from emulator.auth.credentials import RouteAuth
from emulator.billing.generation_stats import generation_stats
from emulator.direct import DirectRequest, DirectRoute, serve_declared
from emulator.gateway.answers import Answer, respond
from emulator.jobs import service as jobs
from emulator.openapi_answers import refusals
from emulator.video import service
from emulator.video.records import Generation, GenerationList, GenerationStats
from emulator.video.schemas import GenerateVideoRequest
from emulator.web import (
    API_PREFIX,
    BEARER,
    Cursor,
    Reply,
    answers,
    caller_of,
    runtime_of,
)

if TYPE_CHECKING:
    from emulator.auth.credentials import Caller
    from emulator.runtime import Runtime
    from emulator.store.jobs import JobRow

JobsLimit = Annotated[
    int | None, QueryParameter(ge=1, le=100, description="Page size, 1 to 100 (default 20).")
]


def base_url(request: Request[Any, Any, Any]) -> str:
    return str(request.base_url).rstrip("/")


def created_once(
    request: Request[Any, Any, Any],
    endpoint: str,
    data: BaseModel,
    create: Callable[[Runtime, Caller, Any, str], dict[str, Any]],
) -> Response[Any]:
    """A job created and charged once per `Idempotency-Key` (SPEC section 5): a client
    retrying a timed-out call gets the first job back, not a second charge."""
    rt, caller = runtime_of(request), caller_of(request)
    body = data.model_dump(exclude_none=True)
    return respond(
        rt,
        caller.account_id,
        endpoint,
        request.headers.get("idempotency-key"),
        body,
        lambda: Answer({}, body=create(rt, caller, data, base_url(request))),
    ).response()


def job_list(
    request: Request[Any, Any, Any],
    kind: str,
    limit: int | None,
    cursor: str | None,
    render: Callable[[Runtime, JobRow, str], dict[str, Any]],
) -> dict[str, Any]:
    """A page of the caller's jobs of one kind, each rendered as its record."""
    rt, caller, base = runtime_of(request), caller_of(request), base_url(request)
    return jobs.list_jobs(rt, caller.account_id, kind, limit, cursor, lambda j: render(rt, j, base))


def get_generation(request: DirectRequest) -> Reply:
    """The poll clients run in a loop: served directly (`emulator.direct`)."""
    rt = request.rt
    job = jobs.read_job(rt, request.caller.account_id, request.param, "generation")
    return Reply(msgspec.json.encode(service.record(rt, job, request.base_url())))


VIDEO = RouteAuth("api_key", ("video",))
VIDEO_OR_GATEWAY = RouteAuth("api_key", ("video",), by_query=("id", ("ai.gateway",)))
StatsId = Annotated[
    str | None,
    QueryParameter(
        min_length=1,
        max_length=200,
        description="A gateway request's id (`gen_...`): its OpenRouter stats.",
    ),
]
GET_GENERATION = DirectRoute("GET", f"{API_PREFIX}/generation/{{}}", VIDEO, get_generation)


class VideoController(Controller):
    path = API_PREFIX
    opt = {"auth": VIDEO}
    security = BEARER
    tags = ["Video"]

    @post(
        "/generate/video",
        status_code=200,
        summary="Start a video generation (Idempotency-Key honoured); poll the record",
        responses={
            **answers(Generation, "The generation, queued"),
            **refusals(402, 404, 409, worded={404: "No video model of that name"}),
        },
    )
    async def generate(
        self, request: Request[Any, Any, Any], data: JSONBody[GenerateVideoRequest]
    ) -> Response[Any]:
        return created_once(request, "generate.video", data, service.generate)

    @get(
        "/generation/{generation_id:str}",
        summary="A generation record, as of now",
        responses=answers(Generation, "The generation record"),
    )
    async def get_generation(
        self, request: Request[Any, Any, Any], generation_id: FromPath[str]
    ) -> Response[Any]:
        return await serve_declared(request, GET_GENERATION)

    @get(
        "/generation",
        summary="The account's generation records, newest first; with `id`, OpenRouter's "
        "stats of one gateway request",
        opt={"auth": VIDEO_OR_GATEWAY},
        responses={
            **answers(GenerationList | GenerationStats, "Records, or one request's stats"),
            **refusals(404, worded={404: "No gateway request of that `id` in this account"}),
        },
    )
    async def list_generations(
        self,
        request: Request[Any, Any, Any],
        limit: JobsLimit = None,
        cursor: Cursor = None,
        id: StatsId = None,
    ) -> dict[str, Any]:
        # One path, two APIs: the interface's video records, and OpenRouter's
        # `GET /generation?id=` that its SDKs call for a request's cost.
        # Its scope (and so its rate count) follows `id`: `VIDEO_OR_GATEWAY`.
        rt, caller = runtime_of(request), caller_of(request)
        if id is not None:
            return generation_stats(rt, caller.account_id, id)
        return job_list(request, "generation", limit, cursor, service.record)
