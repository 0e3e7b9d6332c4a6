"""GET/PUT /_emulator/replies: scripted replies replaced at run time, checked as the
fixtures' are, back to the fixtures' on reset."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import openai
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": WEATHER}}
    for name in ("get_weather", "book_table")
]
RULES = [
    {
        "pattern": "^book a table in oslo$",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Oslo"}},
            {"name": "book_table", "arguments": {"city": "Oslo", "seats": "two"}},
        ],
    },
    {"pattern": "^ping$", "reply": "pong", "models": ["openai/gpt-4o"]},
]


@pytest.fixture
def control(demo: EmulatorHandle) -> Iterator[httpx.Client]:
    """The control plane; the fixtures' replies are back after the test."""
    with httpx.Client(base_url=f"{demo.url}/_emulator") as client:
        yield client
        client.post("/reset")


def ask(client: openai.OpenAI, text: str) -> str | None:
    messages = [{"role": "user", "content": text}]
    answer = client.chat.completions.create(model="openai/gpt-4o", messages=messages)  # type: ignore[arg-type]
    return answer.choices[0].message.content


def test_replaced_replies_answer_at_once_and_a_reset_brings_back_the_fixtures(
    control: httpx.Client, demo: EmulatorHandle
) -> None:
    fixtures = control.get("/replies").json()["replies"]
    assert "The capital of France is Paris." in [rule.get("reply") for rule in fixtures]
    put = control.put("/replies", json={"replies": RULES})
    assert put.status_code == 200, put.text
    stored = [{**RULES[0], "models": []}, RULES[1]]
    assert put.json() == control.get("/replies").json() == {"replies": stored}

    tenant = demo.create_tenant()
    with openai.OpenAI(base_url=demo.base_url, api_key=tenant.api_key, max_retries=0) as client:
        booked = client.chat.completions.create(
            model="openai/gpt-4o",
            messages=[{"role": "user", "content": "Book a table in Oslo"}],
            tools=TOOLS,  # type: ignore[arg-type]
        )
        calls = booked.choices[0].message.tool_calls or []
        assert [(c.function.name, c.function.arguments) for c in calls] == [
            ("get_weather", '{"city":"Oslo"}'),
            # as scripted, not as the schema says
            ("book_table", '{"city":"Oslo","seats":"two"}'),
        ]
        assert ask(client, "ping") == "pong"
        assert ask(client, "What is the capital of France?") != "The capital of France is Paris."

    assert control.post("/reset").status_code == 200
    assert control.get("/replies").json()["replies"] == fixtures
    tenant = demo.create_tenant()
    with openai.OpenAI(base_url=demo.base_url, api_key=tenant.api_key, max_retries=0) as client:
        assert ask(client, "What is the capital of France?") == "The capital of France is Paris."


@pytest.mark.parametrize(
    ("rule", "param"),
    [
        ({"pattern": "x", "reply": "y", "tool_calls": [{"name": "f"}]}, "replies[0]"),
        ({"pattern": "x"}, "replies[0]"),
        ({"pattern": "x", "tool_calls": [{"arguments": {}}]}, "replies[0].tool_calls[0].name"),
        ({"pattern": "x", "tool_calls": [{"name": "f", "arguments": [1]}]},
         "replies[0].tool_calls[0].arguments"),
        ({"pattern": "(", "reply": "y"}, "replies[0].pattern"),
        # `regex` would spell out 99,999,999 repeats (gigabytes) before answering anything
        ({"pattern": "a{99999999}", "reply": "y"}, "replies[0].pattern"),
        ({"pattern": "(?:(?:a{100}){100}){100}", "reply": "y"}, "replies[0].pattern"),
        ({"pattern": "x", "reply": "y", "extra": 1}, "replies[0].extra"),
    ],
)  # fmt: skip
def test_a_broken_rule_is_a_422_naming_the_field_and_changes_nothing(
    control: httpx.Client, rule: dict, param: str
) -> None:
    before = control.get("/replies").json()
    refused = control.put("/replies", json={"replies": [rule]})
    assert assert_error(refused, 422, "invalid_request")["param"] == param
    assert control.get("/replies").json() == before


def test_a_body_that_is_not_a_list_of_rules_is_refused(control: httpx.Client) -> None:
    assert_error(control.put("/replies", json=[RULES[1]]), 400, "invalid_request")  # no object
    for body in ({"replies": {"pattern": "x"}}, {}):
        assert_error(control.put("/replies", json=body), 422, "invalid_request")


def test_no_rules_means_every_answer_is_generated(control: httpx.Client, tenant: Tenant) -> None:
    assert control.put("/replies", json={"replies": []}).json() == {"replies": []}
    with tenant.client() as http:
        answer = http.post(
            "/chat/completions",
            json={"model": "openai/gpt-4o", "messages": [{"role": "user", "content": "hello"}]},
        ).json()
    assert answer["choices"][0]["message"]["content"] != "Hello! How can I help you today?"


def test_a_pattern_that_backtracks_without_end_cannot_hang_the_server(
    control: httpx.Client, client: openai.OpenAI
) -> None:
    rules = [{"pattern": "^(a|aa)+$", "reply": "only a's"}]  # exponential on "aaa...b"
    assert control.put("/replies", json={"replies": rules}).status_code == 200
    start = time.perf_counter()
    answer = ask(client, "a" * 60 + "b")  # Python's re: longer than the age of the universe
    assert time.perf_counter() - start < 5
    assert answer and answer != "only a's"  # taken as not matching: generated
    assert ask(client, "aaaa") == "only a's"  # the rule still answers what it matches


def test_many_slow_rules_share_one_budget(control: httpx.Client, client: openai.OpenAI) -> None:
    """Each rule had 0.1 s of its own: 40 such rules held every request 4 s."""
    rules = [{"pattern": f"^(a|aa)+{i}$", "reply": "only a's"} for i in range(40)]
    assert control.put("/replies", json={"replies": rules}).status_code == 200
    start = time.perf_counter()
    answer = ask(client, "a" * 60)
    assert time.perf_counter() - start < 2
    assert answer and answer != "only a's"
