"""POST /_emulator/jobs/{id}/complete|fail: force a running job's outcome now (a job that
has already ended keeps its outcome: the same again changes nothing, the other is 409
`job_already_ended`)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, post
from litestar.params import FromPath, JSONBody
from pydantic import Field

from emulator.bodies import RequestBody
from emulator.control.records import ForcedJob
from emulator.control.routes import ADMIN
from emulator.jobs import service
from emulator.openapi_answers import refusals
from emulator.web import RuntimeDep, answers, auth_opt

FORCED = {
    **answers(ForcedJob, "The job (or background response) as it is now"),
    **refusals(409, worded={409: "The job has already ended the other way (`job_already_ended`)"}),
}


class JobFailure(RequestBody):
    # As an error envelope's code (and a fault rule's): it is served as `error.code`.
    code: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")] | None = None
    message: Annotated[str, Field(min_length=1, max_length=2000, pattern=r"\S")] | None = None


class JobCompletion(RequestBody):
    """No fields: a body, if sent, is checked as `fail`'s is (an object, nothing in it)."""


class JobsControlController(Controller):
    path = "/_emulator/jobs"
    tags = ["Control plane"]
    opt = auth_opt("admin")
    security = ADMIN

    @post(
        "/{job_id:str}/complete",
        status_code=200,
        summary="Complete a running job (or background response) now",
        responses=FORCED,
    )
    async def complete(
        self, rt: RuntimeDep, job_id: FromPath[str], data: JSONBody[JobCompletion | None] = None
    ) -> dict[str, Any]:
        # `data` is only checked (a stray body is refused as `fail`'s would be), not read.
        return service.force(rt, job_id, "complete", None, None)

    @post(
        "/{job_id:str}/fail",
        status_code=200,
        summary="Fail a running job (refunded) or background response now",
        responses=FORCED,
    )
    async def fail(
        self, rt: RuntimeDep, job_id: FromPath[str], data: JSONBody[JobFailure | None] = None
    ) -> dict[str, Any]:
        body = data or JobFailure()
        return service.force(rt, job_id, "fail", body.code, body.message)
