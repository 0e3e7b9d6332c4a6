"""OpenRouter's `openrouter:datetime` and `openrouter:web_fetch` server tools through
HTTP and the official clients: the gateway runs them before the model answers, their
results are prompt tokens the answer speaks of, the responses format shows each call
as an output item, usage counts them, and each page fetched is charged, held and
quoted."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import anthropic
import httpx
import openai
import pytest
from openrouter import OpenRouter
from openrouter.components import OutputDatetimeItem, OutputWebFetchServerToolItem

from emulator.billing.pricing import Fees, charge_for
from emulator.testing import EmulatorHandle, Tenant
from tests.helpers import assert_error

MINI = "openai/gpt-4o-mini"  # openai (responses format), 150,000 / 600,000 micros per Mtok
FEES = Fees(5.5, 20)
DATETIME = {"type": "openrouter:datetime"}
FETCH = {"type": "openrouter:web_fetch"}
PAGE = "https://docs.example.com/guides/sourdough-starters"


def ask(http: httpx.Client, content: str, **body: Any) -> dict[str, Any]:
    body = {"model": MINI, "messages": [{"role": "user", "content": content}], **body}
    answer = http.post("/chat/completions", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def told(emulator: EmulatorHandle, zone: str) -> datetime:
    return datetime.fromtimestamp(emulator.clock()["epoch_seconds"], ZoneInfo(zone))


def spoken(moment: datetime, zone: str) -> str:
    return f"It is {moment:%A, %B} {moment.day}, {moment:%Y, %H:%M} ({zone})."


def test_datetime_tells_the_virtual_clocks_time_in_the_tools_zone(
    client: openai.OpenAI, emulator: EmulatorHandle
) -> None:
    zone = "America/New_York"
    tool = {"type": "openrouter:datetime", "parameters": {"timezone": zone}}
    question = [{"role": "user", "content": "What day of the week is it today?"}]
    now = told(emulator, zone)
    answer = client.chat.completions.create(model=MINI, messages=question, tools=[tool])
    plain = client.chat.completions.create(model=MINI, messages=question)
    emulator.advance(86_400)
    tomorrow = client.chat.completions.create(model=MINI, messages=question, tools=[tool])
    text = answer.choices[0].message.content or ""
    assert text.endswith(spoken(now, zone))
    assert (tomorrow.choices[0].message.content or "").endswith(spoken(told(emulator, zone), zone))
    assert answer.choices[0].finish_reason == "stop" and not answer.choices[0].message.tool_calls
    # What the tool returned is in the prompt: more tokens, at the prompt's price only.
    usage = answer.usage
    assert usage is not None and plain.usage is not None
    assert usage.prompt_tokens > plain.usage.prompt_tokens + 10
    tokens = usage.prompt_tokens, usage.completion_tokens
    extra = usage.model_extra or {}
    assert extra["charge_micros"] == charge_for(*tokens, 150_000, 600_000, FEES).charge_micros
    assert extra["server_tool_use_details"] == {"tool_calls_requested": 1, "tool_calls_executed": 1}
    assert "server_tool_use_details" not in (plain.usage.model_extra or {})


def test_web_fetch_reads_each_url_in_order_and_charges_each_page(
    tenant: Tenant, emulator: EmulatorHandle
) -> None:
    urls = [PAGE, "https://down.invalid/notes", "https://blog.example.net/kites."]
    content = f"Compare {urls[0]} with {urls[1]} and {urls[2]}"
    with tenant.client() as http:
        answer = ask(http, content, tools=[FETCH])
        again = ask(http, content, tools=[FETCH])
        event = http.get(f"/ai-gateway/usage/{answer['id']}").json()
        quote = http.post(
            "/ai-gateway/quote",
            json={
                "model": MINI,
                "messages": [{"role": "user", "content": content}],
                "tools": [FETCH],
            },
        ).json()
        pricing = http.get("/ai-gateway/pricing").json()
    text = answer["choices"][0]["message"]["content"]
    assert text == again["choices"][0]["message"]["content"]  # the same pages, the same answer
    first = text.index("From [docs.example.com](" + PAGE + "): Guides sourdough starters")
    failed = text.index("I could not read https://down.invalid/notes.")
    last = text.index("From [blog.example.net](https://blog.example.net/kites): Kites")
    assert first < failed < last
    usage = answer["usage"]
    assert usage["server_tool_use_details"] == {"tool_calls_requested": 3, "tool_calls_executed": 2}
    tokens = usage["prompt_tokens"], usage["completion_tokens"]
    expected = charge_for(*tokens, 150_000, 600_000, FEES, web_fetches=2)
    assert usage["charge_micros"] == expected.charge_micros == event["charge_micros"]
    assert (
        expected.provider_cost_micros
        > charge_for(*tokens, 150_000, 600_000, FEES).provider_cost_micros
    )
    assert event["web_fetches"] == 2 and event["web_search_results"] == 0
    assert pricing["web_fetch_micros_per_fetch"] == 1000
    assert quote["estimated_input_tokens"] == usage["prompt_tokens"]
    assert quote["hold_micros"] >= usage["charge_micros"]


def test_web_fetch_keeps_to_its_parameters(tenant: Tenant) -> None:
    pages = " ".join(f"https://example.org/page-{n}" for n in range(4))

    def fetch(**parameters: Any) -> dict[str, Any]:
        return ask(http, f"Read {pages}", tools=[{**FETCH, "parameters": parameters}])

    with tenant.client() as http:
        limited = fetch(max_uses=2)
        allowed = fetch(allowed_domains=["example.org/page-1"])
        blocked = fetch(blocked_domains=["example.org"])
        free = fetch(engine="openrouter")
        events = {
            name: http.get(f"/ai-gateway/usage/{answer['id']}").json()["web_fetches"]
            for name, answer in (("limited", limited), ("free", free), ("blocked", blocked))
        }
    assert limited["usage"]["server_tool_use_details"]["tool_calls_executed"] == 2
    assert limited["choices"][0]["message"]["content"].count("I could not read") == 2
    read = allowed["choices"][0]["message"]["content"]
    assert "(https://example.org/page-1)" in read and read.count("I could not read") == 3
    assert blocked["usage"]["server_tool_use_details"]["tool_calls_executed"] == 0
    assert events == {"limited": 2, "free": 0, "blocked": 0}  # OpenRouter's own engine is free
    assert free["usage"]["server_tool_use_details"]["tool_calls_executed"] == 4


def test_a_message_without_urls_or_a_choice_of_none_calls_nothing(tenant: Tenant) -> None:
    with tenant.client() as http:
        nothing_to_read = ask(http, "Summarize this for me", tools=[FETCH])
        none = ask(http, f"What time is it? {PAGE}", tools=[DATETIME, FETCH], tool_choice="none")
        required = ask(http, f"What time is it? {PAGE}", tools=[DATETIME], tool_choice="required")
        after_tools = http.post(
            "/chat/completions",
            json={
                "model": MINI,
                "messages": [
                    {"role": "user", "content": "Weather?"},
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "weather", "arguments": "{}"},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
                ],
                "tools": [
                    DATETIME,
                    {"type": "function", "function": {"name": "weather", "parameters": {}}},
                ],
            },
        ).json()
    for answer in (nothing_to_read, none, after_tools):
        assert "server_tool_use_details" not in answer["usage"]
        assert "It is " not in answer["choices"][0]["message"]["content"]
    # `required` with only server tools: they are the call, then the model answers.
    assert required["choices"][0]["finish_reason"] == "stop"
    assert required["usage"]["server_tool_use_details"]["tool_calls_requested"] == 1


# The openai SDK's stream helper dumps the response with its own types, which know
# neither OpenRouter's tools nor its items: pydantic warns (as against OpenRouter).
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
def test_responses_show_each_call_as_an_output_item(
    client: openai.OpenAI, emulator: EmulatorHandle, router: OpenRouter, tenant: Tenant
) -> None:
    zone = "Asia/Tokyo"
    tools: Any = [{**DATETIME, "parameters": {"timezone": zone}}, FETCH]
    question = f"What should I read today? {PAGE}"
    now = told(emulator, zone)
    with tenant.client() as http:
        whole = http.post("/responses", json={"model": MINI, "input": question, "tools": tools})
    # (The openai SDK types OpenRouter's items as messages: read them from the JSON.)
    output = whole.json()["output"]
    with client.responses.stream(model=MINI, input=question, tools=tools) as stream:
        events = list(stream)
        final = stream.get_final_response()
    typed = router.beta.responses.send(model=MINI, input=question, tools=tools)
    assert [item["type"] for item in output] == [
        "openrouter:datetime",
        "openrouter:web_fetch",
        "message",
    ]
    clock, fetched = output[0], output[1]
    assert clock["datetime"] == now.isoformat(timespec="milliseconds") and clock["timezone"] == zone
    assert clock["status"] == "completed" and clock["id"].startswith("dt_")
    assert fetched["url"] == PAGE and fetched["httpStatus"] == 200
    assert fetched["title"] == "Guides sourdough starters | docs.example.com"
    assert fetched["id"].startswith("wf_") and "sourdough" in fetched["content"]
    said = output[2]["content"][0]["text"]
    assert said.endswith(
        f"{spoken(now, zone)} From [docs.example.com]({PAGE}): {fetched['title']}."
    )
    assert whole.json()["usage"]["server_tool_use_details"]["tool_calls_executed"] == 2
    # Streamed: each call added and done before the message, which comes third.
    kinds = [(event.type, getattr(event, "output_index", None)) for event in events]
    assert kinds[:6] == [
        ("response.created", None),
        ("response.in_progress", None),
        ("response.output_item.added", 0),
        ("response.output_item.done", 0),
        ("response.output_item.added", 1),
        ("response.output_item.done", 1),
    ]
    assert kinds[6] == ("response.output_item.added", 2)
    assert [event.sequence_number for event in events] == list(range(len(events)))
    assert [item.id for item in final.output] != [item["id"] for item in output]  # new ids
    assert [item.type for item in final.output] == [item["type"] for item in output]
    assert final.output_text == said
    # OpenRouter's SDK reads them as its own types.
    assert isinstance(typed.output[0], OutputDatetimeItem) and typed.output[0].timezone == zone
    assert isinstance(typed.output[1], OutputWebFetchServerToolItem)
    assert typed.output[1].http_status == 200 and typed.output[1].url == PAGE


def test_the_calls_sent_back_or_kept_are_accepted_and_not_read_again(
    client: openai.OpenAI, tenant: Tenant
) -> None:
    first = client.responses.create(model=MINI, input=f"Read {PAGE}", tools=[FETCH], store=True)
    follow = client.responses.create(
        model=MINI, input="And in short?", previous_response_id=first.id, tools=[FETCH]
    )
    with tenant.client() as http:
        items = http.get(f"/responses/{first.id}").json()["output"]
        sent_back = http.post(
            "/responses",
            json={
                "model": MINI,
                "input": [
                    {"role": "user", "content": f"Read {PAGE}"},
                    *[{k: v for k, v in item.items() if k != "annotations"} for item in items],
                    {"role": "user", "content": "Thanks"},
                ],
            },
        )
    assert follow.status == "completed" and follow.output[-1].type == "message"
    assert sent_back.status_code == 200, sent_back.text
    assert [item["type"] for item in sent_back.json()["output"]] == ["message"]


def test_chat_streams_count_the_calls_in_the_usage_chunk(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model=MINI,
        messages=[{"role": "user", "content": f"Summarize {PAGE}"}],
        tools=[FETCH],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.endswith(
        f"From [docs.example.com]({PAGE}): Guides sourdough starters | docs.example.com."
    )
    usage = chunks[-1].usage
    assert usage is not None
    extra = usage.model_extra or {}
    assert extra["server_tool_use_details"] == {"tool_calls_requested": 1, "tool_calls_executed": 1}
    tokens = usage.prompt_tokens, usage.completion_tokens
    assert (
        extra["charge_micros"]
        == charge_for(*tokens, 150_000, 600_000, FEES, web_fetches=1).charge_micros
    )


def test_messages_run_them_too(claude: anthropic.Anthropic, emulator: EmulatorHandle) -> None:
    now = told(emulator, "UTC")
    message = claude.messages.create(
        model="anthropic/claude-sonnet-4",
        max_tokens=400,
        messages=[{"role": "user", "content": f"What is new today? {PAGE}"}],
        tools=[DATETIME, FETCH],  # type: ignore[list-item]
    )
    text = message.content[-1].text  # type: ignore[union-attr]
    assert spoken(now, "UTC") in text and f"From [docs.example.com]({PAGE})" in text
    assert message.stop_reason == "end_turn"


@pytest.mark.parametrize(
    ("tool", "param"),
    [
        ({**DATETIME, "parameters": {"timezone": "Mars/Olympus"}}, "tools[0].parameters.timezone"),
        ({**DATETIME, "parameters": {"timezone": 5}}, "tools[0].parameters.timezone"),
        ({**FETCH, "parameters": {"max_uses": 0}}, "tools[0].parameters.max_uses"),
        (
            {**FETCH, "parameters": {"max_content_tokens": 0}},
            "tools[0].parameters.max_content_tokens",
        ),
        ({**FETCH, "parameters": {"engine": "lynx"}}, "tools[0].parameters.engine"),
        (
            {**FETCH, "parameters": {"allowed_domains": ["https://example.com"]}},
            "tools[0].parameters.allowed_domains[0]",
        ),
        ({**FETCH, "parameters": "fast"}, "tools[0].parameters"),
    ],
    ids=["zone", "zone-type", "max-uses", "content-tokens", "engine", "scheme", "not-object"],
)
def test_bad_parameters_are_refused_naming_the_field(
    tenant: Tenant, tool: dict[str, Any], param: str
) -> None:
    body = {"model": MINI, "messages": [{"role": "user", "content": "Hi"}], "tools": [tool]}
    with tenant.client() as http:
        chat = http.post("/chat/completions", json=body)
        responses = http.post("/responses", json={"model": MINI, "input": "Hi", "tools": [tool]})
        quote = http.post("/ai-gateway/quote", json=body)
    for answer in (chat, responses, quote):
        assert_error(answer, 400, "invalid_request")
        assert answer.json()["error"]["param"] == param


def test_a_tool_given_twice_is_refused(tenant: Tenant) -> None:
    with tenant.client() as http:
        answer = http.post(
            "/chat/completions",
            json={
                "model": MINI,
                "messages": [{"role": "user", "content": "Hi"}],
                "tools": [FETCH, DATETIME, FETCH],
            },
        )
    assert_error(answer, 400, "invalid_request")
    assert answer.json()["error"]["param"] == "tools[2]"


def test_content_is_cut_to_max_content_tokens(tenant: Tenant) -> None:
    cut_short = [{**FETCH, "parameters": {"max_content_tokens": 10}}]
    with tenant.client() as http:
        outputs = [
            http.post(
                "/responses", json={"model": MINI, "input": f"Read {PAGE}", "tools": tools}
            ).json()["output"]
            for tools in (cut_short, [FETCH])
        ]
    cut, uncut = (output[0]["content"] for output in outputs)
    assert len(cut) == 40 and uncut.startswith(cut) and len(uncut) > 100


def test_the_hold_and_the_quote_count_the_pages_a_fetch_will_charge(tenant: Tenant) -> None:
    """The same prompt fetched by a charging engine and by OpenRouter's free one: the
    hold and the quote differ by what the formula adds for two pages, and no more."""
    content = f"Compare {PAGE} with https://example.org/rye-bread"
    free = [{**FETCH, "parameters": {"engine": "openrouter"}}]
    held, quoted = {}, {}
    with tenant.client() as http:
        for name, tools in (("charged", [FETCH]), ("free", free)):
            ask(http, content, tools=tools)
            reservation = http.get("/ai-gateway/reservations", params={"limit": 1}).json()
            held[name] = reservation["data"][0]["amount_micros"]
            body = {
                "model": MINI,
                "messages": [{"role": "user", "content": content}],
                "tools": tools,
            }
            quoted[name] = http.post("/ai-gateway/quote", json=body).json()
    assert quoted["charged"]["estimated_input_tokens"] == quoted["free"]["estimated_input_tokens"]
    assert held["charged"] == quoted["charged"]["hold_micros"]
    assert held["free"] == quoted["free"]["hold_micros"]
    tokens = quoted["free"]["estimated_input_tokens"], quoted["free"]["estimated_output_tokens"]
    with_pages = charge_for(*tokens, 150_000, 600_000, FEES, web_fetches=2)
    assert quoted["charged"]["estimated_charge_micros"] == with_pages.charge_micros
    assert quoted["charged"]["estimated_charge_micros"] - quoted["free"][
        "estimated_charge_micros"
    ] in (2110, 2111)
    assert held["charged"] - held["free"] in (2110, 2111)


def test_odd_urls_are_read_or_fail_cleanly(tenant: Tenant) -> None:
    odd = "http://[::1]/x http:///x http://a:99999/x https://EXAMPLE.com./Rye http://%zz/ x.invalid"
    with tenant.client() as http:
        answer = ask(http, f"See {odd}", tools=[FETCH])
    text = answer["choices"][0]["message"]["content"]
    # `http://[` is no URL; a URL without a host fails; the others are read.
    assert answer["usage"]["server_tool_use_details"] == {
        "tool_calls_requested": 4,
        "tool_calls_executed": 3,
    }
    assert "I could not read http:///x." in text
    assert "From [example.com](https://EXAMPLE.com./Rye): Example | example.com." in text
