"""POST /generate/video, the generation record, its media and its money, through HTTP."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, bearer, mp4_facts

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(40)).decode()
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + bytes(40)).decode()
GIF = base64.b64encode(b"GIF89a" + bytes(40)).decode()
FIRST, COUNT = "image_list[0].image", "invalid_image_count"
# Data URLs whose stated type is not an image, is not the bytes' type, or is missing.
TEXT_PNG, JPEG_PNG, UNTYPED = (f"data:{t};base64,{PNG}" for t in ("text/plain", "image/jpeg", ""))
BODY = {
    "model": "vidprov/v1.6",
    "task_type": "text2video",
    "prompt": "a red fox running through snow",
    "aspect_ratio": "16:9",
    "duration": "5s",
    "mode": "standard",
}


def generate(client: httpx.Client, **changes: object) -> httpx.Response:
    return client.post("/generate/video", json={**BODY, **changes})


def test_polling_while_the_clock_moves_walks_every_status(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        record = generate(client).json()
        assert (record["status"], record["progress"], record["video_url"]) == ("queued", 0, None)
        seen, progress = [], []
        for step in range(13):
            emulator.advance(1 if step == 0 else 4)
            now = client.get(f"/generation/{record['id']}").json()
            seen.append(now["status"])
            progress.append(now["progress"])
        assert seen[0] == "queued" and "processing" in seen and seen[-1] == "completed"
        assert progress == sorted(progress) and progress[-1] == 100
        assert len({p for s, p in zip(seen, progress, strict=True) if s == "processing"}) > 2
        # The same job read twice at the same virtual time: the same body.
        assert client.get(f"/generation/{record['id']}").json() == now
        assert now["completed_at"] and now["started_at"] and now["error"] is None


def test_the_completed_record_points_at_a_playable_mp4(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        record = generate(client, aspect_ratio="9:16", duration="10s").json()
        emulator.advance(600)
        done = client.get(f"/generation/{record['id']}").json()
    meta = done["metadata"]
    assert (meta["aspect_ratio"], meta["duration"], meta["resolution"]) == ("9:16", 10, "108x192")
    assert isinstance(meta["seed"], int) and meta["model"] == "vidprov/v1.6"
    media = httpx.get(done["video_url"])
    assert media.status_code == 200 and media.headers["content-type"] == "video/mp4"
    assert int(media.headers["content-length"]) == len(media.content) == done["file_size"]
    assert media.content[4:8] == b"ftyp"
    seconds, width, height = mp4_facts(media.content)
    assert round(seconds) == 10 and (width, height) == (108, 192)
    assert httpx.get(done["video_url"]).content == media.content  # stable bytes
    # Range requests, so players can seek.
    part = httpx.get(done["video_url"], headers={"Range": "bytes=100-199"})
    assert part.status_code == 206 and part.content == media.content[100:200]
    assert part.headers["content-range"] == f"bytes 100-199/{len(media.content)}"
    tail = httpx.get(done["video_url"], headers={"Range": "bytes=-10"})
    assert tail.status_code == 206 and tail.content == media.content[-10:]
    bad = httpx.get(done["video_url"], headers={"Range": "bytes=999999-"})
    assert (
        bad.status_code == 416 and bad.headers["content-range"] == f"bytes */{len(media.content)}"
    )


def test_media_of_a_running_job_is_not_there_yet(tenant: Tenant, http: httpx.Client) -> None:
    with tenant.client() as client:
        record = generate(client).json()
    assert_error(http.get(f"/media/{record['id']}.mp4"), 404, "not_found")
    assert_error(http.get("/media/nothing.mp4"), 404, "not_found")


def test_a_generation_is_charged_and_a_failed_one_refunded_exactly(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        ok = generate(client, mode="pro", duration="10s").json()
        assert ok["charge_micros"] == 70_000 * 10
        failing = generate(client, prompt="a storm [emulator:fail]").json()
        assert failing["charge_micros"] == 35_000 * 5
        charged = client.get("/ai-gateway/balance").json()["balance_micros"]
        assert charged == start - 700_000 - 175_000  # the failure has not happened yet
        emulator.advance(600)
        failed = client.get(f"/generation/{failing['id']}").json()
        assert failed["status"] == "failed" and failed["video_url"] is None
        assert failed["error"]["code"] == "generation_failed" and failed["error_message"]
        assert failed["refunded"] and 0 < failed["progress"] < 100
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start - 700_000
        # Reading again refunds nothing more.
        client.get(f"/generation/{failing['id']}")
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start - 700_000


def test_another_accounts_key_cannot_read_the_record(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client() as client:
        record = generate(client).json()
    other = emulator.create_tenant()
    with other.client() as client:
        assert_error(client.get(f"/generation/{record['id']}"), 404, "not_found")
        assert client.get("/generation").json()["data"] == []


@pytest.mark.parametrize(
    ("changes", "param", "code"),
    [
        ({"task_type": "video2video"}, "task_type", "invalid_request"),
        ({"model": "vidprov/v2-master", "task_type": "multi-image2video"}, "task_type", None),
        ({"aspect_ratio": "4:3"}, "aspect_ratio", None),
        ({"duration": "7s"}, "duration", None),
        ({"duration": "five"}, "duration", None),
        ({"mode": "ultra"}, "mode", None),
        ({"model": "vidprov/v2-master", "sound": "on"}, "sound", None),
        ({"task_type": "image2video"}, "image_list", "invalid_image_count"),
        ({"image_list": [{"image": PNG}]}, "image_list", "invalid_image_count"),
        ({"task_type": "image2video", "image_list": [{"image": "%%%"}]}, FIRST, "invalid_image"),
        ({"task_type": "image2video", "image_list": [{"image": GIF}]}, FIRST, "invalid_image"),
        ({"task_type": "image2video", "image_list": [{"image": TEXT_PNG}]}, FIRST, "invalid_image"),
        ({"task_type": "image2video", "image_list": [{"image": JPEG_PNG}]}, FIRST, "invalid_image"),
        ({"task_type": "image2video", "image_list": [{"image": UNTYPED}]}, FIRST, "invalid_image"),
        ({"task_type": "multi-image2video", "image_list": [{"image": PNG}]}, "image_list", COUNT),
        ({"prompt": ""}, "prompt", None),
        ({"prompt": " \n\u200b"}, "prompt", None),
        ({"prompt": "\u2800\u3164\u034f"}, "prompt", None),  # blanks that are no spaces
        ({"colour": "red"}, "colour", None),
        ({"task_type": "image2video", "image_url": "https://x.org/a cat.png"}, "image_url", None),
        ({"task_type": "image2video", "image_url": "https:///cat.png"}, "image_url", None),
        ({"task_type": "image2video", "image_url": "ftp://example.com/cat.png"}, "image_url", None),
    ],
)  # fmt: skip
def test_every_field_is_validated(
    tenant: Tenant, changes: dict[str, object], param: str, code: str | None
) -> None:
    with tenant.client() as client:
        error = assert_error(generate(client, **changes), 422, code or "invalid_request")
    assert error["param"] == param, error


def test_an_unknown_video_model_is_404_with_the_closest_ids(tenant: Tenant) -> None:
    with tenant.client() as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        typo = assert_error(generate(client, model="vidprov/v1.7"), 404, "model_not_found")
        assert typo["type"] == "invalid_request_error" and typo["param"] == "model"
        assert "Did you mean vidprov/v1.6" in typo["message"]
        chat = assert_error(generate(client, model="openai/gpt-4o"), 404, "model_not_found")
        assert "not a video model" in chat["message"]
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start


def test_image_tasks_take_base64_images_data_urls_or_urls(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """Each way of giving the images queues a job of its task type, charged once (5 s
    in standard mode: 175,000 micros), that ends in a playable video."""
    with tenant.client() as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        made = [
            generate(client, task_type="image2video", image_list=[{"image": JPEG}]),
            generate(
                client,
                task_type="image2video",
                image_list=[{"image": f"data:image/png;base64,{PNG}"}],
            ),
            generate(client, task_type="image2video", image_url="https://example.com/a.png"),
            generate(
                client,
                task_type="multi-image2video",
                image_list=[{"image": PNG}, {"image_url": "https://example.com/b.webp"}],
            ),
        ]
        for answer in made:
            assert answer.status_code == 200, answer.text
        records = [answer.json() for answer in made]
        types = ["image2video"] * 3 + ["multi-image2video"]
        for record, task_type in zip(records, types, strict=True):
            assert record["id"].startswith("vgen_") and record["object"] == "generation"
            assert (record["status"], record["progress"], record["video_url"]) == (
                "queued",
                0,
                None,
            )
            assert record["task_type"] == record["metadata"]["task_type"] == task_type
            assert record["model"] == BODY["model"] and record["prompt"] == BODY["prompt"]
            assert record["charge_micros"] == 175_000 and record["refunded"] is False
        ids = [record["id"] for record in records]
        assert len(set(ids)) == 4
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start - 4 * 175_000
        charges = emulator.ledger(tenant.account_id, kind="job_charge")
        assert {e["reference"]: e["amount"] for e in charges} == dict.fromkeys(ids, -175_000)
        emulator.advance(600)
        for record in records:
            done = client.get(f"/generation/{record['id']}").json()
            assert (done["status"], done["progress"], done["error"]) == ("completed", 100, None)
            assert done["task_type"] == record["task_type"] and done["refunded"] is False
            media = httpx.get(done["video_url"])
            assert media.status_code == 200 and media.headers["content-type"] == "video/mp4"
            assert len(media.content) == done["file_size"]
            seconds, width, height = mp4_facts(media.content)
            assert round(seconds) == 5 and width > height  # 16:9
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start - 4 * 175_000


def test_idempotency_key_replays_and_charges_once(tenant: Tenant) -> None:
    with tenant.client(headers={"Idempotency-Key": "video-1"}) as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        first = generate(client)
        again = generate(client)
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json()["id"] == first.json()["id"]
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start - 175_000
        assert_error(generate(client, prompt="something else"), 422, "idempotency_key_mismatch")
        assert len(client.get("/generation").json()["data"]) == 1


def test_too_little_balance_is_402(emulator: EmulatorHandle) -> None:
    poor = emulator.create_tenant(balance_micros=100_000)
    with poor.client() as client:
        error = assert_error(generate(client), 402, "insufficient_credits", "billing_error")
        assert error["metadata"] == {"required_micros": 175_000, "available_micros": 100_000}


def test_listing_is_newest_first_and_paged(tenant: Tenant) -> None:
    with tenant.client() as client:
        made = [generate(client, prompt=f"shot {n}").json()["id"] for n in range(5)]
        first = client.get("/generation", params={"limit": 2}).json()
        assert [r["id"] for r in first["data"]] == made[::-1][:2] and first["has_more"]
        rest = client.get("/generation", params={"limit": 10, "cursor": first["next_cursor"]})
        assert [r["id"] for r in rest.json()["data"]] == made[::-1][2:]
        assert_error(client.get("/generation", params={"limit": 0}), 422, "invalid_request")


def test_forced_outcomes_from_the_control_plane(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as client:
        start = client.get("/ai-gateway/balance").json()["balance_micros"]
        done = generate(client).json()
        forced = emulator.control("POST", f"/jobs/{done['id']}/complete")
        assert forced["status"] == "completed"
        assert client.get(f"/generation/{done['id']}").json()["video_url"]
        failing = generate(client).json()
        failed = emulator.control(
            "POST", f"/jobs/{failing['id']}/fail", {"code": "gpu_on_fire", "message": "Oops."}
        )
        assert failed["error"] == {"code": "gpu_on_fire", "message": "Oops."}
        assert client.get("/ai-gateway/balance").json()["balance_micros"] == start - 175_000
        # A terminal job keeps its outcome: forcing the other one is a 409 (tests/jobs).
        ended = httpx.post(f"{emulator.url}/_emulator/jobs/{done['id']}/fail")
        assert_error(ended, 409, "job_already_ended", "conflict_error")
        assert client.get(f"/generation/{done['id']}").json()["status"] == "completed"
    missing = httpx.post(f"{emulator.url}/_emulator/jobs/vgen_nope/complete")
    assert_error(missing, 404, "not_found")


def test_a_fault_rule_or_the_header_fails_the_job(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with emulator.faults.add(account_id=tenant.account_id, fail_job=True, times=1) as rule:
        with tenant.client() as client:
            failing = generate(client).json()
            fine = generate(client).json()
        assert rule.hits == 1
    with tenant.client(headers={"X-Emulator-Fault": "fail-job"}) as client:
        header_failing = generate(client).json()
        emulator.advance(600)
        assert client.get(f"/generation/{failing['id']}").json()["status"] == "failed"
        assert client.get(f"/generation/{header_failing['id']}").json()["status"] == "failed"
        assert client.get(f"/generation/{fine['id']}").json()["status"] == "completed"


def test_a_refused_job_does_not_use_up_a_rule_failing_jobs(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """A 402 makes no job: the rule's one failure waits for a job that is made."""
    broke = emulator.create_tenant(balance_micros=0)
    path = "/api/v1/generate/video"
    with emulator.faults.add(path=path, fail_job=True, times=1) as rule:
        with broke.client() as client:
            assert_error(generate(client), 402, "insufficient_credits", "billing_error")
        assert rule.hits == 0
        with tenant.client() as client:
            failing = generate(client).json()
            emulator.advance(600)
            assert client.get(f"/generation/{failing['id']}").json()["status"] == "failed"
        assert rule.hits == 1


