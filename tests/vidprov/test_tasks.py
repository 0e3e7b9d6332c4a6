"""The provider's tasks (effects, lip-sync, multi-elements) and the task registry."""

from __future__ import annotations

import base64
import io
import wave
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, mp4_facts

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(40)).decode()
VIDEO = "https://x.example/v.mp4"
WEBP = base64.b64encode(b"RIFF\x00\x00\x00\x00WEBPVP8 " + bytes(40)).decode()


def wav_base64() -> str:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(bytes(1600))
    return base64.b64encode(buffer.getvalue()).decode()


def test_an_effects_task_is_tracked_by_every_id_to_a_playable_result(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        task = client.post(
            "/vidprov/videos/effects",
            json={"effect_scene": "hug", "images": [PNG, WEBP], "external_task_id": "ext-hug-1"},
        ).json()
        assert (task["status"], task["task_status"]) == ("queued", "submitted")
        assert task["charge_micros"] == 140_000 and task["task_result"] is None
        ids = [task["task_id"], task["provider_task_id"], "ext-hug-1"]
        assert all(client.get(f"/vidprov/tasks/{i}").json()["id"] == task["id"] for i in ids)
        emulator.advance(5)
        running = client.get(f"/vidprov/tasks/{task['id']}").json()
        assert (running["status"], running["task_status"]) == ("processing", "processing")
        emulator.advance(600)
        done = client.get("/vidprov/tasks/ext-hug-1").json()
        assert (done["status"], done["task_status"]) == ("completed", "succeed")
        video = done["task_result"]["videos"][0]
        media = httpx.get(video["url"])
        assert media.status_code == 200 and len(media.content) == video["file_size"]
        assert round(mp4_facts(media.content)[0]) == int(video["duration"])
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start - 140_000


def test_a_refused_task_does_not_use_up_a_rule_failing_jobs(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    broke = emulator.create_tenant(balance_micros=0)
    body = {"effect_scene": "squish", "image": PNG}
    with emulator.faults.add(path="/api/v1/vidprov/videos/effects", fail_job=True, times=1) as rule:
        with broke.client() as client:
            assert client.post("/vidprov/videos/effects", json=body).status_code == 402
        assert rule.hits == 0
        with tenant.client() as client:
            task = client.post("/vidprov/videos/effects", json=body).json()
            emulator.advance(600)
            assert client.get(f"/vidprov/tasks/{task['id']}").json()["task_status"] == "failed"
        assert rule.hits == 1


def test_an_external_task_id_names_one_task_and_reads_back(tenant: Tenant) -> None:
    body = {"effect_scene": "squish", "image": PNG}
    with tenant.client() as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        first = client.post("/vidprov/videos/effects", json=body | {"external_task_id": "e1"})
        first_id = first.json()["id"]
        for taken in ("e1", first_id, first.json()["provider_task_id"]):
            again = client.post("/vidprov/videos/effects", json=body | {"external_task_id": taken})
            error = assert_error(again, 409, "duplicate_external_task_id", "conflict_error")
            assert error["param"] == "external_task_id" and first_id in error["message"]
        spent = start - client.get("/ai-gateway/balance").json()["balance_micros"]
        assert spent == first.json()["charge_micros"]  # the refused ones charged nothing
        for bad in ("order/123", "..", ".", "tab\there", "nul\u0000"):
            refused = client.post("/vidprov/videos/effects", json=body | {"external_task_id": bad})
            assert refused.status_code == 422, refused.text
            assert refused.json()["error"]["param"] == "external_task_id"
        for fine in ("order 123", "a.b:c?d#e"):
            made = client.post("/vidprov/videos/effects", json=body | {"external_task_id": fine})
            assert made.status_code == 200, made.text
            found = client.get(f"/vidprov/tasks/{quote(fine, safe='')}")
            assert found.json()["id"] == made.json()["id"]
        assert client.get(f"/vidprov/tasks/{first_id}").json()["id"] == first_id


def test_single_image_effects_and_wrong_inputs(tenant: Tenant) -> None:
    with tenant.client() as client:
        ok = client.post("/vidprov/videos/effects", json={"effect_scene": "squish", "image": PNG})
        assert ok.status_code == 200 and ok.json()["inputs"]["images"] == 1
        cases = [
            ({"effect_scene": "moonwalk", "image": PNG}, "effect_scene", "unknown_effect_scene"),
            ({"effect_scene": "hug", "image": PNG}, "images", "invalid_image_count"),
            ({"effect_scene": "squish", "images": [PNG, PNG]}, "image", "invalid_image_count"),
            ({"effect_scene": "squish", "image": "bm90IGFuIGltYWdl"}, "image", "invalid_image"),
            ({"effect_scene": "squish"}, "image", "invalid_image_count"),
            ({"effect_scene": "squish", "image": "http://"}, "image", "invalid_image"),
            ({"effect_scene": "squish", "image": " https://x y"}, "image", "invalid_image"),
            (
                {"effect_scene": "squish", "image": "https://x/" + "a" * 2000},
                "image",
                "invalid_image",
            ),
            (
                {"effect_scene": "squish", "image": "data:image/png," + PNG},
                "image",
                "invalid_image",
            ),
            (
                {"effect_scene": "squish", "image": "data:text/plain;base64," + PNG},
                "image",
                "invalid_image",
            ),
            (
                {"effect_scene": "squish", "image": "data:image/webp;base64," + PNG},
                "image",
                "invalid_image",
            ),
        ]
        for body, param, code in cases:
            error = assert_error(client.post("/vidprov/videos/effects", json=body), 422, code)
            assert error["param"] == param, (body, error)
        typed = {"effect_scene": "squish", "image": "data:IMAGE/PNG;base64," + PNG}
        assert client.post("/vidprov/videos/effects", json=typed).status_code == 200


def test_lipsync_with_audio_or_text(tenant: Tenant) -> None:
    with tenant.client() as client:
        by_audio = client.post(
            "/vidprov/lipsync",
            json={"video_url": "https://example.com/talk.mp4", "audio": wav_base64()},
        )
        assert by_audio.status_code == 200, by_audio.text
        assert by_audio.json()["task_type"] == "lipsync"
        as_data_url = client.post(
            "/vidprov/lipsync",
            json={"video_url": VIDEO, "audio": "data:audio/wav;base64," + wav_base64()},
        )
        assert as_data_url.status_code == 200, as_data_url.text  # as images take one
        by_text = client.post(
            "/vidprov/lipsync",
            json={"video_url": VIDEO, "mode": "text2video", "text": "Hello!", "voice_id": "v1"},
        )
        assert by_text.status_code == 200 and by_text.json()["charge_micros"] == 125_000
        cases = [
            ({"audio_url": "https://example.com/a.mp3"}, "video_url"),
            ({"video_url": VIDEO}, "audio"),
            ({"video_url": VIDEO, "audio": PNG}, "audio"),
            ({"video_url": VIDEO, "mode": "text2video", "text": "hi"}, "voice_id"),
        ]
        for body, param in cases:
            response = client.post("/vidprov/lipsync", json=body)
            assert response.status_code == 422 and response.json()["error"]["param"] == param
        for stated in ("image/png", "audio/mpeg", ""):
            wrong = {"video_url": VIDEO, "audio": f"data:{stated};base64," + wav_base64()}
            error = assert_error(client.post("/vidprov/lipsync", json=wrong), 422, "invalid_audio")
            assert error["param"] == "audio" and (stated or "''") in error["message"], error
        for audio in ("data:audio/wav," + wav_base64(), "%%%"):
            wrong = {"video_url": VIDEO, "audio": audio}
            error = assert_error(client.post("/vidprov/lipsync", json=wrong), 422, "invalid_audio")
            assert error["param"] == "audio", error


def test_lipsync_infers_its_mode_and_checks_a_given_one(tenant: Tenant) -> None:
    with tenant.client() as client:
        by_text = client.post(
            "/vidprov/lipsync", json={"video_url": VIDEO, "text": "hello", "voice_id": "v1"}
        )
        assert by_text.status_code == 200, by_text.text
        assert by_text.json()["inputs"]["mode"] == "text2video"
        by_audio = client.post(
            "/vidprov/lipsync", json={"video_url": VIDEO, "audio_url": "https://x.example/a.mp3"}
        )
        assert by_audio.status_code == 200 and by_audio.json()["inputs"]["mode"] == "audio2video"
        text = {"text": "hello", "voice_id": "v1"}
        cases = [
            ({"mode": "audio2video", **text}, "text"),
            ({"audio": wav_base64(), **text}, "text"),
            ({"mode": "text2video", "audio_url": "https://x.example/a.mp3"}, "audio_url"),
            ({"mode": "audio2video"}, "audio"),
            ({"voice_id": "v1"}, "text"),
            ({}, "audio"),
        ]
        for body, param in cases:
            response = client.post("/vidprov/lipsync", json={"video_url": VIDEO, **body})
            error = assert_error(response, 422, "invalid_request")
            assert error["param"] == param and "`mode`" in error["message"], (body, error)


def test_lipsync_of_a_video_id_needs_one_of_the_accounts_videos(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    speak = {"text": "hello", "voice_id": "v1"}
    with tenant.client() as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        for unknown in ["vgen_nope", "task_nope", "vp_nope-0"]:
            response = client.post("/vidprov/lipsync", json={"video_id": unknown, **speak})
            error = assert_error(response, 404, "not_found", "not_found_error")
            assert error["param"] == "video_id" and unknown in error["message"]
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start  # no charge
        generation = client.post(
            "/generate/video",
            json={"model": "emulator/video", "task_type": "text2video", "prompt": "a talk"},
        ).json()
        early = client.post("/vidprov/lipsync", json={"video_id": generation["id"], **speak})
        assert assert_error(early, 422, "video_not_ready")["param"] == "video_id"
        failing = client.post(
            "/generate/video",
            json={
                "model": "emulator/video",
                "task_type": "text2video",
                "prompt": "[emulator:fail]",
            },
        ).json()
        emulator.advance(600)
        failed = client.post("/vidprov/lipsync", json={"video_id": failing["id"], **speak})
        assert "no output" in assert_error(failed, 422, "video_failed")["message"]
        synced = client.post("/vidprov/lipsync", json={"video_id": generation["id"], **speak})
        assert synced.status_code == 200, synced.text
        emulator.advance(600)
        result = client.get(f"/vidprov/tasks/{synced.json()['id']}").json()
        video_id = result["task_result"]["videos"][0]["id"]
        again = client.post("/vidprov/lipsync", json={"video_id": video_id, **speak})
        assert again.status_code == 200, again.text
    with emulator.create_tenant().client() as other:
        theirs = other.post("/vidprov/lipsync", json={"video_id": generation["id"], **speak})
        assert_error(theirs, 404, "not_found")


def test_lipsync_of_an_accounts_video_keeps_its_length_and_shape(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    speak = {"text": "hello", "voice_id": "v1"}
    with tenant.client() as client:
        generation = client.post(
            "/generate/video",
            json={
                "model": "emulator/video",
                "task_type": "text2video",
                "prompt": "a talk",
                "duration": "10",
                "aspect_ratio": "9:16",
            },
        ).json()
        emulator.advance(600)
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        task = client.post("/vidprov/lipsync", json={"video_id": generation["id"], **speak})
        assert task.json()["charge_micros"] == 10 * 25_000  # per second, of 10 seconds
        by_url = client.post("/vidprov/lipsync", json={"video_url": VIDEO, **speak}).json()
        assert by_url["charge_micros"] == 5 * 25_000  # a URL's video is taken as 5 s
        spent = start - client.get("/ai-gateway/balance").json()["balance_micros"]
        assert spent == 15 * 25_000
        emulator.advance(600)
        video = client.get(f"/vidprov/tasks/{task.json()['id']}").json()["task_result"]
        media = httpx.get(video["videos"][0]["url"])
    seconds, width, height = mp4_facts(media.content)
    assert round(seconds) == 10 == int(video["videos"][0]["duration"]) and width < height


def test_a_short_balance_for_lipsync_gives_lipsync_advice(emulator: EmulatorHandle) -> None:
    poor = emulator.create_tenant(balance_micros=100_000)
    with poor.client() as client:
        response = client.post(
            "/vidprov/lipsync", json={"video_url": VIDEO, "text": "hi", "voice_id": "v1"}
        )
    message = assert_error(response, 402, "insufficient_credits")["message"]
    assert "lip-sync" in message and "duration" not in message and "mode" not in message


def test_multi_elements(emulator: EmulatorHandle, tenant: Tenant) -> None:
    """A swap (with the element's image) and a removal (with none) are queued tasks of
    180,000 micros each, shown with what they were given; the refusals cost nothing."""
    with tenant.client() as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        body = {
            "video_url": "https://example.com/v.mp4",
            "edit_mode": "swap",
            "prompt": "swap the cup for a lamp",
            "image_list": [PNG],
        }
        task = client.post("/vidprov/multi-elements", json=body)
        assert task.status_code == 200 and task.json()["task_type"] == "multi_elements"
        removal = {**body, "edit_mode": "removal", "image_list": []}
        removed = client.post("/vidprov/multi-elements", json=removal)
        assert removed.status_code == 200, removed.text
        missing = client.post("/vidprov/multi-elements", json={**body, "image_list": []})
        assert_error(missing, 422, "invalid_image_count")
        bad_mode = client.post("/vidprov/multi-elements", json={**body, "edit_mode": "blur"})
        assert_error(bad_mode, 422, "invalid_request")
        spent = start - client.get("/ai-gateway/balance").json()["balance_micros"]
    tasks = [task.json(), removed.json()]
    for made, (mode, images) in zip(tasks, [("swap", 1), ("removal", 0)], strict=True):
        assert made["id"].startswith("task_") and made["task_id"] == made["id"]
        assert made["provider_task_id"] and made["object"] == "provider_task"
        assert made["task_type"] == "multi_elements"
        assert (made["status"], made["task_status"], made["task_result"]) == (
            "queued",
            "submitted",
            None,
        )
        assert made["inputs"] == {
            "edit_mode": mode,
            "prompt": body["prompt"],
            "video": body["video_url"],
            "images": images,
        }
        assert made["charge_micros"] == 180_000 and made["refunded"] is False
    assert spent == 2 * 180_000
    charges = emulator.ledger(tenant.account_id, kind="job_charge")
    assert {e["reference"]: e["amount"] for e in charges} == {t["id"]: -180_000 for t in tasks}


def test_a_failed_task_shows_the_providers_words_and_is_refunded(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        body = {
            "video_url": "https://example.com/v.mp4",
            "edit_mode": "removal",
            "prompt": "remove the dog [emulator:fail]",
        }
        task = client.post("/vidprov/multi-elements", json=body).json()
        emulator.advance(600)
        failed = client.get(f"/vidprov/tasks/{task['provider_task_id']}").json()
        assert (failed["status"], failed["task_status"]) == ("failed", "failed")
        assert failed["task_status_msg"] and failed["task_result"] is None
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start


def test_the_registry_is_per_account_and_listed_newest_first(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        made = [
            client.post(
                "/vidprov/videos/effects",
                json={"effect_scene": "squish", "image": PNG, "external_task_id": f"e{n}"},
            ).json()["id"]
            for n in range(3)
        ]
        page = client.get("/vidprov/tasks", params={"limit": 2}).json()
        assert [t["id"] for t in page["data"]] == made[::-1][:2] and page["has_more"]
    other = emulator.create_tenant()
    with other.client() as client:
        assert_error(client.get("/vidprov/tasks/e0"), 404, "not_found")
        assert client.get("/vidprov/tasks").json()["data"] == []


@pytest.mark.parametrize("path", ["/vidprov/lipsync", "/vidprov/multi-elements"])
def test_unknown_fields_are_refused(tenant: Tenant, path: str) -> None:
    with tenant.client() as client:
        error = assert_error(client.post(path, json={"colour": "red"}), 422, "invalid_request")
    assert error["param"]


@pytest.mark.parametrize(
    ("path", "body", "other"),
    [
        ("/vidprov/videos/effects", {"effect_scene": "hug", "images": [PNG, WEBP]}, "squish"),
        ("/vidprov/lipsync", {"video_url": VIDEO, "text": "hi", "voice_id": "v1"}, "bye"),
        (
            "/vidprov/multi-elements",
            {"video_url": VIDEO, "edit_mode": "removal", "prompt": "no dog", "image_list": []},
            "no cat",
        ),
    ],
    ids=["effects", "lipsync", "multi-elements"],
)
def test_an_idempotency_key_queues_and_charges_a_task_once(
    tenant: Tenant, path: str, body: dict[str, object], other: str
) -> None:
    changed = {**body, next(k for k in ("effect_scene", "text", "prompt") if k in body): other}
    with tenant.client(headers={"Idempotency-Key": "task-1"}) as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        first = client.post(path, json=body)
        again = client.post(path, json=body)
        assert first.status_code == again.status_code == 200, first.text
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json() == first.json()
        charged = first.json()["charge_micros"]
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start - charged
        assert_error(client.post(path, json=changed), 422, "idempotency_key_mismatch")
        assert [t["id"] for t in client.get("/vidprov/tasks").json()["data"]] == [
            first.json()["id"]
        ]


def test_fixtures_without_clips_make_a_task_a_clear_501_and_charge_nothing(
    tmp_path: Path,
) -> None:
    import shutil

    from emulator.server import BackgroundServer
    from emulator.settings import Settings, default_fixtures_dir

    folder = tmp_path / "fx"
    shutil.copytree(default_fixtures_dir(), folder)
    (folder / "video.yaml").write_text("models: []\n")
    server = BackgroundServer(Settings(db=":memory:", fixtures=folder, log_level="warning")).start()
    try:
        headers = {"Authorization": "Bearer sk-emu-demo-all"}
        with httpx.Client(base_url=f"{server.url}/api/v1", headers=headers) as client:
            start = client.get("/ai-gateway/balance").json()["balance_micros"]
            body = {"video_url": VIDEO, "text": "hi", "voice_id": "v1"}
            error = assert_error(client.post("/vidprov/lipsync", json=body), 501, "not_implemented")
            assert "clips:" in error["message"]
            assert client.get("/ai-gateway/balance").json()["balance_micros"] == start
    finally:
        server.stop()


def test_a_multi_elements_prompt_must_say_something(tenant: Tenant) -> None:
    body = {"video_url": VIDEO, "edit_mode": "removal", "prompt": "   ", "image_list": []}
    with tenant.client() as client:
        error = assert_error(
            client.post("/vidprov/multi-elements", json=body), 422, "invalid_request"
        )
    assert error["param"] == "prompt" and "only spaces" in error["message"]


@pytest.mark.parametrize(
    ("field", "blank"), [("text", "   "), ("text", "\u200b"), ("voice_id", "\u115f ")]
)
def test_lipsync_words_and_voice_must_say_something(tenant: Tenant, field: str, blank: str) -> None:
    """Blank words or voice were taken, and the task charged."""
    body = {"video_url": VIDEO, "text": "Hello there", "voice_id": "v1", field: blank}
    with tenant.client() as client:
        error = assert_error(client.post("/vidprov/lipsync", json=body), 422, "invalid_request")
        balance = client.get("/ai-gateway/balance").json()["balance_micros"]
    assert error["param"] == field and balance == tenant.balance_micros
