"""Validating a video generation against the catalog, queuing it, and its record."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from emulator.errors import ModelNotFound, ValidationFailed
from emulator.faults import apply as fault_apply
from emulator.jobs import service as jobs
from emulator.jobs.engine import FAIL_MARKER, schedule_for, state_at
from emulator.media.clips import find_clip
from emulator.store.jobs import JobRow
from emulator.store.meta import get_platform
from emulator.video.images import check_image
from emulator.video.schemas import GenerateVideoRequest

if TYPE_CHECKING:
    from emulator.auth.credentials import Caller
    from emulator.runtime import Runtime

FAMILY = "video_generation"
IMAGE_COUNTS = {"text2video": (0, 0), "image2video": (1, 1), "multi-image2video": (2, None)}


def video_catalog(rt: Runtime) -> dict[str, Any]:
    with rt.store.read() as conn:
        found: dict[str, Any] = get_platform(conn, "video") or {}
    return found


def family(catalog: dict[str, Any], name: str) -> dict[str, float]:
    durations: dict[str, float] = catalog.get("families", {}).get(name, {})
    return durations


def generate(
    rt: Runtime, caller: Caller, body: GenerateVideoRequest, base_url: str
) -> dict[str, Any]:
    catalog = video_catalog(rt)
    model = _model(catalog, body.model)
    seconds = _check(model, body)
    price = model["modes"][body.mode] * seconds
    clip = find_clip(catalog, rt.fixtures_dir, body.aspect_ratio, seconds)
    job_id = rt.new_id("vgen")
    seed = body.seed if body.seed is not None else rt.ids.rng("video-seed", job_id).randrange(2**31)
    outputs = {
        "aspect_ratio": body.aspect_ratio,
        "duration": seconds,
        "resolution": clip.resolution,
        "file_size": clip.size,
    }
    inputs = body.model_dump(exclude_none=True)
    for item in inputs.get("image_list", []):  # keep the record small: not the images
        if "image" in item:
            item["image"] = f"<{len(item['image'])} base64 characters>"
    job = jobs.create_job(
        rt,
        caller,
        prefix="vgen",
        family=FAMILY,
        kind="generation",
        model=body.model,
        inputs=inputs,
        outputs=outputs | {"seed": seed},
        schedule=schedule_for(family(catalog, FAMILY), seconds, rt.settings.job_speed),
        price_micros=price,
        failure=lambda: _failure(body.prompt, body.model),
        job_id=job_id,
        advice="choose a shorter duration or a cheaper mode",
    )
    return record(rt, job, base_url)


def _model(catalog: dict[str, Any], model_id: str) -> dict[str, Any]:
    """The catalog's video model `model_id`, or a 404 `model_not_found` (as the gateway's)
    that suggests the closest video model ids."""
    models = {m["id"]: m for m in catalog.get("models", [])}
    if model_id in models:
        found: dict[str, Any] = models[model_id]
        return found
    close = difflib.get_close_matches(model_id, list(models), n=3, cutoff=0.4)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise ModelNotFound(
        f"{model_id!r} is not a video model.{hint} Video models: {', '.join(models)}.",
        param="model",
    )


def _check(model: dict[str, Any], body: GenerateVideoRequest) -> int:
    """Every field against the model; the duration in seconds."""
    if body.task_type not in model["task_types"]:
        raise _invalid("task_type", body.task_type, model["task_types"], model["id"])
    if body.aspect_ratio not in model["aspect_ratios"]:
        raise _invalid("aspect_ratio", body.aspect_ratio, model["aspect_ratios"], model["id"])
    seconds = int(body.duration.rstrip("s"))
    if seconds not in model["durations"]:
        allowed = [f"{d}s" for d in model["durations"]]
        raise _invalid("duration", body.duration, allowed, model["id"])
    if body.mode not in model["modes"]:
        raise _invalid("mode", body.mode, list(model["modes"]), model["id"])
    if body.sound == "on" and not model["sound"]:
        raise ValidationFailed(f"{model['id']} makes no sound: send sound `off`.", param="sound")
    images = _images(body)
    least, most = IMAGE_COUNTS[body.task_type]
    most = model.get("max_images", 1) if most is None else most
    if not least <= len(images) <= most:
        want = (
            "no images"
            if most == 0
            else f"{least} to {most} images"
            if least != most
            else (f"{least} image")
        )
        raise ValidationFailed(
            f"{body.task_type} takes {want} (in `image_list`, or `image_url`); got {len(images)}.",
            param="image_list",
            code="invalid_image_count",
        )
    return seconds


def _images(body: GenerateVideoRequest) -> list[str]:
    found = []
    for index, item in enumerate(body.image_list or []):
        if (item.image is None) == (item.image_url is None):
            raise ValidationFailed(
                "Each `image_list` entry has exactly one of `image` (base64) and `image_url`.",
                param=f"image_list[{index}]",
            )
        value = item.image or item.image_url or ""
        check_image(value, f"image_list[{index}].image")
        found.append(value)
    if body.image_url:
        found.append(body.image_url)
    return found


def _invalid(param: str, value: str, allowed: list[str], model: str) -> ValidationFailed:
    return ValidationFailed(
        f"{param} {value!r} is not offered by {model}: one of {', '.join(allowed)}.",
        param=param,
    )


def _failure(prompt: str, model: str) -> tuple[str, str] | None:
    if FAIL_MARKER in prompt:
        return "generation_failed", "The video could not be generated (the prompt asked for it)."
    if fault_apply.job_fails(model):
        return "generation_failed", "The video could not be generated (a fault failed it)."
    return None


def record(rt: Runtime, job: JobRow, base_url: str) -> dict[str, Any]:
    """The generation record, as of the virtual clock now."""
    state = state_at(job, rt.clock.now())
    done = state.status == "completed"
    out = job.outputs
    inputs = job.inputs
    return {
        "id": job.id,
        "object": "generation",
        "status": state.status,
        "progress": state.progress,
        "eta_seconds": state.eta_seconds,
        "created_at": job.created_at,
        "started_at": state.started_at,
        "completed_at": state.finished_at if done else None,
        "failed_at": state.finished_at if state.status == "failed" else None,
        "model": job.model,
        "task_type": inputs["task_type"],
        "prompt": inputs["prompt"],
        "video_url": f"{base_url}/media/{job.id}.mp4" if done else None,
        "file_size": out["file_size"] if done else None,
        "metadata": {
            "model": job.model,
            "task_type": inputs["task_type"],
            "aspect_ratio": out["aspect_ratio"],
            "duration": out["duration"],
            "resolution": out["resolution"],
            "mode": inputs.get("mode"),
            "sound": inputs.get("sound"),
            "seed": out["seed"],
        },
        "charge_micros": job.charge_micros,
        "refunded": job.refunded or (state.status == "failed" and job.charge_micros > 0),
        "error": {"code": job.error_code, "message": job.error_message}
        if state.status == "failed"
        else None,
        "error_message": job.error_message if state.status == "failed" else None,
    }