def test_the_video_scope_is_needed(http: httpx.Client) -> None:
    answer = http.post("/api/v1/generate/video", json=BODY, headers=bearer("sk-emu-demo-gateway"))
    assert_error(answer, 403, "insufficient_scope")


@contextmanager
def video_server(job_speed: float | None) -> Iterator[tuple[str, httpx.Client]]:
    """A server of its own at this job speed, on a manual clock: its control plane's
    URL and a client of the demo video key."""
    from emulator.server import BackgroundServer
    from emulator.settings import Settings

    settings = Settings(db=":memory:", clock="manual", job_speed=job_speed, log_level="warning")
    server = BackgroundServer(settings).start()
    try:
        api = f"{server.url}/api/v1"
        with httpx.Client(base_url=api, headers=bearer("sk-emu-demo-video")) as client:
            yield f"{server.url}/_emulator", client
    finally:
        server.stop()


def test_instant_job_speed_completes_at_creation() -> None:
    with video_server(None) as (_, c):
        record = generate(c).json()
        assert record["status"] == "completed" and record["progress"] == 100
        assert httpx.get(record["video_url"]).content[4:8] == b"ftyp"
        failed = generate(c, prompt="[emulator:fail]").json()
        assert failed["status"] == "failed" and failed["refunded"]


