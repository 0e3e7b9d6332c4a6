"""The /vidprov task routes and the provider task registry."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, JSONBody

from emulator.jobs import service as jobs
from emulator.openapi_answers import refusals
from emulator.video.records import ProviderTask, ProviderTaskList
from emulator.video.routes import JobsLimit, base_url, created_once, job_list
from emulator.vidprov import service
from emulator.vidprov.schemas import EffectsRequest, LipsyncRequest, MultiElementsRequest
from emulator.web import API_PREFIX, BEARER, Cursor, answers, auth_opt, caller_of, runtime_of

QUEUED = {**answers(ProviderTask, "The task, queued"), **refusals(402, 409)}
# A lip-sync names one of the account's videos by `video_id`.
LIPSYNC_QUEUED = {
    **QUEUED,
    **refusals(404, worded={404: "No video of that `video_id` in this account"}),
}


class VidprovController(Controller):
    path = f"{API_PREFIX}/vidprov"
    opt = auth_opt("api_key", "video")
    security = BEARER
    tags = ["Video provider"]

    @post(
        "/videos/effects",
        status_code=200,
        summary="Queue an effects task (effect_scene; Idempotency-Key honoured)",
        responses=QUEUED,
    )
    async def effects(
        self, request: Request[Any, Any, Any], data: JSONBody[EffectsRequest]
    ) -> Response[Any]:
        return created_once(request, "vidprov.effects", data, service.effects)

    @post(
        "/lipsync",
        status_code=200,
        summary="Queue an advanced lip-sync task (Idempotency-Key honoured)",
        responses=LIPSYNC_QUEUED,
    )
    async def lipsync(
        self, request: Request[Any, Any, Any], data: JSONBody[LipsyncRequest]
    ) -> Response[Any]:
        return created_once(request, "vidprov.lipsync", data, service.lipsync)

    @post(
        "/multi-elements",
        status_code=200,
        summary="Queue a multi-elements editing task (Idempotency-Key honoured)",
        responses=QUEUED,
    )
    async def multi_elements(
        self, request: Request[Any, Any, Any], data: JSONBody[MultiElementsRequest]
    ) -> Response[Any]:
        return created_once(request, "vidprov.multi_elements", data, service.multi_elements)

    @get(
        "/tasks/{task_id:str}",
        summary="A provider task by its local, provider or external id",
        responses=answers(ProviderTask, "The task, as of now"),
    )
    async def get_task(
        self, request: Request[Any, Any, Any], task_id: FromPath[str]
    ) -> dict[str, Any]:
        rt, caller = runtime_of(request), caller_of(request)
        job = jobs.find_task(rt, caller.account_id, task_id)
        return service.task_record(rt, job, base_url(request))

    @get(
        "/tasks",
        summary="The account's provider tasks, newest first",
        responses=answers(ProviderTaskList, "A page of tasks"),
    )
    async def list_tasks(
        self, request: Request[Any, Any, Any], limit: JobsLimit = None, cursor: Cursor = None
    ) -> dict[str, Any]:
        return job_list(request, "provider_task", limit, cursor, service.task_record)
