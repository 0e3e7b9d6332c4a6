"""Fault rules and the X-Emulator-Fault header, through HTTP, the plugin and the openai SDK.

Rules are global to the emulator: each test scopes its rules to its own tenant
(`account_id`) or removes them (the plugin's context manager)."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest

from emulator.gateway.tokens import count_text
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, every_page

CHAT = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hello"}]}


def usage_of(client: httpx.Client, generation_id: str) -> dict:
    return client.get(f"/ai-gateway/usage/{generation_id}").json()


def test_an_error_rule_answers_n_times_then_lets_requests_through(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with emulator.faults.add(
        account_id=tenant.account_id, path="/api/v1/chat/*", status=402, code="budget_exceeded",
        times=2,
    ) as rule, tenant.client() as client:  # fmt: skip
        for _ in range(2):
            error = assert_error(
                client.post("/chat/completions", json=CHAT), 402, "budget_exceeded"
            )
            assert error["type"] == "billing_error"
        assert client.post("/chat/completions", json=CHAT).status_code == 200
        assert rule.hits == 2
        listed = {r["id"]: r for r in emulator.faults.list()}[rule.id]
        assert listed["remaining"] == 0 and listed["matched"] == 2
    assert rule.id not in {r["id"] for r in emulator.faults.list()}  # removed on exit


def test_a_rule_matches_only_what_it_names(emulator: EmulatorHandle, tenant: Tenant) -> None:
    other = emulator.create_tenant()
    with emulator.faults.add(account_id=tenant.account_id, model="openai/gpt-4o", status=503):
        with tenant.client() as client:
            assert_error(client.post("/chat/completions", json=CHAT), 503, "upstream_failed")
            cheap = {**CHAT, "model": "emulator/echo"}
            assert client.post("/chat/completions", json=cheap).status_code == 200
            assert client.get("/ai-gateway/balance").status_code == 200  # no model: no match
        with other.client() as client:
            assert client.post("/chat/completions", json=CHAT).status_code == 200


def test_a_429_rule_gives_retry_after_and_the_sdk_retries_through_it(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with emulator.faults.add(account_id=tenant.account_id, status=429, retry_after=0, times=1):
        with openai.OpenAI(
            base_url=tenant.base_url, api_key=tenant.api_key, max_retries=2
        ) as client:
            answer = client.chat.completions.create(**CHAT)  # type: ignore[call-overload]
        assert answer.choices[0].message.content
    with (
        emulator.faults.add(account_id=tenant.account_id, status=429, times=1),
        tenant.client() as c,
    ):
        response = c.post("/chat/completions", json=CHAT)
        assert_error(response, 429, "rate_limit_exceeded")
        assert response.headers["retry-after"] == "1"


def test_failing_a_provider_route_makes_a_recorded_fallback(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with emulator.faults.add(
        account_id=tenant.account_id, provider="openai", fail_route=True, times=1
    ) as rule, tenant.client() as client:  # fmt: skip
        answer = client.post("/chat/completions", json=CHAT)
        assert answer.status_code == 200 and answer.json()["provider"] != "openai"
        event = usage_of(client, answer.headers["x-generation-id"])
        attempts = event["route_attempts"]
        assert attempts[0]["provider"] == "openai" and attempts[0]["error_code"] == "fault_injected"
        assert attempts[-1]["status"] == "succeeded"
        model = client.get(f"/models/{event['model']}").json()
        served = next(p for p in model["providers"] if p["name"] == attempts[-1]["provider"])
        # a failed attempt answers at once; a served one takes its provider's latency
        assert attempts[0]["latency_ms"] == 5 < attempts[-1]["latency_ms"] == served["latency_ms"]
        assert rule.hits == 1
        again = client.post("/chat/completions", json=CHAT)  # the rule is spent
        assert again.json()["provider"] == "openai"


def test_failing_every_route_is_a_503_with_the_attempts(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with emulator.faults.add(account_id=tenant.account_id, fail_route=True), tenant.client() as c:
        error = assert_error(c.post("/chat/completions", json=CHAT), 503, "upstream_failed")
        codes = {a["error_code"] for a in error["metadata"]["route_attempts"]}
        assert codes == {"fault_injected"}


def test_a_stream_cut_sends_an_error_event_and_records_what_was_sent(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {
        **CHAT,
        "messages": [{"role": "user", "content": "[emulator:tokens=40]"}],
        "stream": True,
    }
    with emulator.faults.add(account_id=tenant.account_id, cut_stream_after=3, times=1):
        seen = []
        with (
            openai.OpenAI(
                base_url=tenant.base_url, api_key=tenant.api_key, max_retries=0
            ) as client,
            pytest.raises(openai.APIError, match="cut after 3 chunks"),
        ):
            for chunk in client.chat.completions.create(**body):  # type: ignore[call-overload]
                seen.append(chunk)
        assert len(seen) == 3
    with tenant.client(headers={"X-Emulator-Fault": "cut=2"}) as c:
        lines = [line for line in c.post("/chat/completions", json=body).text.split("\n\n") if line]
    cut = json.loads(lines[-1].removeprefix("data: "))  # a chunk like the others (SPEC 9)
    assert cut["object"] == "chat.completion.chunk" and cut["id"] and cut["model"]
    assert cut["choices"][0]["finish_reason"] == "error" and cut["error"]["code"] == "stream_cut"
    with tenant.client() as c:
        events = c.get("/ai-gateway/usage", params={"limit": 2}).json()["data"]
        assert 0 < events[0]["completion_tokens"] < 40 and events[0]["status"] == "succeeded"
        assert [e["metadata"]["stream_end"] for e in events] == ["cut", "cut"]
        whole = c.post("/chat/completions", json=body)
        assert whole.status_code == 200
        last = c.get("/ai-gateway/usage", params={"limit": 1}).json()["data"][0]
        assert last["metadata"]["stream_end"] == "complete"


def test_a_cut_rule_is_not_used_up_by_a_stream_too_short_to_cut(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """A review found a `times: 1` rule spent (hits 1, remaining 0) by a stream that
    ended before its cut: the next stream, meant to be cut, was not."""
    short = {**CHAT, "max_tokens": 4, "stream": True}
    forty = [{"role": "user", "content": "[emulator:tokens=40]"}]
    long = {**short, "max_tokens": None, "messages": forty}
    with emulator.faults.add(account_id=tenant.account_id, cut_stream_after=8, times=1) as rule:
        with tenant.client() as c:
            whole = c.post("/chat/completions", json=short).text
            assert "stream_cut" not in whole and whole.endswith("data: [DONE]\n\n")
            kept = emulator.control("GET", f"/faults/{rule.id}")
            assert (kept["hits"], kept["remaining"]) == (0, 1)
            assert "stream_cut" in c.post("/chat/completions", json=long).text
        spent = emulator.control("GET", f"/faults/{rule.id}")
        assert (spent["hits"], spent["remaining"]) == (1, 0)


@pytest.mark.parametrize(("cut", "broken"), [(3, 0), (6, 1)])
def test_a_cut_names_the_answer_it_broke_of_several(tenant: Tenant, cut: int, broken: int) -> None:
    """With `n: 2`, the answers stream one after the other: the error chunk ends the
    one being written, never one that already finished."""
    body = {**CHAT, "n": 2, "max_tokens": 4, "stream": True}
    with tenant.client(headers={"X-Emulator-Fault": f"cut={cut}"}) as c:
        text = c.post("/chat/completions", json=body).text
    chunks = [json.loads(line.removeprefix("data: ")) for line in text.split("\n\n") if line]
    finished = [c["choices"][0]["index"] for c in chunks if c["choices"][0]["finish_reason"]]
    assert finished[-1] == broken and chunks[-1]["choices"][0]["finish_reason"] == "error"
    assert len(finished) == len(set(finished))  # each answer ends once


def test_responses_streams_are_cut_with_a_typed_error_event(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {"model": "openai/gpt-4o", "input": "hello", "stream": True}
    with tenant.client(headers={"X-Emulator-Fault": "cut=2"}) as c:
        text = c.post("/responses", json=body).text
    events = [line for line in text.splitlines() if line.startswith("event: ")]
    assert events == ["event: response.created", "event: response.in_progress", "event: error"]
    assert '"code":"stream_cut"' in text and '"sequence_number":2' in text


def test_a_cut_stream_is_not_kept_for_its_idempotency_key(tenant: Tenant) -> None:
    """Only successful answers are replayed: the retry of a cut stream runs again."""
    for path, body in (
        (
            "/chat/completions",
            {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
        ),
        ("/responses", {"model": "openai/gpt-4o", "input": "hello"}),
    ):
        keyed = {"Idempotency-Key": f"cut{path}"}
        streamed = {**body, "stream": True}
        with tenant.client(headers={**keyed, "X-Emulator-Fault": "cut=2"}) as c:
            assert "stream_cut" in c.post(path, json=streamed).text
        with tenant.client(headers=keyed) as c:
            retried = c.post(path, json=streamed)
        assert "idempotent-replayed" not in retried.headers
        assert "stream_cut" not in retried.text and retried.text.count("\n\n") > 3
        with tenant.client(headers=keyed) as c:  # the whole answer is kept for replay
            replayed = c.post(path, json=streamed)
        assert replayed.headers["idempotent-replayed"] == "true"
        assert replayed.text == retried.text


def test_a_delay_rule_slows_the_answer(emulator: EmulatorHandle, tenant: Tenant) -> None:
    with emulator.faults.add(account_id=tenant.account_id, delay_ms=150), tenant.client() as c:
        start = time.perf_counter()
        assert c.get("/ai-gateway/balance").status_code == 200
        assert time.perf_counter() - start >= 0.15


def test_a_probability_rule_is_seeded_so_runs_repeat(emulator: EmulatorHandle) -> None:
    """The draws follow the rule's matches, not its id or its tenant's, which depend on
    what ran before: other rules and tenants (another test order, `-n`) change nothing."""

    def outcomes(rules_before: int) -> list[int]:
        tenant = emulator.create_tenant()
        others = [emulator.faults.add(path="/api/nowhere", status=500) for _ in range(rules_before)]
        rule = emulator.faults.add(account_id=tenant.account_id, status=500, probability=0.5)
        with rule, tenant.client() as c:
            seen = [c.get("/ai-gateway/balance").status_code for _ in range(20)]
        for other in others:
            other.remove()
        return seen

    first = outcomes(0)
    assert set(first) == {200, 500}  # about half fire
    assert outcomes(3) == first


def test_the_header_speaks_the_same_vocabulary(tenant: Tenant) -> None:
    with tenant.client() as c:
        cases = {"503": (503, "upstream_failed"), "402:budget_exceeded": (402, "budget_exceeded")}
        for value, (status, code) in cases.items():
            response = c.post("/chat/completions", json=CHAT, headers={"X-Emulator-Fault": value})
            assert_error(response, status, code)
        for name in ("openai", "OpenAI"):  # a slug or a display name, as routing takes
            fault = {"X-Emulator-Fault": f"fail-provider={name}"}
            answer = c.post("/chat/completions", json=CHAT, headers=fault)
            assert answer.status_code == 200 and answer.json()["provider"] != "openai"
        for value in ("explode", "fail-provider=OpenAl"):
            bad = c.post("/chat/completions", json=CHAT, headers={"X-Emulator-Fault": value})
            assert assert_error(bad, 400, "invalid_fault_header")["param"] == "X-Emulator-Fault"
        assert "azure" in bad.json()["error"]["message"]  # the providers there are


def test_a_rule_names_a_provider_by_slug_or_display_name(
    http: httpx.Client, tenant: Tenant
) -> None:
    rule = {"match": {"provider": "Azure"}, "action": {"fail_route": True}}
    made = http.post("/_emulator/faults", json=rule)
    assert made.status_code in (200, 201) and made.json()["match"]["provider"] == "azure"
    try:
        with tenant.client() as c:
            answer = c.post("/chat/completions", json=CHAT | {"provider": {"order": ["azure"]}})
        assert answer.json()["provider"] == "openai"  # azure failed over
    finally:
        http.delete(f"/_emulator/faults/{made.json()['id']}")
    unknown = {"match": {"provider": "Azuer"}, "action": {"fail_route": True}}
    error = assert_error(http.post("/_emulator/faults", json=unknown), 422, "invalid_request")
    assert error["param"] == "match.provider" and "azure" in error["message"]


def test_bad_rules_get_422s_naming_the_field(http: httpx.Client) -> None:
    cut = {"cut_stream_after": 2}
    cases = [
        ({"action": {}}, None),
        ({"action": {"status": 200}}, "action.status"),
        ({"action": {"status": 503}, "times": 0}, "times"),
        ({"action": {"status": 503}, "probability": 2}, "probability"),
        ({"match": {"colour": "red"}, "action": {"status": 503}}, "match.colour"),
        ({"match": {"method": "HEAD"}, "action": {"status": 503}}, "match.method"),
        ({"match": {"method": "OPTIONS"}, "action": {"status": 503}}, "match.method"),
        # What the envelope carries as a code or type, and the header takes.
        ({"action": {"status": 503, "code": "bad code!"}}, "action.code"),
        ({"action": {"status": 503, "type": "two words"}}, "action.type"),
        # Paths no rule acts on: `/api` left out, the control plane.
        ({"match": {"path": "/v1/chat/*"}, "action": {"status": 503}}, "match"),
        ({"match": {"path": "/_emulator/health"}, "action": {"status": 503}}, "match"),
    ]
    for path in ("/api/v1/chat/*", "*/chat/*", "/media/*", "/api"):
        made = http.post("/_emulator/faults", json={"match": {"path": path}, "action": cut})
        assert made.status_code == 201, (path, made.text)
        http.delete(f"/_emulator/faults/{made.json()['id']}")
    for body, param in cases:
        error = assert_error(http.post("/_emulator/faults", json=body), 422, "invalid_request")
        if param:
            assert error["param"] == param, (body, error)
    assert_error(http.delete("/_emulator/faults/fault_nope"), 404, "not_found")


def test_the_header_is_ignored_when_faults_are_not_allowed() -> None:
    from emulator.server import BackgroundServer
    from emulator.settings import Settings

    server = BackgroundServer(
        Settings(db=":memory:", allow_faults=False, log_level="warning")
    ).start()
    try:
        headers = {"Authorization": "Bearer sk-emu-demo-all", "X-Emulator-Fault": "503"}
        answer = httpx.post(f"{server.url}/api/v1/chat/completions", json=CHAT, headers=headers)
        assert answer.status_code == 200
    finally:
        server.stop()


def test_a_rule_fires_exactly_times_under_concurrency(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(_: int) -> int:
        with tenant.client() as client:
            return client.get("/ai-gateway/balance").status_code

    with emulator.faults.add(account_id=tenant.account_id, status=503, times=7) as rule:
        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses = list(pool.map(one, range(40)))
        assert statuses.count(503) == 7 and statuses.count(200) == 33
        assert rule.hits == 7


def test_rules_match_on_method_and_raw_api_key_and_clear_all(
    emulator: EmulatorHandle, tenant: Tenant, http: httpx.Client
) -> None:
    other_key = emulator.create_tenant().api_key
    with emulator.faults.add(api_key=tenant.api_key, method="GET", status=500) as rule:
        assert rule.data["match"]["api_key"] == "(redacted)"  # never the key itself
        with tenant.client() as client:
            assert_error(client.get("/ai-gateway/balance"), 500, "internal_error")
            assert client.post("/chat/completions", json=CHAT).status_code == 200  # not GET
        with httpx.Client(
            base_url=tenant.base_url, headers={"Authorization": f"Bearer {other_key}"}
        ) as c:
            assert c.get("/ai-gateway/balance").status_code == 200
    emulator.faults.add(account_id=tenant.account_id, status=503)
    before = emulator.faults.add(account_id=tenant.account_id, delay_ms=1)
    assert http.delete("/_emulator/faults").json()["deleted"] >= 2
    assert emulator.faults.list() == []
    # Ids go on after a clear: a handle kept from before never names a new rule.
    after = emulator.faults.add(account_id=tenant.account_id, path="/api/nowhere", status=503)
    assert after.id != before.id
    after.remove()
    with tenant.client() as client:
        assert client.get("/ai-gateway/balance").status_code == 200


def test_the_header_delays_too(tenant: Tenant) -> None:
    with tenant.client(headers={"X-Emulator-Fault": "latency=150"}) as client:
        start = time.perf_counter()
        assert client.get("/ai-gateway/balance").status_code == 200
        assert time.perf_counter() - start >= 0.15


def test_a_stream_cut_after_its_role_chunk_bills_no_output(tenant: Tenant) -> None:
    body = {**CHAT, "stream": True}
    with tenant.client(headers={"X-Emulator-Fault": "cut=1"}) as c:
        lines = [line for line in c.post("/chat/completions", json=body).text.split("\n\n") if line]
    assert len(lines) == 2 and '"finish_reason":"error"' in lines[1]  # the role chunk, the cut
    with tenant.client() as c:
        event = c.get("/ai-gateway/usage", params={"limit": 1}).json()["data"][0]
    assert event["completion_tokens"] == 0  # nothing of the answer was sent


@pytest.mark.parametrize("model", ["openai/gpt-4o", "anthropic/claude-sonnet-4", "emulator/echo"])
def test_a_stream_cut_inside_a_tool_call_bills_what_of_it_was_sent(
    tenant: Tenant, model: str
) -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query", "limit"],
            },
        },
    }
    body = {**CHAT, "model": model, "tools": [tool], "tool_choice": "required", "stream": True}

    def completion_tokens(headers: dict[str, str]) -> tuple[int, int]:
        with tenant.client(headers=headers) as c:
            lines = [x for x in c.post("/chat/completions", json=body).text.split("\n\n") if x]
            event = c.get("/ai-gateway/usage", params={"limit": 1}).json()["data"][0]
        return len(lines), int(event["completion_tokens"])

    whole_lines, whole = completion_tokens({})
    cut_lines, cut = completion_tokens({"X-Emulator-Fault": "cut=3"})  # role, name, arguments
    assert whole_lines > cut_lines
    assert 0 < cut < whole  # the call's name and first arguments were sent and are billed


def test_a_stream_of_several_answers_cut_after_their_text_bills_each_answer_whole(
    tenant: Tenant,
) -> None:
    # Two answers cut at max_tokens end in a word and start with one: counted joined,
    # "rivers" + "In short" was one token fewer than the answers hold.
    body = {
        **CHAT,
        "messages": [{"role": "user", "content": "tell me about rivers and mountains"}],
        "n": 2,
        "max_tokens": 7,
        "stream": True,
    }
    with tenant.client() as c:
        whole = c.post("/chat/completions", json={**body, "stream": False}).json()
        lines = [x for x in c.post("/chat/completions", json=body).text.split("\n\n") if x]
        last_text = max(i for i, line in enumerate(lines) if '"content":"' in line)
        c.post("/chat/completions", json=body, headers={"X-Emulator-Fault": f"cut={last_text + 1}"})
        event = c.get("/ai-gateway/usage", params={"limit": 1}).json()["data"][0]
    texts = [choice["message"]["content"] for choice in whole["choices"]]
    assert all(texts) and whole["choices"][0]["finish_reason"] == "length"
    assert event["completion_tokens"] == whole["usage"]["completion_tokens"] == 14


@pytest.mark.parametrize(
    "provider", ["emulator", "emulator-responses", "emulator-messages"]
)  # every provider format; each tokenizer family is the format's
def test_a_responses_stream_cut_while_a_call_closes_bills_no_part_of_the_next(
    tenant: Tenant, provider: str
) -> None:
    # The demo fixtures script two get_weather calls. A responses stream closes the first
    # call after taking the second's start: the start was billed, though never sent.
    tool = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
    body = {
        "model": "emulator/echo",
        "input": "What is the weather in Paris and London?",
        "tools": [tool],
        "provider": {"only": [provider]},
        "stream": True,
    }
    family = {"emulator": "chat", "emulator-responses": "responses"}.get(provider, "messages")
    with tenant.client() as c:
        lines = [x for x in c.post("/responses", json=body).text.split("\n\n") if x]
        done = next(i for i, x in enumerate(lines) if "function_call_arguments.done" in x)
        assert "output_item.added" in lines[done + 2]  # the second call, after the first's done
        billed = []
        for cut in (done, done + 1, done + 2):
            c.post("/responses", json=body, headers={"X-Emulator-Fault": f"cut={cut}"})
            billed.append(c.get("/ai-gateway/usage", params={"limit": 1}).json()["data"][0])
    first_call = count_text("get_weather" + '{"city":"Paris","unit":"celsius"}', family)
    assert [event["completion_tokens"] for event in billed] == [first_call] * 3


def test_a_chat_stream_cut_at_the_next_answers_first_delta_bills_none_of_it(
    tenant: Tenant,
) -> None:
    body = {**CHAT, "n": 2, "max_tokens": 7, "stream": True}
    with tenant.client() as c:
        lines = [x for x in c.post("/chat/completions", json=body).text.split("\n\n") if x]
        role = next(i for i, x in enumerate(lines) if '"index":1,"delta":{"role"' in x)
        billed = []
        for cut in (role, role + 1):  # at the second answer's role chunk, then at its text
            c.post("/chat/completions", json=body, headers={"X-Emulator-Fault": f"cut={cut}"})
            billed.append(c.get("/ai-gateway/usage", params={"limit": 1}).json()["data"][0])
    assert '"content":"' in lines[role + 1]
    assert billed[0]["completion_tokens"] == billed[1]["completion_tokens"] == 7


def three_rules(emulator: EmulatorHandle, tenant: Tenant) -> list[str]:
    """The ids of three rules on the tenant's account (the caller removes them)."""
    rule = {"match": {"account_id": tenant.account_id}, "action": {"status": 503}}
    return [emulator.control("POST", "/faults", rule)["id"] for _ in range(3)]


