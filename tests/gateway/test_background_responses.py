"""Responses made with `background: true`: queued, then in progress, then whole on the
virtual clock; cancelled for good; streamed again from a cursor. Through the `openai`
SDK's own background calls (`retrieve`, `cancel`, `retrieve(stream=True)`, `stream`)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import openai
import pytest

from emulator.server import BackgroundServer
from emulator.settings import Settings
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

MODEL = "openai/gpt-4o"
QUESTION = "Explain how database indexes speed up queries"
QUEUED_S, RUNNING_S = 1, 2  # fixtures/video.yaml, family background_response


def background(client: openai.OpenAI, **body: Any) -> Any:
    return client.responses.create(model=MODEL, input=QUESTION, background=True, **body)


def balance(tenant: Tenant) -> int:
    with tenant.client() as http:
        return int(http.get("/ai-gateway/balance").json()["balance_micros"])


def slow_body(tokens: int) -> dict[str, Any]:
    return {"model": "emulator/slow", "input": f"[emulator:tokens={tokens}]", "stream": True}


@contextmanager
def slow_stream(http: httpx.Client, tokens: int = 8) -> Iterator[tuple[str, Iterator[str]]]:
    """A slow background stream begun: its response's id, and its data lines to come."""
    with http.stream("POST", "/responses", json={**slow_body(tokens), "background": True}) as s:
        lines = (line for line in s.iter_lines() if line.startswith("data:"))
        yield json.loads(next(lines)[5:])["response"]["id"], lines


def test_it_is_queued_then_in_progress_then_whole(
    emulator: EmulatorHandle, client: openai.OpenAI
) -> None:
    made = background(client)
    assert (made.status, made.output, made.usage, made.background) == ("queued", [], None, True)
    assert made.completed_at is None and made.output_text == ""
    assert client.responses.retrieve(made.id).status == "queued"
    emulator.advance(QUEUED_S + 0.5)
    running = client.responses.retrieve(made.id)
    assert (running.status, running.output, running.usage) == ("in_progress", [], None)
    emulator.advance(RUNNING_S)
    done = client.responses.retrieve(made.id)
    assert done.status == "completed" and done.usage is not None
    assert done.completed_at == made.created_at + QUEUED_S + RUNNING_S
    # The same answer a foreground request gets: only when it shows differs.
    foreground = client.responses.create(model=MODEL, input=QUESTION)
    assert done.output_text == foreground.output_text != ""
    assert done.usage.output_tokens == foreground.usage.output_tokens  # type: ignore[union-attr]
    assert client.responses.retrieve(made.id) == done  # read again at the same time


def test_it_is_billed_when_made_and_once(
    emulator: EmulatorHandle, tenant: Tenant, client: openai.OpenAI
) -> None:
    before = balance(tenant)
    made = background(client)
    with tenant.client() as http:
        event = http.get(f"/ai-gateway/usage/{made.id}").json()
        assert event["status"] == "succeeded" and event["endpoint"] == "responses"
        assert balance(tenant) == before - event["charge_micros"] < before
        emulator.advance(QUEUED_S + RUNNING_S)
        done = client.responses.retrieve(made.id)
        assert done.usage.charge_micros == event["charge_micros"]  # type: ignore[union-attr]
        assert balance(tenant) == before - event["charge_micros"]
        assert len(http.get("/ai-gateway/usage").json()["data"]) == 1


@pytest.mark.parametrize("after", [0, QUEUED_S + 0.5])
def test_cancelling_is_for_good_and_answers_again_the_same(
    emulator: EmulatorHandle, tenant: Tenant, client: openai.OpenAI, after: float
) -> None:
    made = background(client)
    emulator.advance(after)
    charged = balance(tenant)
    cancelled = client.responses.cancel(made.id)
    assert (cancelled.status, cancelled.output, cancelled.usage) == ("cancelled", [], None)
    assert client.responses.cancel(made.id) == cancelled
    emulator.advance(60)
    assert client.responses.retrieve(made.id) == cancelled
    assert balance(tenant) == charged  # the work was done: its charge stands
    with tenant.client() as http:
        again = http.get(f"/responses/{made.id}", params={"stream": "true"})
        assert "cancelled" in assert_error(again, 400, "invalid_request")["message"]


