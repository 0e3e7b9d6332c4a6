"""Anthropic's `search_result` and `document` blocks on `/messages` through Anthropic's
SDK: read as the prompt's text, cited (`search_result_location`, `char_location`,
`content_block_location`) whole and streamed when their citations are enabled, and
refused as Anthropic's API refuses them."""

from __future__ import annotations

import base64
from typing import Any

import anthropic
import pytest

from emulator.gateway.source_citations import cited_blocks, cited_events
from emulator.gateway.sources import SearchResult
from emulator.testing import Tenant
from tests.helpers import assert_error, block_kinds, pdf_of

SONNET = "anthropic/claude-sonnet-4"


def text_blocks(*texts: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text} for text in texts]


GUIDE = {
    "type": "search_result",
    "source": "https://docs.example.com/billing",
    "title": "Billing guide",
    "content": text_blocks(
        "Invoices are issued on the first day of each month.",
        "Billing settings change at the next billing cycle.",
    ),
}
FAQ = {
    "type": "search_result",
    "source": "kb://faq/42",
    "title": "FAQ",
    "content": text_blocks("Billing questions go to the finance team."),
}
QUESTION = {"type": "text", "text": "How do I change my billing settings?"}


def cited(*results: dict[str, Any], enabled: bool = True) -> list[dict[str, Any]]:
    return [{**result, "citations": {"enabled": enabled}} for result in results]


def asking(*blocks: dict[str, Any]) -> list[Any]:
    return [{"role": "user", "content": [*blocks, QUESTION]}]


def dumped(content: Any) -> list[dict[str, Any]]:
    return [block.model_dump(exclude_none=True) for block in content]


def test_cited_results_split_the_answer_into_blocks_that_cite_them(
    claude: anthropic.Anthropic,
) -> None:
    plain = claude.messages.create(
        model=SONNET, max_tokens=400, messages=asking(*cited(GUIDE, FAQ, enabled=False))
    )
    message = claude.messages.create(
        model=SONNET, max_tokens=400, messages=asking(*cited(GUIDE, FAQ))
    )
    assert [b.type for b in plain.content] == ["text"] and not plain.content[0].citations
    texts = [block.text for block in message.content if block.type == "text"]
    assert "".join(texts) == plain.content[0].text  # the same answer, in blocks
    citing = [block for block in message.content if block.citations]
    assert len(citing) == 2 and message.content[:2] == citing
    first, second = (block.citations[0] for block in citing)
    assert first.type == "search_result_location" and first.search_result_index == 0
    assert (first.source, first.title) == (GUIDE["source"], GUIDE["title"])
    assert first.end_block_index == first.start_block_index + 1
    assert first.cited_text == GUIDE["content"][first.start_block_index]["text"]
    assert second.search_result_index == 1 and second.source == "kb://faq/42"
    assert (second.start_block_index, second.end_block_index) == (0, 1)
    assert second.cited_text == FAQ["content"][0]["text"]
    # The blocks are the answer's text: the same tokens, the same charge.
    assert message.usage.output_tokens == plain.usage.output_tokens
    assert message.usage.model_dump()["charge_micros"] == plain.usage.model_dump()["charge_micros"]


