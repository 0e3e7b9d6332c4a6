"""OpenRouter's web search through HTTP: `:online`, the `web` plugin and the
`openrouter:web_search` server tool put emulated results in the prompt, the answer
cites them (annotations, whole and streamed, chat and responses), and each result is
charged, held and quoted."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai

from emulator.billing.pricing import Fees, charge_for
from emulator.gateway.web_search import WebSearch, on_domain, results
from emulator.testing import Tenant
from tests.helpers import assert_error

MINI = "openai/gpt-4o-mini"  # openai (responses format), 150,000 / 600,000 micros per Mtok
QUESTION = [{"role": "user", "content": "How do sourdough starters ferment flour?"}]
PER_RESULT = 4000
FEES = Fees(5.5, 20)


def chat(http: httpx.Client, **body: Any) -> dict[str, Any]:
    answer = http.post("/chat/completions", json={"messages": QUESTION, **body})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_online_cites_five_results_and_charges_each(tenant: Tenant) -> None:
    with tenant.client() as http:
        answer = chat(http, model=f"{MINI}:online")
        plain = chat(http, model=MINI)
        event = http.get(f"/ai-gateway/usage/{answer['id']}").json()
        stats = http.get("/generation", params={"id": answer["id"]}).json()["data"]
        quote = http.post(
            "/ai-gateway/quote", json={"model": f"{MINI}:online", "messages": QUESTION}
        ).json()
    message = answer["choices"][0]["message"]
    assert answer["model"] == MINI
    citations = message["annotations"]
    assert len(citations) == 5
    for citation in citations:
        cited = citation["url_citation"]
        link = message["content"][cited["start_index"] : cited["end_index"]]
        assert link == f"[{cited['url'].split('/')[2]}]({cited['url']})"
        assert cited["url"].split("/")[2].endswith(("example.com", "example.org", "example.net"))
    assert "annotations" not in plain["choices"][0]["message"]
    # The results are prompt tokens, and each is charged on top.
    usage = answer["usage"]
    assert usage["prompt_tokens"] > plain["usage"]["prompt_tokens"] + 100
    tokens = usage["prompt_tokens"], usage["completion_tokens"]
    expected = charge_for(*tokens, 150_000, 600_000, FEES, search_results=5)
    assert usage["charge_micros"] == expected.charge_micros
    assert expected.provider_cost_micros >= 5 * PER_RESULT
    assert event["web_search_results"] == 5 and event["charge_micros"] == usage["charge_micros"]
    assert stats["num_search_results"] == 5 and stats["web_search_engine"] == "exa"
    assert quote["hold_micros"] >= usage["charge_micros"]
    assert quote["estimated_input_tokens"] == usage["prompt_tokens"]


def test_the_plugin_sets_the_count_and_the_prompt_and_goes_first(tenant: Tenant) -> None:
    plugin = {"id": "web", "max_results": 2, "search_prompt": "Results of {date}:"}
    body = {
        "model": MINI,
        "messages": [{"role": "system", "content": "Be brief."}, *QUESTION],
        "plugins": [plugin],
        "provider": {"only": ["azure"]},  # a chat-format provider: messages kept in order
        "stream": True,
        "debug": {"echo_upstream_body": True},
    }
    with tenant.client() as http:
        streamed = http.post("/chat/completions", json=body)
        again = chat(http, model=MINI, plugins=[plugin], provider={"only": ["azure"]})
        other = chat(
            http, model=MINI, plugins=[plugin], messages=[{"role": "user", "content": "Kites?"}]
        )
    chunks = [json.loads(line[6:]) for line in streamed.text.splitlines() if line[6:7] == "{"]
    sent = chunks[0]["debug"]["echo_upstream_body"]  # the provider's request
    roles = [message["role"] for message in sent["messages"]]
    assert roles == ["system", "system", "user"]  # the results just before the question
    results = sent["messages"][1]["content"]
    assert results.startswith("Results of 20") and results.count("https://") == 2
    # Streamed: the annotations come in a chunk of their own before the finish.
    pieces = [c for c in chunks if c.get("choices") and "annotations" in c["choices"][0]["delta"]]
    finish = next(i for i, c in enumerate(chunks) if (c["choices"] or [{}])[0].get("finish_reason"))
    assert len(pieces) == 1 and chunks.index(pieces[0]) == finish - 1
    streamed_citations = pieces[0]["choices"][0]["delta"]["annotations"]

    def urls(citations: list[dict[str, Any]]) -> set[str]:
        return {citation["url_citation"]["url"] for citation in citations}

    # The same query finds the same pages (the system message aside); another, others.
    assert urls(streamed_citations) == urls(again["choices"][0]["message"]["annotations"])
    assert urls(streamed_citations).isdisjoint(urls(other["choices"][0]["message"]["annotations"]))


def test_a_disabled_plugin_searches_nothing(tenant: Tenant) -> None:
    with tenant.client() as http:
        answer = chat(http, model=MINI, plugins=[{"id": "web", "enabled": False}])
        event = http.get(f"/ai-gateway/usage/{answer['id']}").json()
    assert "annotations" not in answer["choices"][0]["message"]
    assert event["web_search_results"] == 0


def test_a_free_model_online_pays_for_its_search_only(tenant: Tenant) -> None:
    free = "meta-llama/llama-3.3-70b-instruct:free"
    with tenant.client() as http:
        answer = chat(http, model=f"{free}:online")
    charge = answer["usage"]["charge_micros"]
    assert charge == 5 * PER_RESULT + -(-5 * PER_RESULT * 55 // 1000)  # the fee, no minimum
    assert answer["model"] == free


def test_the_server_tool_searches_when_the_user_just_spoke(client: openai.OpenAI) -> None:
    tools: Any = [{"type": "openrouter:web_search", "parameters": {"max_results": 3}}]
    answer = client.chat.completions.create(model=MINI, messages=QUESTION, tools=tools)  # type: ignore[arg-type]
    message = answer.choices[0].message
    assert message.annotations is not None and len(message.annotations) == 3
    citation = message.annotations[0].url_citation
    assert message.content is not None
    assert message.content[citation.start_index : citation.end_index].endswith(citation.url + ")")
    assert not message.tool_calls  # the gateway ran it: nothing for the client to call
    usage = answer.usage.model_dump()  # type: ignore[union-attr]
    tokens = usage["prompt_tokens"], usage["completion_tokens"]
    assert (
        usage["charge_micros"] == charge_for(*tokens, 150_000, 600_000, FEES, None, 3).charge_micros
    )


def test_responses_cite_in_output_text_whole_and_streamed(client: openai.OpenAI) -> None:
    body: Any = {"plugins": [{"id": "web", "max_results": 2}]}
    whole = client.responses.create(model=MINI, input="Kite flying tips", extra_body=body)
    part = whole.output[0].content[0]  # type: ignore[union-attr]
    assert [a.type for a in part.annotations] == ["url_citation"] * 2  # type: ignore[union-attr]
    first = part.annotations[0]  # type: ignore[union-attr]
    assert whole.output_text[first.start_index : first.end_index].endswith(first.url + ")")  # type: ignore[union-attr]
    with client.responses.stream(model=MINI, input="Kite flying tips", extra_body=body) as stream:
        events = list(stream)
        final = stream.get_final_response()
    numbers = [e.sequence_number for e in events]
    assert numbers == list(range(len(events)))
    added = [e for e in events if e.type == "response.output_text.annotation.added"]
    assert [e.annotation_index for e in added] == [0, 1]  # type: ignore[union-attr]
    assert final.output[0].content[0].annotations == part.annotations  # type: ignore[union-attr]


def test_the_pricing_lists_the_price_of_a_result(tenant: Tenant) -> None:
    with tenant.client() as http:
        pricing = http.get("/ai-gateway/pricing").json()
    assert pricing["web_search_micros_per_result"] == PER_RESULT


SEARCH_TOOL = {"type": "openrouter:web_search", "parameters": {"max_results": 4}}


def test_quotes_see_the_search_tool_as_the_requests_do(tenant: Tenant) -> None:
    chat_body = {"model": MINI, "messages": QUESTION, "tools": [SEARCH_TOOL]}
    responses_body = {"model": MINI, "input": QUESTION[0]["content"], "tools": [SEARCH_TOOL]}
    with tenant.client() as http:
        chat_quote = http.post("/ai-gateway/quote", json=chat_body).json()
        answer = chat(http, **{k: v for k, v in chat_body.items() if k != "messages"})
        responses_quote = http.post("/ai-gateway/quote", json=responses_body).json()
        response = http.post("/responses", json=responses_body).json()
        counted = http.post("/responses/input_tokens", json=responses_body).json()
    assert chat_quote["estimated_input_tokens"] == answer["usage"]["prompt_tokens"]
    assert chat_quote["hold_micros"] >= answer["usage"]["charge_micros"]
    assert responses_quote["estimated_input_tokens"] == response["usage"]["input_tokens"]
    assert responses_quote["hold_micros"] >= response["usage"]["charge_micros"]
    assert counted["input_tokens"] == response["usage"]["input_tokens"]


def test_online_on_a_fallback_searches_nothing_when_the_first_model_serves(
    tenant: Tenant,
) -> None:
    with tenant.client() as http:
        answer = chat(http, model=MINI, models=["anthropic/claude-sonnet-4:online"])
        event = http.get(f"/ai-gateway/usage/{answer['id']}").json()
    assert answer["model"] == MINI and event["web_search_results"] == 0


def test_the_search_tool_answers_to_its_own_switches(tenant: Tenant) -> None:
    function: Any = {"type": "function", "function": {"name": "lookup", "parameters": {}}}
    with tenant.client() as http:
        unplugged = chat(
            http, model=MINI, tools=[SEARCH_TOOL], plugins=[{"id": "web", "enabled": False}]
        )
        shorthand = http.post(
            "/responses", json={"model": MINI, "input": "Kites", "tools": [{"type": "web_search"}]}
        ).json()
        forced = chat(
            http,
            model=MINI,
            tools=[SEARCH_TOOL, function],
            tool_choice={"type": "function", "function": {"name": "lookup"}},
        )
        misplaced = http.post(
            "/chat/completions",
            json={
                "model": MINI,
                "messages": QUESTION,
                "tools": [SEARCH_TOOL, {"type": "function"}],
            },
        )
        other_plugin = chat(http, model=MINI, plugins=[{"id": "file-parser", "max_results": 20}])
        too_many = {"type": "openrouter:web_search", "parameters": {"max_results": 11}}
        refused = http.post(
            "/chat/completions", json={"model": MINI, "messages": QUESTION, "tools": [too_many]}
        )
    assert len(unplugged["choices"][0]["message"]["annotations"]) == 4  # the tool still searches
    # OpenAI's name for it: OpenRouter's tool, whose call is OpenAI's item before the message
    assert [item["type"] for item in shorthand["output"]] == ["web_search_call", "message"]
    assert len(shorthand["output"][1]["content"][0]["annotations"]) == 5
    assert (
        forced["choices"][0]["message"]["tool_calls"]
        and "annotations" not in forced["choices"][0]["message"]
    )
    assert assert_error(misplaced, 400, "invalid_request")["param"] == "tools[1].function"
    assert "annotations" not in other_plugin["choices"][0]["message"]
    assert assert_error(refused, 400, "invalid_request")["param"] == "tools[0].parameters"


def test_input_tokens_count_an_online_models_results(tenant: Tenant) -> None:
    body = {"model": f"{MINI}:online", "input": "Kite flying tips"}
    with tenant.client() as http:
        counted = http.post("/responses/input_tokens", json=body).json()
        response = http.post("/responses", json=body).json()
    assert counted["input_tokens"] == response["usage"]["input_tokens"]


def test_a_response_lists_the_search_tool_as_sent_not_as_a_function(
    client: openai.OpenAI,
) -> None:
    tools: Any = [
        {"type": "web_search", "user_location": {"type": "approximate", "country": "GB"}},
        {"type": "function", "name": "lookup"},
    ]
    made = client.responses.create(model=MINI, input="Kites", tools=tools)
    search, function = (tool.to_dict() for tool in made.tools)
    assert search == {
        "type": "web_search",
        "search_context_size": "medium",
        "user_location": {"type": "approximate", "country": "GB"},
    }
    assert function == {
        "type": "function",
        "name": "lookup",
        "description": None,
        "parameters": None,
        "strict": True,
    }


def test_web_search_as_the_only_required_tool_searches_then_answers(tenant: Tenant) -> None:
    with tenant.client() as http:
        chat_answer = chat(http, model=MINI, tools=[SEARCH_TOOL], tool_choice="required")
        response = http.post(
            "/responses",
            json={
                "model": MINI,
                "input": "Kites",
                "tools": [{"type": "web_search"}],
                "tool_choice": "required",
            },
        ).json()
    message = chat_answer["choices"][0]["message"]
    assert len(message["annotations"]) == 4 and not message.get("tool_calls")
    assert len(response["output"][1]["content"][0]["annotations"]) == 5


def test_a_tool_error_names_its_place_among_all_the_tools(tenant: Tenant) -> None:
    broken = {"type": "object", "properties": {"a": {"type": "nope"}}}
    function: Any = {"type": "function", "function": {"name": "f", "parameters": broken}}
    with tenant.client() as http:
        refused = http.post(
            "/chat/completions",
            json={"model": MINI, "messages": QUESTION, "tools": [SEARCH_TOOL, function]},
        )
        narrowed = http.post(
            "/responses",
            json={
                "model": MINI,
                "input": "Kites",
                "tools": [
                    {"type": "function", "name": "ok", "parameters": {"type": "object"}},
                    {"type": "function", "name": "f", "parameters": broken},
                ],
                "tool_choice": {
                    "type": "allowed_tools",
                    "mode": "auto",
                    "tools": [{"type": "function", "name": "f"}],
                },
            },
        )
    assert (
        assert_error(refused, 400, "invalid_tool_schema")["param"] == "tools[1].function.parameters"
    )
    assert assert_error(narrowed, 400, "invalid_tool_schema")["param"] == "tools[1].parameters"


def test_domain_filters_name_domains_in_any_case() -> None:
    """A filter's domain covers itself and its subdomains, whatever its case (the web
    search's blocked sites and the web fetch's filters read it the same way)."""
    query = "What is the state of coral reefs?"
    blocked = WebSearch(native=True, blocked=("example.com", "Example.ORG"))
    hosts = {r.url.split("/")[2] for r in results(query, 5, blocked)}
    assert hosts and not any(h.endswith("example.org") for h in hosts)
    assert on_domain("wiki.example.org", "Example.ORG/path")
    assert not on_domain("notexample.org", "example.org")


def test_openais_search_tool_is_answered_with_openais_item(client: openai.OpenAI) -> None:
    """`{"type": "web_search"}` on /responses: OpenAI's `web_search_call` item (its own
    events when streamed), which the SDKs parse and which may be sent back; OpenRouter's
    tool keeps its `openrouter:web_search` item."""
    ask: Any = {"model": "openai/gpt-4o-mini", "input": "What is new in reef science?"}
    made = client.responses.create(**ask, tools=[{"type": "web_search"}])
    call = made.output[0]
    assert call.type == "web_search_call" and call.id.startswith("ws_")
    assert call.action.type == "search" and call.action.query  # type: ignore[union-attr]
    with client.responses.stream(**ask, tools=[{"type": "web_search_preview"}]) as stream:
        kinds = [event.type for event in stream]
    searching = [k for k in kinds if k.startswith("response.web_search_call.")]
    assert searching == [
        f"response.web_search_call.{s}" for s in ("in_progress", "searching", "completed")
    ]
    again = client.responses.create(
        model=ask["model"],
        input=[
            {"role": "user", "content": ask["input"]},
            *(item.model_dump(exclude_none=True) for item in made.output),
            {"role": "user", "content": "Thanks, and more?"},
        ],
    )
    assert again.status == "completed"
    theirs = client.responses.create(**ask, tools=[{"type": "openrouter:web_search"}])
    assert theirs.output[0].type == "openrouter:web_search"
