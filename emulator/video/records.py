"""What the video routes answer, declared for the OpenAPI document (the services build
plain dicts; these only describe them, and the tests check that they do)."""

from __future__ import annotations

from typing import Any, Literal

from emulator.bodies import WireModel

Status = Literal["queued", "processing", "completed", "failed"]


class JobError(WireModel):
    code: str | None
    message: str | None


class GenerationMetadata(WireModel):
    model: str | None
    task_type: str
    aspect_ratio: str
    duration: int
    resolution: str
    mode: str | None
    sound: str | None
    seed: int


class Generation(WireModel):
    """A video generation record as of the virtual clock now."""

    id: str
    object: Literal["generation"]
    status: Status
    progress: int
    eta_seconds: float | None
    created_at: str
    started_at: str | None
    completed_at: str | None
    failed_at: str | None
    model: str | None
    task_type: str
    prompt: str
    video_url: str | None
    file_size: int | None
    metadata: GenerationMetadata
    charge_micros: int
    refunded: bool
    error: JobError | None
    error_message: str | None


class TaskVideo(WireModel):
    id: str
    url: str
    duration: str  # seconds, as the provider writes them
    resolution: str
    file_size: int


class TaskResult(WireModel):
    videos: list[TaskVideo]
    images: list[str]


class ProviderTask(WireModel):
    """A provider task with our status beside the provider's own words."""

    id: str
    object: Literal["provider_task"]
    task_id: str
    provider_task_id: str | None
    external_task_id: str | None
    task_type: str
    status: Status
    task_status: Literal["submitted", "processing", "succeed", "failed"]
    task_status_msg: str | None
    progress: int
    eta_seconds: float | None
    created_at: str
    started_at: str | None
    finished_at: str | None
    inputs: dict[str, Any]
    task_result: TaskResult | None
    charge_micros: int
    refunded: bool
    error: JobError | None


class ProviderTaskList(WireModel):
    object: Literal["list"]
    data: list[ProviderTask]
    has_more: bool
    next_cursor: str | None


class GenerationList(WireModel):
    object: Literal["list"]
    data: list[Generation]
    has_more: bool
    next_cursor: str | None


class GenerationStats(WireModel):
    """OpenRouter's stats of one gateway request (`?id=gen_...`): costs in USD."""

    data: dict[str, Any]
