"""Anthropic's web fetch tool (`web_fetch_20250910` and its successors) on `/messages`
through Anthropic's SDK: the gateway reads the user's URLs, and answers as Anthropic's
API does, a `server_tool_use` block and a `web_fetch_tool_result` block for each, whole
and streamed; the blocks go back in the next turn and are read again; the tool's
settings are honoured or refused as Anthropic's API refuses them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import anthropic
import pytest

from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error, block_kinds, claude_stream

SONNET = "anthropic/claude-sonnet-4"
FETCH: Any = {"type": "web_fetch_20250910", "name": "web_fetch"}
PAGE = "https://docs.example.com/kite-flying"
QUESTION: Any = [
    {"role": "user", "content": f"Compare {PAGE} with https://gone.invalid/kites please"}
]


def asked(**body: Any) -> dict[str, Any]:
    return {"model": SONNET, "max_tokens": 400, "messages": QUESTION, "tools": [FETCH], **body}


def ask(claude: anthropic.Anthropic, **body: Any) -> Any:
    return claude.messages.create(**asked(**body))


def stream(claude: anthropic.Anthropic, **body: Any) -> tuple[list[Any], Any]:
    return claude_stream(claude, **asked(**body))


def test_each_url_is_a_call_and_its_result(
    claude: anthropic.Anthropic, emulator: EmulatorHandle, tenant: Tenant
) -> None:
    answer = ask(claude)
    plain = ask(claude, tools=[])
    call, page, failed_call, failed, *texts = answer.content
    assert isinstance(call, anthropic.types.ServerToolUseBlock)
    assert call.name == "web_fetch" and call.input == {"url": PAGE}
    assert call.id.startswith("srvtoolu_") and failed_call.id != call.id
    assert isinstance(page, anthropic.types.WebFetchToolResultBlock)
    assert page.tool_use_id == call.id
    fetched = page.content
    assert isinstance(fetched, anthropic.types.WebFetchBlock) and fetched.url == PAGE
    assert (
        fetched.retrieved_at is not None
        and fetched.retrieved_at[:10]
        == f"{datetime.fromtimestamp(emulator.clock()['epoch_seconds'], UTC):%Y-%m-%d}"
    )
    document = fetched.content
    assert document.title == "Kite flying | docs.example.com" and document.citations is None
    assert document.source.type == "text" and "kite flying" in document.source.data
    assert failed_call.input == {"url": "https://gone.invalid/kites"}
    assert isinstance(failed.content, anthropic.types.WebFetchToolResultErrorBlock)
    assert failed.content.error_code == "url_not_accessible"
    text = "".join(block.text for block in texts)
    assert f"From [docs.example.com]({PAGE}): Kite flying | docs.example.com." in text
    assert answer.stop_reason == "end_turn"
    assert answer.usage.server_tool_use.web_fetch_requests == 2
    assert answer.usage.server_tool_use.web_search_requests == 0
    # The page is read as input, at the tokens' price only (Anthropic's fetch is free).
    assert answer.usage.input_tokens > plain.usage.input_tokens + 40
    with tenant.client() as http:
        event = http.get("/ai-gateway/usage", params={"limit": 2}).json()["data"][1]
    assert (
        event["web_fetches"] == 0
        and event["charge_micros"] == answer.usage.model_extra["charge_micros"]
    )


def test_streamed_the_blocks_come_whole_before_the_text(claude: anthropic.Anthropic) -> None:
    whole = ask(claude)
    events, final = stream(claude)
    assert block_kinds(final) == block_kinds(whole)
    starts = [e for e in events if e.type == "content_block_start"]
    assert [e.index for e in starts] == list(range(len(final.content)))
    assert [e.content_block.type for e in starts[:4]] == [
        "server_tool_use",
        "web_fetch_tool_result",
        "server_tool_use",
        "web_fetch_tool_result",
    ]
    assert (
        final.content[1].content.content.source.data == whole.content[1].content.content.source.data
    )
    assert final.usage.server_tool_use.web_fetch_requests == 2


def test_search_then_fetch_and_the_settings(claude: anthropic.Anthropic) -> None:
    search = {"type": "web_search_20250305", "name": "web_search"}
    both = ask(claude, tools=[search, {**FETCH, "citations": {"enabled": True}}])
    limited = ask(claude, tools=[{**FETCH, "max_uses": 1}])
    allowed = ask(claude, tools=[{**FETCH, "allowed_domains": ["example.com"]}])
    cut = ask(claude, tools=[{**FETCH, "max_content_tokens": 5}])
    named = ask(claude, tool_choice={"type": "tool", "name": "web_fetch"})
    assert block_kinds(both)[:4] == [
        "server_tool_use",
        "web_search_tool_result",
        "server_tool_use",
        "web_fetch_tool_result",
    ]
    assert both.content[3].content.content.citations.enabled is True
    assert both.usage.server_tool_use.web_search_requests == 1
    assert limited.content[3].content.error_code == "max_uses_exceeded"
    assert limited.usage.server_tool_use.web_fetch_requests == 1
    assert allowed.content[3].content.error_code == "url_not_allowed"
    assert len(cut.content[1].content.content.source.data) == 20
    assert block_kinds(named) == block_kinds(allowed)  # naming the tool lets it fetch, then answer


def test_with_citations_the_text_cites_the_pages_read(claude: anthropic.Anthropic) -> None:
    cited_fetch = {**FETCH, "citations": {"enabled": True}}
    note = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "Kites fly. In wind."},
        "title": "Notes",
        "citations": {"enabled": True},
    }
    own = [{"role": "user", "content": [note, {"type": "text", "text": QUESTION[0]["content"]}]}]
    answer = ask(claude, tools=[cited_fetch])
    beside = ask(claude, tools=[cited_fetch], messages=own)
    structured = ask(
        claude,
        tools=[cited_fetch],
        output_config={"format": {"type": "json_schema", "schema": {"type": "object"}}},
    )
    page = answer.content[1].content.content.source.data
    texts = [block for block in answer.content if block.type == "text"]
    citation = texts[0].citations[0]
    assert citation.type == "char_location" and citation.document_index == 0
    assert citation.document_title == "Kite flying | docs.example.com"
    assert page[citation.start_char_index : citation.end_char_index] == citation.cited_text
    assert all(not block.citations for block in texts[1:])  # one page read, one citation
    assert "".join(b.text for b in texts) == "".join(
        b.text for b in ask(claude).content if b.type == "text"
    )
    # The request's own document is document 0; the page read comes after it.
    cited = [b.citations[0] for b in beside.content if b.type == "text" and b.citations]
    assert [(c.document_index, c.document_title) for c in cited] == [
        (0, "Notes"),
        (1, "Kite flying | docs.example.com"),
    ]
    assert all(not getattr(b, "citations", None) for b in structured.content)
    _, streamed = stream(claude, tools=[cited_fetch])
    assert streamed.model_dump()["content"][4:] == answer.model_dump()["content"][4:]


def test_the_blocks_go_back_in_the_next_turn_and_are_read(claude: anthropic.Anthropic) -> None:
    answer = ask(claude)
    sent = [block.model_dump(exclude_none=True) for block in answer.content]
    follow = [
        *QUESTION,
        {"role": "assistant", "content": sent},
        {"role": "user", "content": "Thanks"},
    ]
    again = ask(claude, messages=follow)
    no_pages = [block for block in sent if block["type"] != "web_fetch_tool_result"]
    shorter = [
        *QUESTION,
        {"role": "assistant", "content": no_pages},
        {"role": "user", "content": "Thanks"},
    ]
    without = ask(claude, messages=shorter)
    assert again.stop_reason == "end_turn" and block_kinds(again)[0] == "text"  # no URL: no fetch
    assert again.usage.input_tokens > without.usage.input_tokens + 40  # the page read again


@pytest.mark.parametrize(
    ("tool", "where"),
    [
        ({**FETCH, "name": "fetch"}, "name"),
        ({**FETCH, "max_uses": 0}, "max_uses"),
        ({**FETCH, "max_content_tokens": 0}, "max_content_tokens"),
        ({**FETCH, "allowed_domains": ["https://example.com"]}, "allowed_domains"),
        ({**FETCH, "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}, "tools"),
        ({**FETCH, "citations": {"enabled": "yes"}}, "citations"),
    ],
    ids=["name", "max-uses", "content-tokens", "scheme", "both-filters", "citations"],
)
def test_bad_settings_are_refused(tenant: Tenant, tool: dict[str, Any], where: str) -> None:
    body = {"model": SONNET, "max_tokens": 100, "messages": QUESTION, "tools": [tool]}
    with tenant.client() as http:
        answer = http.post("/messages", json=body)
    assert answer.status_code == 400, answer.text
    assert where in answer.json()["error"]["message"] + str(answer.json()["error"].get("param"))


def test_two_fetch_tools_or_a_custom_tool_of_its_name_are_refused(tenant: Tenant) -> None:
    custom = {"name": "web_fetch", "input_schema": {"type": "object"}}
    error = {"type": "web_fetch_tool_result_error", "error_code": "x"}
    result = {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": error}

    def send(tools: list[Any], messages: list[Any] = QUESTION) -> Any:
        body = {"model": SONNET, "max_tokens": 100, "messages": messages, "tools": tools}
        return http.post("/messages", json=body)

    with tenant.client() as http:
        twice = send([FETCH, FETCH])
        clash = send([FETCH, custom])
        in_user_turn = send([], [{"role": "user", "content": [result]}])
    assert_error(twice, 400, "invalid_request")
    assert twice.json()["error"]["param"] == "tools[1]"
    assert_error(clash, 400, "duplicate_tool_name")
    assert in_user_turn.status_code == 400