def test_a_response_done_cannot_be_cancelled(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with tenant.client() as http:
        made = http.post(
            "/responses", json={"model": MODEL, "input": QUESTION, "background": True}
        ).json()
        emulator.advance(QUEUED_S + RUNNING_S)
        error = assert_error(http.post(f"/responses/{made['id']}/cancel"), 400, "invalid_request")
        assert error["param"] == "response_id" and "it is completed" in error["message"]


def test_a_background_stream_begins_queued(client: openai.OpenAI) -> None:
    events = list(background(client, stream=True))
    kinds = [event.type for event in events]
    assert kinds[:3] == ["response.created", "response.queued", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [event.sequence_number for event in events] == list(range(len(events)))
    assert events[0].response.status == events[1].response.status == "queued"  # type: ignore[union-attr]
    done = events[-1].response  # type: ignore[union-attr]
    assert done.background is True
    assert client.responses.retrieve(done.id).output_text == done.output_text != ""


def test_it_streams_again_from_a_cursor(emulator: EmulatorHandle, client: openai.OpenAI) -> None:
    made = background(client)
    emulator.advance(QUEUED_S + RUNNING_S)
    done = client.responses.retrieve(made.id)
    events = list(client.responses.retrieve(made.id, stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].type == "response.created" and events[1].type == "response.queued"
    assert events[-1].response == done  # type: ignore[union-attr]
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == done.output_text
    rest = list(client.responses.retrieve(made.id, stream=True, starting_after=4))
    assert rest == events[5:]
    # The SDK's helper, resumed: it reads the whole stream and skips what came before.
    with client.responses.stream(response_id=made.id, starting_after=4) as stream:
        assert next(iter(stream)).sequence_number == 5
        assert stream.get_final_response().output_text == done.output_text


def test_a_stream_not_yet_done_runs_to_its_end(client: openai.OpenAI) -> None:
    made = background(client)
    events = list(client.responses.retrieve(made.id, stream=True))
    assert events[-1].type == "response.completed"
    assert client.responses.retrieve(made.id).status == "queued"  # the clock did not move


def test_only_a_background_response_streams_again(tenant: Tenant) -> None:
    with tenant.client() as http:
        made = http.post("/responses", json={"model": MODEL, "input": QUESTION}).json()
        error = assert_error(
            http.get(f"/responses/{made['id']}", params={"stream": "true"}), 400, "invalid_request"
        )
        assert error["param"] == "stream"
        for query, param in (
            ({"stream": "maybe"}, "stream"),
            ({"starting_after": "-2"}, "starting_after"),
        ):
            answer = http.get(f"/responses/{made['id']}", params=query)
            assert assert_error(answer, 400, "invalid_request")["param"] == param


def test_store_false_is_still_kept_to_be_polled(tenant: Tenant) -> None:
    with tenant.client() as http:
        body = {"model": MODEL, "input": QUESTION, "background": True, "store": False}
        made = http.post("/responses", json=body).json()
        assert made["store"] is False and made["status"] == "queued"
        assert http.get(f"/responses/{made['id']}").json()["status"] == "queued"


def test_instant_job_speed_answers_it_whole_at_once() -> None:
    settings = Settings(db=":memory:", clock="manual", job_speed=None, log_level="warning")
    server = BackgroundServer(settings).start()
    try:
        with httpx.Client(base_url=server.url) as control:
            key = control.post("/_emulator/accounts", json={}).json()["api_key"]
        with openai.OpenAI(base_url=f"{server.url}/api/v1", api_key=key, max_retries=0) as c:
            made = background(c)
            assert made.status == "completed" and made.output_text != ""
            assert made.completed_at == made.created_at
    finally:
        server.stop()


def test_a_client_that_leaves_a_background_stream_does_not_stop_it(tenant: Tenant) -> None:
    with tenant.client(timeout=30) as http:
        with slow_stream(http, tokens=200) as (ident, lines):
            for _ in range(6):
                next(lines)
        done = http.get(f"/responses/{ident}").json()
        for _ in range(100):  # it runs on once the server notices, at its next write
            if done["status"] != "in_progress":
                break
            time.sleep(0.1)
            done = http.get(f"/responses/{ident}").json()
        assert done["status"] == "completed" and done["usage"]["output_tokens"] == 200
        event = http.get(f"/ai-gateway/usage/{ident}").json()
        assert event["completion_tokens"] == 200 and event["metadata"]["stream_end"] == "complete"
        assert done["usage"]["charge_micros"] == event["charge_micros"]


def test_a_turn_continued_reads_only_the_output_shown(
    emulator: EmulatorHandle, client: openai.OpenAI
) -> None:
    def continued(previous: str) -> int:
        turn = client.responses.create(
            model=MODEL, input="And B-trees?", previous_response_id=previous
        )
        return turn.usage.input_tokens  # type: ignore[union-attr]

    running, stopped = background(client), background(client)
    client.responses.cancel(stopped.id)
    before = continued(running.id)
    assert continued(stopped.id) == before  # neither has shown an answer
    emulator.advance(QUEUED_S + RUNNING_S)
    assert continued(running.id) > before  # now its answer is read too
    assert continued(stopped.id) == before


def sse_events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


@pytest.mark.parametrize(
    "asked",
    [
        {"model": "anthropic/claude-sonnet-4", "reasoning": {"effort": "low", "summary": "auto"}},
        {"model": "openai/o4-mini", "reasoning": {"effort": "low"}},
        {"model": "openai/gpt-4o-mini:online"},
        {"model": "google/gemini-2.5-flash", "debug": {"echo_upstream_body": True}},
    ],
    ids=["messages-provider", "hidden-reasoning", "web-citations", "debug"],
)
def test_a_stream_again_is_the_stream_it_sent(tenant: Tenant, asked: dict[str, Any]) -> None:
    body = {"input": QUESTION, "background": True, "stream": True, **asked}
    with tenant.client() as http:
        sent = sse_events(http.post("/responses", json=body).text)
        ident = next(e for e in sent if e["type"] == "response.created")["response"]["id"]
        again = http.get(f"/responses/{ident}", params={"stream": "true"})
        assert again.headers["content-type"] == "text/event-stream"
        assert again.headers["cache-control"] == "no-cache"
        assert sse_events(again.text) == sent
        later = http.get(f"/responses/{ident}", params={"stream": "true", "starting_after": 6})
        assert sse_events(later.text) == sent[7:]
        assert sent[-1]["response"] == http.get(f"/responses/{ident}").json()


def test_a_stream_cut_fault_cuts_a_stream_again(emulator: EmulatorHandle, tenant: Tenant) -> None:
    body = {"model": MODEL, "input": QUESTION, "background": True, "stream": True}
    with tenant.client() as http:
        sent = sse_events(http.post("/responses", json=body).text)
        ident = sent[0]["response"]["id"]
        again = {"stream": "true", "starting_after": 2}
        cut = http.get(f"/responses/{ident}", params=again, headers={"X-Emulator-Fault": "cut=3"})
        events = sse_events(cut.text)
        assert events[:3] == sent[3:6]
        assert events[3]["type"] == "error" and events[3]["code"] == "stream_cut"
        assert events[3]["sequence_number"] == 6 and "after 3 chunks" in events[3]["message"]
        rule = {"account_id": tenant.account_id, "method": "GET", "cut_stream_after": 1}
        with emulator.faults.add(**rule, times=1) as fault:
            once = sse_events(http.get(f"/responses/{ident}", params={"stream": "true"}).text)
            assert [e["type"] for e in once] == ["response.created", "error"]
            assert fault.hits == 1
        whole = sse_events(http.get(f"/responses/{ident}", params={"stream": "true"}).text)
        assert whole == sent  # the stored response is as it was


def test_one_made_whole_streams_again_what_it_shows(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {"model": "openai/o4-mini", "input": QUESTION, "background": True}
    with tenant.client() as http:
        made = http.post("/responses", json=body).json()
        emulator.advance(QUEUED_S + RUNNING_S)
        done = http.get(f"/responses/{made['id']}").json()
        events = sse_events(http.get(f"/responses/{made['id']}", params={"stream": "true"}).text)
    added = [e["item"]["type"] for e in events if e["type"] == "response.output_item.added"]
    assert added == [item["type"] for item in done["output"]] == ["reasoning", "message"]
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert "".join(deltas) == done["output_text"] and len(deltas) > 1
    assert events[-1]["response"] == done


def test_an_idempotent_retry_of_a_stream_left_early_is_replayed(tenant: Tenant) -> None:
    headers = {"Idempotency-Key": "background-left-early"}
    with tenant.client(timeout=30, headers=headers) as http:
        with slow_stream(http, tokens=120) as (ident, lines):
            next(lines)
        for _ in range(100):  # it runs on: kept whole when it ends
            if http.get(f"/responses/{ident}").json().get("status") == "completed":
                break
            time.sleep(0.1)
        retry = http.post("/responses", json={**slow_body(120), "background": True})
        assert retry.headers["idempotent-replayed"] == "true"
        assert sse_events(retry.text)[-1]["response"]["id"] == ident
        events = http.get("/ai-gateway/usage").json()["data"]
        assert len(events) == 1 and events[0]["completion_tokens"] == 120


def test_a_stream_cut_upstream_leaves_it_failed(tenant: Tenant) -> None:
    body = {"model": MODEL, "input": QUESTION, "background": True, "stream": True}
    with tenant.client(headers={"X-Emulator-Fault": "cut=5"}) as http:
        sent = sse_events(http.post("/responses", json=body).text)
    assert sent[-1]["type"] == "error"
    ident = sent[0]["response"]["id"]
    with tenant.client() as http:
        failed = http.get(f"/responses/{ident}").json()
        assert failed["status"] == "failed" and failed["error"]["code"] == "server_error"
        assert (failed["output"], failed["usage"]) == ([], None)
        again = sse_events(http.get(f"/responses/{ident}", params={"stream": "true"}).text)
        assert again[:-1] == sent[:-1]  # what was sent, then the failure where the cut was
        assert again[-1]["type"] == "response.failed" and again[-1]["response"] == failed
        assert again[-1]["sequence_number"] == sent[-1]["sequence_number"] == 5
        error = assert_error(http.post(f"/responses/{ident}/cancel"), 400, "invalid_request")
        assert "it is failed" in error["message"]


def test_one_cancelled_while_it_streams_ends_cancelled(tenant: Tenant) -> None:
    with tenant.client(timeout=30) as http:
        with slow_stream(http) as (ident, lines):
            running = http.get(f"/responses/{ident}").json()
            assert (running["status"], running["output"]) == ("in_progress", [])
            busy = http.get(f"/responses/{ident}", params={"stream": "true"})
            assert "still being streamed" in assert_error(busy, 400, "invalid_request")["message"]
            assert http.post(f"/responses/{ident}/cancel").json()["status"] == "cancelled"
            rest = list(lines)
        assert json.loads(rest[-1][5:])["type"] == "response.completed"  # it was not stopped
        assert http.get(f"/responses/{ident}").json()["status"] == "cancelled"


def test_one_deleted_while_it_streams_stays_deleted(tenant: Tenant) -> None:
    with tenant.client(timeout=30) as http:
        with slow_stream(http) as (ident, lines):
            assert http.delete(f"/responses/{ident}").json()["deleted"] is True
            list(lines)
        assert_error(http.get(f"/responses/{ident}"), 404, "not_found")


def test_one_streamed_completes_when_its_stream_ends(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with tenant.client(timeout=30) as http:
        with slow_stream(http) as (ident, lines):
            emulator.advance(100.5)
            list(lines)
        done = http.get(f"/responses/{ident}").json()
    assert done["status"] == "completed"
    assert done["completed_at"] >= done["created_at"] + 101  # not before the clock moved


def test_an_item_is_named_only_once_it_is_shown(
    emulator: EmulatorHandle, tenant: Tenant, client: openai.OpenAI
) -> None:
    made = background(client)
    message = sse_events(
        httpx.get(
            f"{emulator.base_url}/responses/{made.id}",
            params={"stream": "true"},
            headers={"Authorization": f"Bearer {tenant.api_key}"},
        ).text
    )[-1]["response"]["output"][0]
    body = {"model": MODEL, "input": [{"type": "item_reference", "id": message["id"]}]}
    with tenant.client() as http:
        hidden = http.post("/responses", json=body)
        assert assert_error(hidden, 400, "item_not_found")["param"] == "input[0].id"
        emulator.advance(QUEUED_S + RUNNING_S)
        assert http.post("/responses", json=body).status_code == 200


def test_the_async_client_polls_cancels_and_resumes(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    async def main() -> tuple[list[str], str, str, int, str]:
        client = openai.AsyncOpenAI(
            base_url=emulator.base_url, api_key=tenant.api_key, max_retries=0
        )
        async with client:
            made = await client.responses.create(model=MODEL, input=QUESTION, background=True)
            statuses = [made.status]
            current = made
            while current.status in ("queued", "in_progress"):
                emulator.advance(1)
                current = await client.responses.retrieve(made.id)
                statuses.append(current.status)
            stream = await client.responses.retrieve(made.id, stream=True, starting_after=2)
            resumed = [event async for event in stream]
            other = await client.responses.create(model=MODEL, input=QUESTION, background=True)
            cancelled = await client.responses.cancel(other.id)
            last = resumed[-1].response.output_text  # type: ignore[union-attr]
            return statuses, current.output_text, last, resumed[0].sequence_number, cancelled.status

    statuses, text, resumed_text, first, cancelled = asyncio.run(main())
    assert statuses == ["queued", "in_progress", "in_progress", "completed"]
    assert text == resumed_text != "" and first == 3 and cancelled == "cancelled"


def test_a_fault_fails_it_half_way_through_its_run(
    emulator: EmulatorHandle, tenant: Tenant, client: openai.OpenAI
) -> None:
    """`fail-job` (or a rule's `fail_job`) fails it as it fails a job: half-way through
    its run, `failed` with `server_error`, no output; the charge stands, as a cancel's."""
    before = balance(tenant)
    made = client.responses.create(
        model=MODEL, input=QUESTION, background=True,
        extra_headers={"X-Emulator-Fault": "fail-job"},
    )  # fmt: skip
    assert made.status == "queued" and balance(tenant) < before
    emulator.advance(QUEUED_S + RUNNING_S / 2 - 0.1)
    assert client.responses.retrieve(made.id).status == "in_progress"
    emulator.advance(0.2)
    failed = client.responses.retrieve(made.id)
    assert (failed.status, failed.output, failed.usage) == ("failed", [], None)
    assert failed.error is not None and failed.error.code == "server_error"
    events = list(client.responses.retrieve(made.id, stream=True))
    assert [e.type for e in events][-2:] == ["response.in_progress", "response.failed"]
    emulator.advance(RUNNING_S)
    assert client.responses.retrieve(made.id).status == "failed"


def test_a_streamed_one_cut_short_by_max_output_tokens_has_no_completed_at(
    client: openai.OpenAI,
) -> None:
    """`completed_at` only when completed, as for one made whole or in the foreground."""
    events = list(
        client.responses.create(
            model=MODEL, input=QUESTION, background=True, stream=True, max_output_tokens=20
        )
    )
    last = events[-1]
    assert last.type == "response.incomplete" and last.response.completed_at is None
    assert client.responses.retrieve(last.response.id).completed_at is None


def test_one_still_streaming_cannot_be_forced(emulator: EmulatorHandle, tenant: Tenant) -> None:
    """Its stream decides how it ends: forcing it meanwhile is 409, saying to cut it."""
    with tenant.client() as http, slow_stream(http) as (ident, lines):
        for action in ("complete", "fail"):
            forced = httpx.post(f"{emulator.url}/_emulator/jobs/{ident}/{action}")
            assert "cut its stream" in assert_error(forced, 409, "job_already_ended")["message"]
        assert '"response.completed"' in list(lines)[-1]  # the stream ran to its end
    with tenant.client() as http:
        assert http.get(f"/responses/{ident}").json()["status"] == "completed"


def test_a_stream_running_in_a_restored_snapshot_is_failed_not_running_for_ever(
    tmp_path: Any,
) -> None:
    """Its stream ran in the state saved: nothing will end it in the state restored
    (as after a crash, which start-up ends the same way)."""
    server = BackgroundServer(Settings(db=str(tmp_path / "s.db"), port=0)).start()
    try:
        with httpx.Client(base_url=server.url) as control:
            key = control.post("/_emulator/accounts", json={}).json()["api_key"]
            headers = {"Authorization": f"Bearer {key}"}
            with httpx.Client(base_url=f"{server.url}/api/v1", headers=headers) as http:
                with slow_stream(http) as (response_id, lines):
                    saved = control.post("/_emulator/snapshots", json={"name": "mid"})
                    assert saved.status_code == 201, saved.text
                    assert list(lines)[-1] != ""  # the stream ends whole
                assert http.get(f"/responses/{response_id}").json()["status"] == "completed"
                restored = control.post("/_emulator/snapshots/mid/restore")
                assert restored.status_code == 200, restored.text
                got = http.get(f"/responses/{response_id}").json()
                assert got["status"] == "failed" and "restore" in got["error"]["message"]
                control.post("/_emulator/clock", json={"advance_seconds": 3600})
                assert http.get(f"/responses/{response_id}").json()["status"] == "failed"
                replay = http.get(f"/responses/{response_id}", params={"stream": "true"})
                kinds = [
                    json.loads(line[5:])["type"]
                    for line in replay.text.splitlines()
                    if line.startswith("data:")
                ]
                assert kinds == ["response.created", "response.failed"]
    finally:
        server.stop()
