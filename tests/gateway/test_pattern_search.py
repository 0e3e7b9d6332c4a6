"""Pattern searches run under one budget a request: a pattern that backtracks without
end (a client's JSON schema, an operator's scripted reply) cannot hold the server.

A review found `^(?=(a+)+!)a{27}` in a structured-output schema held every client for
20 s under Python's `re`, each character more doubling it; any key could send it,
even one with no money. The `regex` module sees through that one; `(a|aa)+` defeats
it too, and meets the timeout.
"""

from __future__ import annotations

import re
import time

import openai
import pytest
from jsonschema import Draft202012Validator

from emulator.gateway.pattern_search import (
    BUDGET_S,
    PatternTooSlow,
    match_budget,
    search,
    timed_jsonschema,
)
from emulator.gateway.schema_values import SchemaProblem, check_schema
from emulator.testing import Tenant
from tests.helpers import assert_error

SLOW = "^(?=(a|aa)+!)a{30}"  # backtracks without end on a string of 30 a's
HI = [{"role": "user", "content": "hi"}]


def test_a_search_answers_as_re_does() -> None:
    assert search(r"^\d{3}-[a-z]+$", "123-abc")
    assert not search(r"^\d{3}$", "12")
    with pytest.raises(re.error):
        search("(", "x")


def test_a_slow_search_stops_at_the_budget_and_names_its_pattern() -> None:
    start = time.perf_counter()
    with pytest.raises(PatternTooSlow) as raised:
        search("^(a|aa)+!", "a" * 40)
    # Unbounded, this search runs for minutes; the slack is for a loaded machine (two
    # test workers beside other work once took more than the budget and a second).
    assert time.perf_counter() - start < BUDGET_S + 10
    assert raised.value.pattern == "^(a|aa)+!"
    assert "takes too long to match" in raised.value.sentence()


def test_searches_in_one_budget_share_it() -> None:
    with match_budget(0.05), pytest.raises(PatternTooSlow):
        for _ in range(10_000):
            search("^(a|aa)+!", "a" * 18)  # about a millisecond each


def test_jsonschema_validation_runs_under_the_budget() -> None:
    timed_jsonschema()
    schema = {
        "type": "object",
        "properties": {"k": {"type": "string", "pattern": "^(a|aa)+!"}},
        "patternProperties": {"^(b|bb)+!": {}},
        "additionalProperties": False,
    }
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"k": "aa!"})
    for value in ({"k": "a" * 40}, {"b" * 40: 1}):
        with pytest.raises(PatternTooSlow):
            validator.is_valid(value)


def test_a_schema_whose_pattern_backtracks_without_end_is_refused() -> None:
    schema = {"type": "string", "pattern": SLOW}
    for _ in range(2):  # the second time from the verdict kept, without searching
        with pytest.raises(SchemaProblem) as raised:
            check_schema(schema)
        assert SLOW in raised.value.message and "too long" in raised.value.message


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": SLOW},
        {"type": "object", "propertyNames": {"pattern": SLOW}, "minProperties": 1},
    ],
    ids=["pattern", "propertyNames"],
)
def test_such_a_schema_is_a_400_while_other_clients_are_served(
    tenant: Tenant, schema: dict[str, object]
) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    with tenant.client(timeout=10) as http:
        start = time.perf_counter()
        reply = http.post(
            "/chat/completions",
            json={"model": "openai/gpt-4o", "messages": HI, "response_format": fmt},
        )
        assert time.perf_counter() - start < 5  # it took 20 s to days
    error = assert_error(reply, 400, "invalid_response_format", "invalid_request_error")
    assert "takes too long to match" in error["message"] and SLOW in error["message"]
    assert error["param"] == "response_format.json_schema.schema"


def test_a_tool_schema_with_such_a_pattern_is_refused_through_the_sdk(
    client: openai.OpenAI,
) -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string", "pattern": SLOW + "b"}},
                "required": ["q"],
            },
        },
    }
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="openai/gpt-4o", messages=HI, tools=[tool])  # type: ignore[arg-type, list-item]
    assert raised.value.code == "invalid_tool_schema"