def test_the_list_pages_with_limit_and_cursor(emulator: EmulatorHandle, tenant: Tenant) -> None:
    control = f"{emulator.url}/_emulator/faults"
    made = three_rules(emulator, tenant)
    try:
        seen = [rule["id"] for rule in every_page(control, limit=2)]
        assert [rule for rule in seen if rule in made] == made  # in the order tried, once
        assert [r["id"] for r in emulator.faults.list() if r["id"] in made] == made
        bad = httpx.get(control, params={"cursor": "garbage"})
        assert assert_error(bad, 422, "invalid_request")["param"] == "cursor"
    finally:
        for rule in made:
            emulator.control("DELETE", f"/faults/{rule}")


def test_the_next_page_follows_a_rule_removed_since(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    """The cursor keeps the rule's place, not only its id: removing the last rule shown
    does not end the list early."""
    control = f"{emulator.url}/_emulator/faults"
    made = three_rules(emulator, tenant)
    try:
        listed = [r["id"] for r in httpx.get(control).json()["data"]]
        at = listed.index(made[0])
        first = httpx.get(control, params={"limit": at + 1}).json()
        assert first["data"][-1]["id"] == made[0] and first["has_more"]
        emulator.control("DELETE", f"/faults/{made[0]}")
        rest = httpx.get(control, params={"cursor": first["next_cursor"]}).json()
        assert [r["id"] for r in rest["data"]][:2] == made[1:]
    finally:
        for rule in made[1:]:
            emulator.control("DELETE", f"/faults/{rule}")


def test_an_injected_error_keeps_its_status_and_the_real_errors_headers(tenant: Tenant) -> None:
    """A 422 asked for is a 422 on the OpenAI-compatible routes too (their own invalid
    requests are 400), and an injected `no_route_available` tells SDKs not to retry, as
    the real one does (SPEC 9)."""
    with tenant.client(headers={"X-Emulator-Fault": "422"}) as client:
        assert_error(client.post("/chat/completions", json=CHAT), 422, "invalid_request")
    with tenant.client(headers={"X-Emulator-Fault": "503:no_route_available"}) as client:
        response = client.post("/chat/completions", json=CHAT)
    assert_error(response, 503, "no_route_available")
    assert response.headers["x-should-retry"] == "false"
    with tenant.client(headers={"X-Emulator-Fault": "503"}) as client:
        assert "x-should-retry" not in client.post("/chat/completions", json=CHAT).headers


def test_rules_and_the_header_act_on_the_catalog_too(emulator: EmulatorHandle) -> None:
    """`GET /models` takes no key, but a rule on its path (or the header) still answers:
    a suite can simulate a catalog outage, which every SDK meets first."""
    with httpx.Client(base_url=emulator.base_url) as client:
        with emulator.faults.add(path="/api/v1/models", status=503, times=1) as rule:
            assert_error(client.get("/models"), 503, "upstream_failed")
            assert rule.hits == 1
        assert client.get("/models").status_code == 200
        refused = client.get("/models/count", headers={"X-Emulator-Fault": "429"})
        assert_error(refused, 429, "rate_limit_exceeded")
        assert client.get("/models/count").status_code == 200


def test_a_rule_on_a_provider_that_could_never_fire_is_refused(http: httpx.Client) -> None:
    """An error or a delay acts before routing, when no provider is known yet, and a job
    has no provider route: on a rule matching a provider they would never fire."""
    for action in ({"status": 500}, {"delay_ms": 100}, {"fail_job": True}):
        refused = http.post(
            "/_emulator/faults", json={"match": {"provider": "openai"}, "action": action}
        )
        error = assert_error(refused, 422, "invalid_request")
        assert "fail_route" in error["message"]
    assert not [
        r for r in http.get("/_emulator/faults").json()["data"] if r["match"].get("provider")
    ]


def test_an_injected_405_lists_what_its_path_allows(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    with emulator.faults.add(account_id=tenant.account_id, status=405), tenant.client() as client:
        chat = client.post("/chat/completions", json=CHAT)  # a direct route
        balance = client.get("/ai-gateway/balance")  # a litestar one
    assert chat.status_code == balance.status_code == 405
    with tenant.client() as client:  # as the real 405s of those paths say
        assert chat.headers["allow"] == client.get("/chat/completions").headers["allow"]
        assert balance.headers["allow"] == client.put("/ai-gateway/balance").headers["allow"]
    assert "POST" in chat.headers["allow"] and "GET" in balance.headers["allow"]


def test_a_model_rule_matches_a_request_that_names_its_model_in_models_alone(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {"models": ["openai/gpt-4o-mini", "openai/gpt-4o"], "messages": CHAT["messages"]}
    with emulator.faults.add(model="openai/gpt-4o-mini", status=418), tenant.client() as client:
        assert client.post("/chat/completions", json=body).status_code == 418
        other = {**body, "models": ["openai/gpt-4o"]}
        assert client.post("/chat/completions", json=other).status_code == 200


def test_a_rule_of_several_effects_is_one_hit_and_does_them_all(
    emulator: EmulatorHandle, tenant: Tenant
) -> None:
    body = {
        **CHAT,
        "messages": [{"role": "user", "content": "[emulator:tokens=40]"}],
        "stream": True,
    }
    slow_cut = {"account_id": tenant.account_id, "delay_ms": 50, "cut_stream_after": 2}
    with emulator.faults.add(times=1, **slow_cut) as rule, tenant.client() as c:
        first = c.post("/chat/completions", json=body).text
        assert '"stream_cut"' in first and rule.hits == 1  # delayed, then cut: one hit
        assert '"stream_cut"' not in c.post("/chat/completions", json=body).text  # spent
    video = {"model": "emulator/video", "task_type": "text2video", "prompt": "a lake"}
    slow_fail = {"account_id": tenant.account_id, "delay_ms": 50, "fail_job": True}
    with emulator.faults.add(times=1, **slow_fail) as rule, tenant.client() as c:
        job = c.post("/generate/video", json=video).json()
        emulator.advance(600)
        assert c.get(f"/generation/{job['id']}").json()["status"] == "failed"
        assert rule.hits == 1


def test_a_slow_failing_job_rule_is_not_used_up_by_a_request_refused_before_its_job(
    emulator: EmulatorHandle,
) -> None:
    """Its hit counts where the job is made: a 402 is delayed by it, but the next job
    (a funded one) still fails."""
    broke = emulator.create_tenant(balance_micros=0)
    video = {"model": "emulator/video", "task_type": "text2video", "prompt": "a lake"}
    slow_fail = {"path": "/api/v1/generate/video", "delay_ms": 10, "fail_job": True}
    with emulator.faults.add(times=1, **slow_fail) as rule:
        with broke.client() as c:
            assert_error(c.post("/generate/video", json=video), 402, "insufficient_credits")
        assert rule.hits == 0
        funded = emulator.create_tenant()
        with funded.client() as c:
            job = c.post("/generate/video", json=video).json()
            emulator.advance(600)
            assert c.get(f"/generation/{job['id']}").json()["status"] == "failed"
        assert rule.hits == 1


@pytest.mark.parametrize(
    ("status", "kind", "code"),
    [
        (405, "invalid_request_error", "method_not_allowed"),
        (413, "invalid_request_error", "payload_too_large"),
        (415, "invalid_request_error", "unsupported_media_type"),
        (501, "not_implemented_error", "not_implemented"),
    ],
)
def test_a_status_alone_gets_the_type_and_code_the_emulator_gives_it(
    tenant: Tenant, status: int, kind: str, code: str
) -> None:
    """As the emulator's own 405/413/415/501 are typed; a 501 tells SDKs not to retry, as
    every route not built yet does."""
    with tenant.client(headers={"X-Emulator-Fault": str(status)}) as client:
        response = client.post("/chat/completions", json=CHAT)
    assert assert_error(response, status, code)["type"] == kind
    assert (response.headers.get("x-should-retry") == "false") == (status == 501)
