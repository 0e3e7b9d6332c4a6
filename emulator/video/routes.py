"""POST /generate/video and the generation records."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, JSONBody, QueryParameter

from emulator.gateway.answers import Answer, respond
from emulator.jobs import service as jobs
from emulator.video import service
from emulator.video.schemas import GenerateVideoRequest
from emulator.web import API_PREFIX, BEARER, Cursor, auth_opt, caller_of, runtime_of

if TYPE_CHECKING:
    from emulator.runtime import Runtime
    from emulator.store.jobs import JobRow

JobsLimit = Annotated[
    int | None, QueryParameter(ge=1, le=100, description="Page size, 1 to 100 (default 20).")
]


def base_url(request: Request[Any, Any, Any]) -> str:
    return str(request.base_url).rstrip("/")


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


class VideoController(Controller):
    path = API_PREFIX
    opt = auth_opt("api_key", "video")
    security = BEARER
    tags = ["Video"]

    @post(
        "/generate/video",
        status_code=200,
        summary="Start a video generation (Idempotency-Key honoured); poll the record",
    )
    async def generate(
        self, request: Request[Any, Any, Any], data: JSONBody[GenerateVideoRequest]
    ) -> Response[Any]:
        rt, caller = runtime_of(request), caller_of(request)
        body = data.model_dump(exclude_none=True)
        base = base_url(request)
        return respond(
            rt,
            caller.account_id,
            "generate.video",
            request.headers.get("idempotency-key"),
            body,
            lambda: Answer({}, body=service.generate(rt, caller, data, base)),
        )

    @get("/generation/{generation_id:str}", summary="A generation record, as of now")
    async def get_generation(
        self, request: Request[Any, Any, Any], generation_id: FromPath[str]
    ) -> dict[str, Any]:
        rt, caller = runtime_of(request), caller_of(request)
        job = jobs.read_job(rt, caller.account_id, generation_id, "generation")
        return service.record(rt, job, base_url(request))

    @get("/generation", summary="The account's generation records, newest first")
    async def list_generations(
        self, request: Request[Any, Any, Any], limit: JobsLimit = None, cursor: Cursor = None
    ) -> dict[str, Any]:
        return job_list(request, "generation", limit, cursor, service.record)