def test_at_the_highest_job_speed_a_failing_job_never_shows_completed() -> None:
    """Processing under a millisecond: the planned failure still comes first (it was
    shown completed, with a playable video, then turned failed a moment later)."""
    with video_server(1_000_000) as (control, c):
        made = generate(c, prompt="a fox [emulator:fail]").json()
        assert made["status"] != "completed" and made["video_url"] is None
        assert httpx.post(f"{control}/clock", json={"advance_seconds": 0.001}).is_success
        failed = c.get(f"/generation/{made['id']}").json()
        assert failed["status"] == "failed" and failed["refunded"] is True


def test_concurrent_generations_never_overdraw(emulator: EmulatorHandle) -> None:
    """20 requests from 8 threads against a balance that pays for exactly 5 jobs."""
    from concurrent.futures import ThreadPoolExecutor

    poor = emulator.create_tenant(balance_micros=5 * 175_000)

    def one(_: int) -> httpx.Response:
        with poor.client() as client:
            return generate(client)

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(one, range(20)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] * 5 + [402] * 15
    assert emulator.account(poor.account_id)["balance_micros"] == 0
    for answer in answers:
        if answer.status_code == 200:
            emulator.control("POST", f"/jobs/{answer.json()['id']}/fail")
    # Every failed job refunded exactly: the opening balance again, to the micro.
    assert emulator.account(poor.account_id)["balance_micros"] == 5 * 175_000
