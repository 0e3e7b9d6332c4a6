"""Anthropic's web search tool (`web_search_20250305` and its successors) on `/messages`
through Anthropic's SDK: the gateway searches, and answers as Anthropic's API does, with
a `server_tool_use` block, a `web_search_tool_result` block and text that cites the
results, whole and streamed; the blocks go back in the next turn; each result is charged;
the tool's settings are honoured or refused as Anthropic's API refuses them."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from emulator.gateway import native_search
from emulator.testing import Tenant
from tests.helpers import assert_error, block_kinds, claude_stream

SONNET = "anthropic/claude-sonnet-4"
SEARCH: Any = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
QUESTION: Any = [{"role": "user", "content": "What are the latest findings on reef bleaching?"}]
LOOKUP: Any = {"name": "lookup", "input_schema": {"type": "object", "properties": {}}}


def asked(**body: Any) -> dict[str, Any]:
    return {"model": SONNET, "max_tokens": 400, "messages": QUESTION, "tools": [SEARCH], **body}


def ask(claude: anthropic.Anthropic, **body: Any) -> Any:
    return claude.messages.create(**asked(**body))


def stream(claude: anthropic.Anthropic, **body: Any) -> tuple[list[Any], Any]:
    return claude_stream(claude, **asked(**body))


def without_ids(message: Any) -> list[dict[str, Any]]:
    """A message's content, its search's id aside (each request has its own)."""
    content = [block.model_dump(exclude_none=True) for block in message.content]
    for block in content:
        block.pop("id", None)
        block.pop("tool_use_id", None)
    return content


def test_the_answer_shows_the_search_and_cites_its_results(
    claude: anthropic.Anthropic, tenant: Tenant
) -> None:
    raw = claude.messages.with_raw_response.create(
        model=SONNET, max_tokens=400, messages=QUESTION, tools=[SEARCH]
    )
    answer = raw.parse()
    plain = claude.messages.create(model=SONNET, max_tokens=400, messages=QUESTION)
    call, results, *texts = answer.content
    assert isinstance(call, anthropic.types.ServerToolUseBlock)
    assert call.name == "web_search" and call.id.startswith("srvtoolu_")
    assert call.input == {"query": QUESTION[0]["content"]}
    assert isinstance(results, anthropic.types.WebSearchToolResultBlock)
    assert results.tool_use_id == call.id and isinstance(results.content, list)
    assert len(results.content) == 5
    urls = [result.url for result in results.content]
    assert all(
        url.split("/")[2].endswith(("example.com", "example.org", "example.net")) for url in urls
    )
    assert all(result.page_age and result.encrypted_content for result in results.content)
    # Each sentence cites the next result, in order, with its text and title.
    citing = [block for block in texts if block.citations]
    assert citing and all(block.type == "text" for block in texts)
    for block, result in zip(citing, results.content, strict=False):
        (citation,) = block.citations
        assert isinstance(citation, anthropic.types.CitationsWebSearchResultLocation)
        assert (citation.url, citation.title) == (result.url, result.title)
        assert citation.cited_text.startswith("An emulated page about")
    assert "Sources:" not in "".join(block.text for block in texts)  # cited, not linked
    usage = answer.usage
    assert usage.server_tool_use is not None and usage.server_tool_use.web_search_requests == 1
    assert plain.usage.server_tool_use is None and block_kinds(plain) == ["text"]
    # The results are read as input, and each is charged.
    assert usage.input_tokens > plain.usage.input_tokens + 100
    with tenant.client() as http:
        event = http.get(f"/ai-gateway/usage/{raw.headers['x-generation-id']}").json()
    assert event["web_search_results"] == 5
    counted = claude.messages.count_tokens(model=SONNET, messages=QUESTION, tools=[SEARCH])
    assert counted.input_tokens == usage.input_tokens


def test_the_stream_sends_the_same_blocks(claude: anthropic.Anthropic) -> None:
    whole = ask(claude)
    events, streamed = stream(claude)
    assert without_ids(streamed) == without_ids(whole)
    assert streamed.content[0].id == streamed.content[1].tool_use_id  # type: ignore[union-attr]
    starts = [e for e in events if e.type == "content_block_start"]
    assert [e.index for e in starts] == list(range(len(whole.content)))
    assert [e.content_block.type for e in starts[:2]] == [
        "server_tool_use",
        "web_search_tool_result",
    ]
    usage = streamed.usage.server_tool_use
    assert usage is not None and usage.web_search_requests == 1


def test_thinking_comes_before_the_search(claude: anthropic.Anthropic) -> None:
    thinking: Any = {"type": "enabled", "budget_tokens": 1024}
    whole = ask(claude, max_tokens=2000, thinking=thinking)
    _, streamed = stream(claude, max_tokens=2000, thinking=thinking)
    assert block_kinds(whole)[:3] == ["thinking", "server_tool_use", "web_search_tool_result"]
    assert without_ids(streamed) == without_ids(whole)


def test_the_blocks_go_back_in_the_next_turn(claude: anthropic.Anthropic) -> None:
    first = ask(claude)
    follow_up = {"role": "user", "content": "And what about kelp forests?"}
    turns: Any = [*QUESTION, {"role": "assistant", "content": first.content}, follow_up]
    second = ask(claude, messages=turns)
    texts = [block for block in first.content if block.type == "text"]
    unsearched: Any = [*QUESTION, {"role": "assistant", "content": texts}, follow_up]
    shorter = ask(claude, messages=unsearched)
    assert second.content[0].input == {"query": "And what about kelp forests?"}  # type: ignore[union-attr]
    # The model reads the first search again: each result's title, URL and content.
    read = [native_search.read_back(block.model_dump()) for block in first.content[:2]]
    assert read[0] == f"Searched the web for: {QUESTION[0]['content']}"
    for result in first.content[1].content:  # type: ignore[union-attr]
        assert f"{result.title}\n{result.url}\nAn emulated page about" in read[1]
    assert second.usage.input_tokens > shorter.usage.input_tokens + 5 * 30


def test_the_tool_choice_decides_whether_it_searches(claude: anthropic.Anthropic) -> None:
    none = ask(claude, tool_choice={"type": "none"})
    any_tool = ask(claude, tool_choice={"type": "any"})
    named = ask(claude, tool_choice={"type": "tool", "name": "web_search"})
    other = ask(claude, tools=[SEARCH, LOOKUP], tool_choice={"type": "tool", "name": "lookup"})
    assert block_kinds(none) == ["text"] and none.usage.server_tool_use is None
    searched = ["server_tool_use", "web_search_tool_result"]
    assert block_kinds(any_tool)[:2] == block_kinds(named)[:2] == searched
    assert block_kinds(other) == ["tool_use"] and other.usage.server_tool_use is None
    # After a tool's result the model answers from it: no search.
    result: Any = [
        *QUESTION,
        {"role": "assistant", "content": other.content},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": other.content[0].id, "content": "ok"}  # type: ignore[union-attr]
            ],
        },
    ]
    answered = ask(claude, tools=[SEARCH, LOOKUP], messages=result)
    assert block_kinds(answered) == ["text"]


def test_domain_filters_choose_where_results_come_from(claude: anthropic.Anthropic) -> None:
    allowed = ask(claude, tools=[{**SEARCH, "allowed_domains": ["nature.com", "noaa.gov/reefs"]}])
    blocked = ask(claude, tools=[{**SEARCH, "blocked_domains": ["example.com", "example.org"]}])
    everything = ["example.com", "example.org", "example.net"]
    nothing = ask(claude, tools=[{**SEARCH, "blocked_domains": everything}])
    allowed_urls = [r.url for r in allowed.content[1].content]  # type: ignore[union-attr]
    assert all(
        url.startswith(("https://nature.com/", "https://noaa.gov/reefs/")) for url in allowed_urls
    )
    assert len(allowed_urls) == 5
    hosts = {r.url.split("/")[2] for r in blocked.content[1].content}  # type: ignore[union-attr]
    assert hosts and all(host.endswith("example.net") for host in hosts)  # subdomains too
    assert nothing.content[1].content == []  # type: ignore[union-attr]
    assert not any(getattr(block, "citations", None) for block in nothing.content)


def test_structured_output_shows_the_search_without_citing(claude: anthropic.Anthropic) -> None:
    schema = {
        "type": "object",
        "properties": {"summary": {"type": "string"}},
        "required": ["summary"],
        "additionalProperties": False,
    }
    answer = ask(claude, output_config={"format": {"type": "json_schema", "schema": schema}})
    assert block_kinds(answer) == ["server_tool_use", "web_search_tool_result", "text"]
    assert answer.content[2].citations is None  # type: ignore[union-attr]


def test_openrouters_server_tool_links_its_sources_on_messages(claude: anthropic.Anthropic) -> None:
    tool: Any = {"type": "openrouter:web_search", "parameters": {"max_results": 2}}
    answer = ask(claude, tools=[tool])
    assert block_kinds(answer) == ["text"] and answer.usage.server_tool_use is None
    assert answer.content[0].text.count("](https://") == 2  # type: ignore[union-attr]


BAD_TOOLS = [
    ({**SEARCH, "name": "search"}, "tools[0].name"),
    ({**SEARCH, "max_uses": 0}, "tools[0].max_uses"),
    ({**SEARCH, "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}, "tools[0]"),
    ({**SEARCH, "allowed_domains": ["https://a.com"]}, "tools[0].allowed_domains[0]"),
    ({**SEARCH, "user_location": {"type": "exact"}}, "tools[0].user_location.type"),
    ({"type": "code_execution_20250825", "name": "code_execution"}, "tools[0]"),
]


@pytest.mark.parametrize(
    ("tool", "param"), BAD_TOOLS, ids=[p for _, p in BAD_TOOLS[:5]] + ["other"]
)
def test_a_bad_search_tool_is_refused(tenant: Tenant, tool: Any, param: str) -> None:
    body = {"model": SONNET, "max_tokens": 20, "messages": QUESTION, "tools": [tool]}
    with tenant.client() as http:
        error = assert_error(http.post("/messages", json=body), 400, "invalid_request")
    assert error["param"] == param


def test_search_tools_are_one_and_their_name_is_theirs(tenant: Tenant) -> None:
    body = {"model": SONNET, "max_tokens": 20, "messages": QUESTION}
    named = {**LOOKUP, "name": "web_search"}
    with tenant.client() as http:
        twice = http.post("/messages", json={**body, "tools": [SEARCH, SEARCH]})
        clash = http.post("/messages", json={**body, "tools": [SEARCH, named]})
    assert assert_error(twice, 400, "invalid_request")["param"] == "tools[1]"
    assert assert_error(clash, 400, "duplicate_tool_name")["param"] == "tools[1].name"


CALL = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {}}
FOUND = {
    "type": "web_search_result",
    "url": "https://a.example",
    "title": "A",
    "encrypted_content": "x",
}
BAD_BLOCKS = [
    ("user", CALL, "messages[1]"),
    ("assistant", {**CALL, "id": "toolu_01"}, "messages[1].content[0]"),
    ("assistant", {**CALL, "name": "code_execution"}, "messages[1].content[0]"),
    (
        "assistant",
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_01",
            "content": [{**FOUND, "title": 3}],
        },
        "messages[1].content[0]",
    ),
    (
        "assistant",
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_01",
            "content": {"type": "oops"},
        },
        "messages[1].content[0]",
    ),
    (
        "user",
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": [FOUND]},
        "messages[1].content[0]",
    ),
]


@pytest.mark.parametrize(
    ("role", "block", "param"),
    BAD_BLOCKS,
    ids=["user-turn", "id", "name", "result", "error", "in-tool-result"],
)
def test_bad_search_blocks_sent_back_are_refused(
    tenant: Tenant, role: str, block: Any, param: str
) -> None:
    turns = [*QUESTION, {"role": role, "content": [block]}, {"role": "user", "content": "More?"}]
    body = {"model": SONNET, "max_tokens": 20, "messages": turns}
    with tenant.client() as http:
        error = assert_error(http.post("/messages", json=body), 400, "invalid_request")
    assert error["param"] == param


def test_a_search_error_sent_back_is_taken(claude: anthropic.Anthropic) -> None:
    failed = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_01",
        "content": {"type": "web_search_tool_result_error", "error_code": "unavailable"},
    }
    turns: Any = [*QUESTION, {"role": "assistant", "content": [CALL, failed]}]
    turns.append({"role": "user", "content": "Try again?"})
    answer = ask(claude, messages=turns)
    assert block_kinds(answer)[:2] == ["server_tool_use", "web_search_tool_result"]


@pytest.mark.parametrize("version", ["web_search_20260209", "web_search_20260318"])
def test_the_tools_successors_search_alike(claude: anthropic.Anthropic, version: str) -> None:
    located = {"type": "approximate", "city": "Oslo", "country": "NO", "timezone": "Europe/Oslo"}
    answer = ask(claude, tools=[{**SEARCH, "type": version, "user_location": located}])
    assert without_ids(answer) == without_ids(ask(claude))  # the location is taken, not used
