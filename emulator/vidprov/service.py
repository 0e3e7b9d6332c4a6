"""Provider tasks: effects, lip-sync and multi-elements, queued on the job engine.

Each task has three ids: ours (`task_...`), the provider's (`vp_...`) and an
optional one the client chose (`external_task_id`); the registry finds it by
any. It shows the provider's own status words beside ours.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

from emulator.errors import NotFound, ValidationFailed
from emulator.faults import apply as fault_apply
from emulator.jobs import service as jobs
from emulator.jobs.engine import FAIL_MARKER, schedule_for, state_at
from emulator.media.clips import find_clip
from emulator.store.jobs import JobRow
from emulator.video.images import base64_payload, check_image
from emulator.video.service import family, video_catalog
from emulator.vidprov.schemas import EffectsRequest, LipsyncRequest, MultiElementsRequest

if TYPE_CHECKING:
    from emulator.auth.credentials import Caller
    from emulator.runtime import Runtime

PROVIDER_STATUS = {
    "queued": "submitted",
    "processing": "processing",
    "completed": "succeed",
    "failed": "failed",
}
TASK_ASPECT = "16:9"
URL_VIDEO_SECONDS = 5  # what a task on a video by URL is taken to last: it is not fetched
# A data URL's stated audio type must be one of these, and its bytes that format.
AUDIO_TYPES = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


def effects(rt: Runtime, caller: Caller, body: EffectsRequest, base_url: str) -> dict[str, Any]:
    catalog = video_catalog(rt)
    effect = next((e for e in catalog.get("effects", []) if e["scene"] == body.effect_scene), None)
    if effect is None:
        scenes = ", ".join(e["scene"] for e in catalog.get("effects", []))
        raise ValidationFailed(
            f"No effect scene {body.effect_scene!r}. Scenes: {scenes}.",
            param="effect_scene",
            code="unknown_effect_scene",
        )
    images = ([body.image] if body.image else []) + list(body.images or [])
    if (body.image is None) == (body.images is None) or len(images) != effect["images"]:
        shape = "`image` (one)" if effect["images"] == 1 else "`images` (two)"
        raise ValidationFailed(
            f"{body.effect_scene} takes {effect['images']} image(s): send {shape}.",
            param="image" if effect["images"] == 1 else "images",
            code="invalid_image_count",
        )
    for index, image in enumerate(images):
        check_image(image, "image" if body.image else f"images[{index}]")
    seconds = int(body.duration.rstrip("s"))
    inputs = {"effect_scene": body.effect_scene, "images": len(images), "duration": seconds}
    return _queue(
        rt,
        caller,
        task_type="effects",
        inputs=inputs,
        seconds=seconds,
        price=effect["micros"],
        external_task_id=body.external_task_id,
        text="",
        base_url=base_url,
        advice="choose an `effect_scene` that costs less",
    )


def lipsync(rt: Runtime, caller: Caller, body: LipsyncRequest, base_url: str) -> dict[str, Any]:
    """Queue a lip-sync of a video (a URL, or the id of one of the account's videos) to
    audio (`audio2video`) or to text spoken in a voice (`text2video`)."""
    if (body.video_url is None) == (body.video_id is None):
        raise ValidationFailed(
            "Lip-sync needs the video to sync: exactly one of `video_url` and `video_id`.",
            param="video_url",
        )
    mode = lipsync_mode(body)
    # A video of the account is synced at its own length and shape; a URL's are unknown.
    seconds, aspect = URL_VIDEO_SECONDS, TASK_ASPECT
    if body.video_id is not None:
        source = _check_own_video(rt, caller.account_id, body.video_id)
        seconds, aspect = source.outputs["duration"], source.outputs["aspect_ratio"]
    per_second = video_catalog(rt).get("tasks", {}).get("lipsync_micros_per_second", 0)
    inputs = {"mode": mode, "video": body.video_url or body.video_id, "text": body.text}
    return _queue(
        rt,
        caller,
        task_type="lipsync",
        inputs=inputs,
        seconds=seconds,
        price=per_second * seconds,
        external_task_id=body.external_task_id,
        text=body.text or "",
        base_url=base_url,
        advice=f"lip-sync fewer or shorter videos: this one is {seconds} seconds at "
        f"{per_second} micros a second",
        aspect=aspect,
    )


def lipsync_mode(body: LipsyncRequest) -> str:
    """The lip-sync's mode: as sent, or inferred (audio: `audio2video`; `text` or
    `voice_id`: `text2video`); either way its fields are checked against it."""
    has_audio = body.audio is not None or body.audio_url is not None
    has_text = body.text is not None or body.voice_id is not None
    mode = body.mode or ("audio2video" if has_audio else "text2video" if has_text else None)
    if mode is None:
        raise ValidationFailed(
            "Lip-sync needs what to say: `audio` (base64 WAV or MP3) or `audio_url` "
            "(`mode` audio2video), or `text` and a `voice_id` (`mode` text2video).",
            param="audio",
        )
    named = f"`mode` {mode}" + ("" if body.mode else " (inferred)")
    if mode == "audio2video":
        _check_audio2video(body, named, has_text)
    else:
        _check_text2video(body, named, has_audio)
    return mode


def _check_audio2video(body: LipsyncRequest, named: str, has_text: bool) -> None:
    if has_text:
        raise ValidationFailed(
            f"{named} syncs the video to the audio and takes no `text` or `voice_id`: send "
            'either the audio, or `text` and `voice_id` with `"mode": "text2video"`.',
            param="text" if body.text is not None else "voice_id",
        )
    if (body.audio is None) == (body.audio_url is None):
        raise ValidationFailed(
            f"{named} needs exactly one of `audio` (base64 WAV or MP3) and `audio_url`; to "
            'speak `text` in a `voice_id` instead, send `"mode": "text2video"`.',
            param="audio",
        )
    if body.audio is not None:
        _check_audio(body.audio)


def _check_text2video(body: LipsyncRequest, named: str, has_audio: bool) -> None:
    if has_audio:
        raise ValidationFailed(
            f"{named} speaks `text` in a `voice_id` and takes no `audio` or `audio_url`: "
            'send either `text` and `voice_id`, or the audio with `"mode": "audio2video"`.',
            param="audio" if body.audio is not None else "audio_url",
        )
    if body.text is None or body.voice_id is None:
        raise ValidationFailed(
            f"{named} needs `text` and a `voice_id`; to sync to audio instead, send "
            '`audio` or `audio_url` with `"mode": "audio2video"`.',
            param="text" if body.text is None else "voice_id",
        )


def _check_own_video(rt: Runtime, account_id: str, video_id: str) -> JobRow:
    """The job whose video `video_id` names, of this account and ready: 404 or 422
    otherwise."""
    job = jobs.find_video(rt, account_id, video_id)
    if job is None:
        raise NotFound(
            f"No video {video_id!r} in this account. `video_id` takes the id of one of its "
            "generations (`vgen_...`) or provider tasks (`task_...`, `vp_...`, or a "
            "`task_result.videos[].id`); send `video_url` for any other video.",
            param="video_id",
        )
    status = state_at(job, rt.clock.now()).status
    if status == "failed":
        raise ValidationFailed(
            f"The video {video_id!r} failed and has no output to lip-sync: send another "
            "completed video's id, or `video_url`.",
            param="video_id",
            code="video_failed",
        )
    if status != "completed":
        raise ValidationFailed(
            f"The video {video_id!r} is {status}, not completed: lip-sync it once its job "
            "has completed (poll it), or send `video_url`.",
            param="video_id",
            code="video_not_ready",
        )
    return job


def multi_elements(
    rt: Runtime, caller: Caller, body: MultiElementsRequest, base_url: str
) -> dict[str, Any]:
    if body.edit_mode in ("addition", "swap") and not body.image_list:
        raise ValidationFailed(
            f"edit_mode {body.edit_mode} needs the element to add or swap in `image_list` "
            "(1 to 4 images).",
            param="image_list",
            code="invalid_image_count",
        )
    for index, image in enumerate(body.image_list):
        check_image(image, f"image_list[{index}]")
    price = video_catalog(rt).get("tasks", {}).get("multi_elements_micros", 0)
    inputs = {
        "edit_mode": body.edit_mode,
        "prompt": body.prompt,
        "video": body.video_url,
        "images": len(body.image_list),
    }
    return _queue(
        rt,
        caller,
        task_type="multi_elements",
        inputs=inputs,
        seconds=URL_VIDEO_SECONDS,
        price=price,
        external_task_id=body.external_task_id,
        text=body.prompt,
        base_url=base_url,
        advice=f"edit fewer videos: each multi-elements task costs {price} micros",
    )


def _check_audio(value: str) -> None:
    """The base64 (or a data URL) of a WAV or MP3 file, as images take either."""
    media_type, payload = base64_payload(value.strip())
    if payload is None:
        raise _bad_audio("`audio`: a data URL must be base64 (data:audio/wav;base64,...).")
    if media_type is not None and media_type not in AUDIO_TYPES:
        allowed = ", ".join(AUDIO_TYPES)
        raise _bad_audio(
            f"`audio`: unsupported MIME type {media_type!r} in the data URL; use {allowed}."
        )
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _bad_audio("`audio` is not valid base64.") from exc
    wav = data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    mp3 = data[:3] == b"ID3" or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0)
    if not (wav or mp3):
        raise _bad_audio("`audio` must be the base64 of a WAV or MP3 file.")
    found = "wav" if wav else "mp3"
    if media_type is not None and AUDIO_TYPES[media_type] != found:
        raise _bad_audio(f"`audio`: the data is not audio of type {media_type} (it is a {found}).")


def _bad_audio(message: str) -> ValidationFailed:
    return ValidationFailed(message, param="audio", code="invalid_audio")


def _queue(
    rt: Runtime,
    caller: Caller,
    *,
    task_type: str,
    inputs: dict[str, Any],
    seconds: int,
    price: int,
    external_task_id: str | None,
    text: str,
    base_url: str,
    advice: str,
    aspect: str = TASK_ASPECT,
) -> dict[str, Any]:
    """Queue a provider task of family `vidprov_{task_type}`, its output `seconds` long
    in `aspect`; `text` may ask it to fail; `advice` says what else to do when the
    balance is short."""
    family_name = f"vidprov_{task_type}"
    catalog = video_catalog(rt)
    clip = find_clip(catalog, rt.fixtures_dir, aspect, seconds)

    def failure() -> tuple[str, str] | None:
        if FAIL_MARKER in text or fault_apply.job_fails(None):
            return "task_failed", "The provider could not complete the task."
        return None

    job = jobs.create_job(
        rt,
        caller,
        prefix="task",
        family=family_name,
        kind="provider_task",
        model=None,
        inputs={"task_type": task_type, **inputs},
        outputs={
            "aspect_ratio": aspect,
            "duration": clip.seconds,
            "resolution": clip.resolution,
            "file_size": clip.size,
        },
        schedule=schedule_for(family(catalog, family_name), seconds, rt.settings.job_speed),
        price_micros=price,
        failure=failure,
        external_task_id=external_task_id,
        advice=advice,
    )
    return task_record(rt, job, base_url)


def task_record(rt: Runtime, job: JobRow, base_url: str) -> dict[str, Any]:
    state = state_at(job, rt.clock.now())
    done = state.status == "completed"
    failed = state.status == "failed"
    return {
        "id": job.id,
        "object": "provider_task",
        "task_id": job.id,
        "provider_task_id": job.provider_task_id,
        "external_task_id": job.external_task_id,
        "task_type": job.inputs["task_type"],
        "status": state.status,
        "task_status": PROVIDER_STATUS[state.status],
        "task_status_msg": job.error_message if failed else None,
        "progress": state.progress,
        "eta_seconds": state.eta_seconds,
        "created_at": job.created_at,
        "started_at": state.started_at,
        "finished_at": state.finished_at,
        "inputs": {k: v for k, v in job.inputs.items() if k != "task_type"},
        "task_result": {
            "videos": [
                {
                    "id": f"{job.provider_task_id}-0",
                    "url": f"{base_url}/media/{job.id}.mp4",
                    "duration": str(job.outputs["duration"]),
                    "resolution": job.outputs["resolution"],
                    "file_size": job.outputs["file_size"],
                }
            ],
            "images": [],
        }
        if done
        else None,
        "charge_micros": job.charge_micros,
        "refunded": job.refunded or (failed and job.charge_micros > 0),
        "error": {"code": job.error_code, "message": job.error_message} if failed else None,
    }