def test_a_streamed_answer_sends_the_same_blocks_with_citations_deltas(
    claude: anthropic.Anthropic,
) -> None:
    asked: Any = {
        "model": SONNET,
        "max_tokens": 2000,
        "messages": asking(*cited(GUIDE, FAQ)),
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    whole = claude.messages.create(**asked)
    with claude.messages.stream(**asked) as stream:
        events = list(stream)
        final = stream.get_final_message()
    assert final.content[0].type == "thinking"
    assert dumped(final.content) == dumped(whole.content)
    starts = [e.index for e in events if e.type == "content_block_start"]
    stops = [e.index for e in events if e.type == "content_block_stop"]
    assert starts == stops == list(range(len(final.content)))
    deltas = [e for e in events if e.type == "content_block_delta"]
    kinds = [(e.index, e.delta.type) for e in deltas if e.delta.type != "thinking_delta"]
    # Each citing block sends its citation first, then its text.
    assert kinds[1:3] == [(1, "citations_delta"), (1, "text_delta")]
    assert (2, "citations_delta") in kinds and (3, "citations_delta") not in kinds


def test_results_in_tool_results_are_counted_in_order_and_cited(
    claude: anthropic.Anthropic,
) -> None:
    call = {"type": "tool_use", "id": "toolu_01", "name": "search", "input": {"q": "billing"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": cited(FAQ)}
    messages = [
        {"role": "user", "content": [*cited(GUIDE), QUESTION]},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]
    tools: Any = [{"name": "search", "input_schema": {"type": "object"}}]
    message = claude.messages.create(model=SONNET, max_tokens=400, messages=messages, tools=tools)
    indexes = [c.search_result_index for b in message.content for c in b.citations or ()]
    assert indexes == [0, 1]
    # A result a tool returns is read, as the prompt's text.
    empty = {**result, "content": "none"}
    counts = [
        claude.messages.count_tokens(model=SONNET, messages=[*messages[:2], turn], tools=tools)
        for turn in ({"role": "user", "content": [empty]}, messages[2])
    ]
    assert counts[1].input_tokens > counts[0].input_tokens + 10
    # The answer, citations and all, goes back as the next turn's history.
    follow = [
        *messages,
        {"role": "assistant", "content": dumped(message.content)},
        {"role": "user", "content": "Thanks. Who answers billing questions?"},
    ]
    again = claude.messages.create(model=SONNET, max_tokens=400, messages=follow, tools=tools)
    assert again.stop_reason in ("end_turn", "tool_use")


def test_results_are_read_as_the_prompt(claude: anthropic.Anthropic) -> None:
    bare = claude.messages.count_tokens(model=SONNET, messages=asking())
    counted = claude.messages.count_tokens(model=SONNET, messages=asking(*cited(GUIDE)))
    assert counted.input_tokens > bare.input_tokens + 20
    message = claude.messages.create(model=SONNET, max_tokens=400, messages=asking(GUIDE))
    assert message.usage.input_tokens > bare.input_tokens + 20
    assert not any(block.citations for block in message.content)  # citations off by default


@pytest.mark.parametrize(
    ("blocks", "param", "words"),
    [
        ([{**GUIDE, "citations": {"enabled": True}}, FAQ], "messages[0].content[1]", "all"),
        (cited(GUIDE) + cited(FAQ, enabled=False), "messages[0].content[1]", "all"),
        ([{**GUIDE, "title": None}], "messages[0].content[0]", "title"),
        ([{**GUIDE, "content": []}], "messages[0].content[0]", "content"),
        ([{**GUIDE, "content": "plain text"}], "messages[0].content[0]", "content"),
        ([{**GUIDE, "content": [{"type": "image"}]}], "messages[0].content[0]", "text blocks"),
        ([{**GUIDE, "content": [{"type": "text", "text": " "}]}], "messages[0]", "whitespace"),
        ([{**GUIDE, "citations": {"enabled": "yes"}}], "messages[0].content[0]", "enabled"),
    ],
)
def test_malformed_or_mixed_results_are_refused(
    tenant: Tenant, blocks: list[dict[str, Any]], param: str, words: str
) -> None:
    body = {"model": SONNET, "max_tokens": 100, "messages": asking(*blocks)}
    with tenant.client() as http:
        for path in ("/messages", "/messages/count_tokens"):
            response = http.post(path, json=body)
            assert_error(response, 400, "invalid_request")
            error = response.json()["error"]
            assert error["param"].startswith(param) and words in error["message"]


def test_citations_with_structured_output_are_refused(tenant: Tenant) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    body = {
        "model": SONNET,
        "max_tokens": 100,
        "messages": asking(*cited(GUIDE)),
        "output_config": {"format": {"type": "json_schema", "schema": schema}},
    }
    with tenant.client() as http:
        response = http.post("/messages", json=body)
        assert_error(response, 400, "invalid_request")
        assert response.json()["error"]["param"] == "messages[0].content[0].citations"
        body["messages"] = asking(GUIDE)  # without citations, structured output is served
        assert http.post("/messages", json=body).status_code == 200


NOTES = (
    "The admin panel holds every setting. Billing settings change at the next cycle! "
    "Refunds take five days."
)
TEXT_DOCUMENT = {
    "type": "document",
    "source": {"type": "text", "media_type": "text/plain", "data": NOTES},
    "title": "Billing notes",
    "context": "Internal notes, updated weekly",
}
CONTENT_DOCUMENT = {
    "type": "document",
    "source": {
        "type": "content",
        "content": text_blocks(
            "Invoices list every charge.", "Billing settings are on the account page."
        ),
    },
}
PAGES = (
    "The admin panel holds every setting. Invoices list every charge.",
    "Refunds take five days.",
)
PDF = {
    "type": "document",
    "title": "Handbook",
    "source": {
        "type": "base64",
        "media_type": "application/pdf",
        "data": base64.b64encode(pdf_of(*PAGES)).decode(),
    },
}
PDF_URL = {"type": "document", "source": {"type": "url", "url": "https://x.test/a.pdf"}}


def test_documents_are_read_and_cited_by_characters_or_blocks(
    claude: anthropic.Anthropic,
) -> None:
    blocks = [*cited(TEXT_DOCUMENT, GUIDE, CONTENT_DOCUMENT)]
    bare = claude.messages.count_tokens(model=SONNET, messages=asking())
    counted = claude.messages.count_tokens(model=SONNET, messages=asking(TEXT_DOCUMENT))
    assert counted.input_tokens > bare.input_tokens + 20  # its title, context and text
    message = claude.messages.create(model=SONNET, max_tokens=400, messages=asking(*blocks))
    first, second, third = (block.citations[0] for block in message.content[:3])
    assert first.type == "char_location" and first.document_index == 0
    assert first.document_title == "Billing notes" and first.file_id is None
    assert first.cited_text == NOTES[first.start_char_index : first.end_char_index]
    assert first.cited_text in (
        "The admin panel holds every setting. ",
        "Billing settings change at the next cycle! ",
        "Refunds take five days.",
    )
    assert second.type == "search_result_location" and second.search_result_index == 0
    assert third.type == "content_block_location" and third.document_index == 1
    assert third.document_title is None
    content = CONTENT_DOCUMENT["source"]["content"]  # type: ignore[index]
    assert third.cited_text == content[third.start_block_index]["text"]
    assert third.end_block_index == third.start_block_index + 1


def test_a_pdf_is_read_and_cited_by_page(claude: anthropic.Anthropic) -> None:
    bare = claude.messages.count_tokens(model=SONNET, messages=asking())
    pdf = claude.messages.count_tokens(model=SONNET, messages=asking(PDF))
    text = {
        "type": "document",
        "title": "Handbook",
        "source": {"type": "text", "media_type": "text/plain", "data": "\n\n".join(PAGES)},
    }
    as_text = claude.messages.count_tokens(model=SONNET, messages=asking(text))
    assert pdf.input_tokens == as_text.input_tokens > bare.input_tokens + 20
    message = claude.messages.create(model=SONNET, max_tokens=400, messages=asking(*cited(PDF)))
    citation = message.content[0].citations[0]
    assert citation.type == "page_location" and citation.document_index == 0
    assert citation.document_title == "Handbook" and citation.file_id is None
    page = PAGES[citation.start_page_number - 1]
    assert citation.cited_text in page and citation.cited_text.strip()
    assert citation.end_page_number == citation.start_page_number + 1
    assert all(not block.citations for block in message.content[1:])  # one source
    with claude.messages.stream(
        model=SONNET, max_tokens=400, messages=asking(*cited(PDF))
    ) as stream:
        pages = [event.citation for event in stream if event.type == "citation"]
        streamed = stream.get_final_message()
    assert pages == [citation] and dumped(streamed.content) == dumped(message.content)


def test_a_pdf_by_url_is_taken_but_not_read_or_cited(claude: anthropic.Anthropic) -> None:
    bare = claude.messages.count_tokens(model=SONNET, messages=asking())
    pdf = claude.messages.count_tokens(model=SONNET, messages=asking(PDF_URL))
    assert pdf.input_tokens == bare.input_tokens
    message = claude.messages.create(model=SONNET, max_tokens=200, messages=asking(*cited(PDF_URL)))
    assert block_kinds(message) == ["text"]
    assert not message.content[0].citations


@pytest.mark.parametrize(
    "source",
    [
        {"type": "text", "data": "No media type."},
        {"type": "text", "media_type": "text/plain"},
        {"type": "base64", "media_type": "text/plain", "data": "aGk="},
        {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQK"},
        {"type": "base64", "media_type": "application/pdf", "data": "aGk="},
        {"type": "base64", "media_type": "application/pdf", "data": "!!"},
        {"type": "content"},
        {"type": "scroll", "data": "x"},
        "plain text",
        {"type": "content", "content": [{"type": "text"}]},
        {"type": "content", "content": [7]},
        {"type": "content", "content": [{"type": "text", "text": "  "}]},
        {"title": 5},
        {"context": ["x"]},
        {"citations": "yes"},
    ],
)
def test_a_document_is_checked(tenant: Tenant, source: Any) -> None:
    document = {"type": "document", "source": source}
    if isinstance(source, dict) and "type" not in source:  # a field of the document's
        document = {**TEXT_DOCUMENT, **source}
    body = {"model": SONNET, "max_tokens": 100, "messages": asking(document)}
    with tenant.client() as http:
        for path in ("/messages", "/messages/count_tokens"):
            response = http.post(path, json=body)
            assert_error(response, 400, "invalid_request")
            assert response.json()["error"]["param"] == "messages[0].content[0]"
            assert (
                "document." in response.json()["error"]["message"]
                or "whitespace" in (response.json()["error"]["message"])
            )


def result(index: int, *texts: str, on: bool = True) -> SearchResult:
    return SearchResult(index, f"messages[0].content[{index}]", on, f"s{index}", "t", texts)


def test_each_sentence_cites_the_next_result_at_its_closest_block() -> None:
    text = "Cats purr loudly. Dogs bark at night! Birds sing?"
    results = [result(0, "Fish swim.", "Cats purr when happy."), result(1, "Dogs bark.")]
    blocks = cited_blocks(text, results)
    texts = [b["text"] for b in blocks]
    assert texts == ["Cats purr loudly. ", "Dogs bark at night! ", "Birds sing?"]
    assert blocks[0]["citations"][0]["start_block_index"] == 1
    assert blocks[1]["citations"][0]["cited_text"] == "Dogs bark."
    assert "citations" not in blocks[2]
    assert cited_blocks(text, [result(0, "x", on=False)]) == [{"type": "text", "text": text}]
    assert cited_blocks("", results) == []
    many = cited_blocks("One sentence only.", results)
    assert len(many) == 1 and many[0]["citations"][0]["search_result_index"] == 0


def test_streamed_pieces_are_cut_at_block_ends_and_later_blocks_renumbered() -> None:
    blocks = cited_blocks("Ab. Cd. Ef.", [result(0, "Ab"), result(1, "Cd")])
    pieces = ["A", "b. C", "d. Ef."]
    events = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
            for p in pieces
        ),
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_stop"},
    ]
    out = list(cited_events(events, blocks))
    texts: dict[int, str] = {}
    for event in out:
        if event["type"] == "content_block_delta" and event["delta"]["type"] == "text_delta":
            texts[event["index"]] = texts.get(event["index"], "") + event["delta"]["text"]
    assert texts == {0: "Ab. ", 1: "Cd. ", 2: "Ef."}
    assert [e["index"] for e in out if e["type"] == "content_block_start"] == [0, 1, 2, 3]
    assert [e["index"] for e in out if e["type"] == "content_block_stop"] == [0, 1, 2, 3]
    assert out[-1] == {"type": "message_stop"}


def test_a_result_can_end_a_cached_prefix(claude: anthropic.Anthropic) -> None:
    text = "Invoices are issued on the first day of each month, in euros or dollars. " * 150
    marked = {**GUIDE, "content": [{"type": "text", "text": text}]}
    marked["cache_control"] = {"type": "ephemeral"}
    first, second = (
        claude.messages.create(model=SONNET, max_tokens=100, messages=asking(marked))
        for _ in range(2)
    )
    written = first.usage.cache_creation_input_tokens or 0
    assert written > 1024 and second.usage.cache_read_input_tokens == written
