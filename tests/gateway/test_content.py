"""What the fake providers say: the generator is made only when drawn from; what a prompt's
tools cost."""

from __future__ import annotations

import random
from typing import Any

from emulator.gateway.canonical import ForcedTool, Message, Request, Tool, ToolCall
from emulator.gateway.content import generate
from emulator.gateway.topic_words import topic_words
from emulator.ids import Ids, LazyRng
from emulator.testing import Tenant


class Counted:
    """A generator factory that counts how often it made one."""

    def __init__(self) -> None:
        self.made = 0

    def __call__(self) -> random.Random:
        self.made += 1
        return Ids(0).rng("test")


def ask(model: str, **fields: object) -> tuple[str | None, int]:
    make = Counted()
    request = Request(messages=(Message(role="user", text="Explain caching"),), **fields)  # type: ignore[arg-type]
    completion = generate(model, request, "chat", LazyRng(make))
    text = completion.text if completion.text is not None else completion.tool_calls[0].arguments
    return text, make.made


def test_an_echo_draws_nothing_so_no_generator_is_made() -> None:
    assert ask("emulator/echo") == ("Explain caching", 0)


def test_generated_text_and_tool_arguments_make_one_generator() -> None:
    text, made = ask("openai/gpt-4o")
    assert made == 1 and text
    tool = Tool("lookup", "", {"type": "object", "properties": {"q": {"type": "string"}}})
    arguments, made = ask("openai/gpt-4o", tools=(tool,))
    assert made == 1 and arguments and arguments.startswith("{")


def scripted(pattern: str, reply: str | None = None, *calls: str, models: tuple = ()) -> object:
    from emulator.gateway.scripted import ScriptedReply

    rule = {"pattern": pattern, "reply": reply, "models": list(models)}
    rule["tool_calls"] = [{"name": name, "arguments": {"n": 1}} for name in calls]
    return ScriptedReply.stored(rule)


def answer(model: str, replies: tuple, **fields: object) -> tuple[str | None, list[str]]:
    request = Request(messages=(Message(role="user", text="Book it "),), **fields)  # type: ignore[arg-type]
    completion = generate(model, request, "chat", LazyRng(Counted()), replies)  # type: ignore[arg-type]
    return completion.text, [call.name for call in completion.tool_calls]


def test_the_first_scripted_reply_that_applies_wins() -> None:
    tools = tuple(Tool(name, "", {"type": "object"}) for name in ("book", "notify"))
    both = scripted("^book", None, "book", "notify")
    for_b = scripted("^book", None, "notify", models=("a/b",))
    text = scripted("book it", "Booked.")
    assert answer("a/b", (both, text), tools=tools) == (None, ["book", "notify"])
    assert answer("a/b", (for_b, both), tools=tools) == (None, ["notify"])
    assert answer("c/d", (for_b, both), tools=tools) == (None, ["book", "notify"])
    # A rule whose tools are not all offered does not apply: the next one does.
    assert answer("a/b", (both, text), tools=tools[:1], tool_choice="none") == ("Booked.", [])
    assert answer("a/b", (both, text)) == ("Booked.", [])
    # A text rule answers in words where `auto` would have called the first tool; a
    # request that demands a call gets a generated one.
    assert answer("a/b", (text, both), tools=tools) == ("Booked.", [])
    assert answer("a/b", (text, both), tools=tools, tool_choice="required") == (None, ["book"])
    assert answer("a/b", (text,), tools=tools, tool_choice=ForcedTool("notify")) == (
        None,
        ["notify"],
    )


def test_the_tokens_directive_holds_for_the_answer_after_tool_results() -> None:
    call = ToolCall(id="call_1", name="lookup", arguments="{}")
    messages = (
        Message(role="user", text="Summarise it [emulator:tokens=40]"),
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", text="42 orders", tool_call_id="call_1"),
    )
    completion = generate("openai/gpt-4o", Request(messages=messages), "chat", LazyRng(Counted()))
    assert completion.output_tokens == 40 and completion.finish_reason == "stop"
    assert completion.text and completion.text.startswith("According to lookup, the result is")
    cut = generate(
        "openai/gpt-4o", Request(messages=messages, max_tokens=10), "chat", LazyRng(Counted())
    )
    assert (cut.output_tokens, cut.finish_reason) == (10, "length")


def test_a_tools_description_is_input_tokens_on_every_endpoint(tenant: Tenant) -> None:
    """A tool's description is read as part of the prompt, as its name and schema are, and
    billed: the count, the answer's usage and the usage event agree."""
    words = " ".join(f"step{i}" for i in range(400))
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    ask = [{"role": "user", "content": "Weather in Oslo?"}]

    def bodies(description: str) -> dict[str, tuple[str, dict[str, Any], str]]:
        chat_tool = {"type": "function", "function": {"name": "w", "parameters": schema}}
        item_tool = {"type": "function", "name": "w", "parameters": schema}
        claude_tool = {"name": "w", "input_schema": schema}
        if description:
            chat_tool["function"]["description"] = description  # type: ignore[index]
            item_tool["description"] = claude_tool["description"] = description
        base = {"model": "anthropic/claude-sonnet-4", "tool_choice": "none"}
        return {
            "chat": (
                "/chat/completions",
                {**base, "messages": ask, "tools": [chat_tool]},
                "prompt_tokens",
            ),
            "responses": (
                "/responses",
                {**base, "input": ask, "tools": [item_tool]},
                "input_tokens",
            ),
            "messages": (
                "/messages",
                {
                    **base,
                    "tool_choice": {"type": "none"},
                    "max_tokens": 20,
                    "messages": ask,
                    "tools": [claude_tool],
                },
                "input_tokens",
            ),
        }

    with tenant.client() as http:
        for (path, bare, field), (_, described, _) in zip(
            bodies("").values(), bodies(words).values(), strict=True
        ):
            plain = http.post(path, json=bare).json()["usage"][field]
            answer = http.post(path, json=described).json()
            assert answer["usage"][field] >= plain + 400, path  # at least a token a word
            if path == "/messages":
                counted = http.post("/messages/count_tokens", json=described).json()
                assert counted["input_tokens"] == answer["usage"][field]
        events = http.get("/ai-gateway/usage").json()["data"]
    assert [e["prompt_tokens"] >= 400 for e in events].count(True) == 3


def test_a_url_lends_its_path_words_not_its_scheme_or_host(tenant: Tenant) -> None:
    prompt = "Compare https://docs.example.com/kite-flying with https://gone.invalid/kites"
    assert topic_words(prompt) == ["kite-flying", "kites"]
    body = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": prompt}]}
    with tenant.client() as http:
        text = http.post("/chat/completions", json=body).json()["choices"][0]["message"]["content"]
    assert "kite" in text and "https" not in text and "invalid" not in text


def test_no_sentence_is_said_twice_in_an_answer(tenant: Tenant) -> None:
    prompts = [f"How do I reverse a list in Python, case {n}?" for n in range(40)]
    with tenant.client() as http:
        for prompt in prompts:
            body = {"model": "openai/gpt-4o", "messages": [{"role": "user", "content": prompt}]}
            answer = http.post("/chat/completions", json=body).json()
            sentences = answer["choices"][0]["message"]["content"].split(". ")
            assert len(sentences) == len(set(sentences)), sentences


def test_the_answer_after_a_result_ends_its_sentence_once() -> None:
    call = ToolCall(id="call_1", name="weather", arguments="{}")

    def after(result: str) -> str | None:
        messages = (
            Message(role="user", text="Weather in Oslo?"),
            Message(role="assistant", tool_calls=(call,)),
            Message(role="tool", text=result, tool_call_id="call_1"),
        )
        return generate("a/b", Request(messages=messages), "chat", LazyRng(Counted())).text

    assert after("It is sunny.") == (
        "According to weather, the result is: It is sunny. Let me know what you would like next."
    )
    assert after("18 C").startswith("According to weather, the result is: 18 C. Let")  # type: ignore[union-attr]


def test_answers_write_proper_names_as_the_prompt_does() -> None:
    def text(prompt: str) -> str:
        messages = (Message(role="user", text=prompt),)
        made = generate("a/b", Request(messages=messages), "chat", LazyRng(Counted()))
        return made.text or ""

    about_rome = text("What should I see in Rome and Florence with friends?")
    assert "Rome" in about_rome or "Florence" in about_rome
    assert " rome" not in about_rome and " florence" not in about_rome
    # A sentence's first word is no name: it stays lower-cased inside the answer.
    weather = text("Weather forecasts: how reliable are they?")
    assert "Weather" not in weather[1:] and "weather" in weather


def test_an_agent_handed_to_answers_the_user() -> None:
    handoff = ToolCall(id="call_1", name="transfer_to_billing", arguments="{}")
    lookup = ToolCall(id="call_2", name="lookup", arguments="{}")
    asked = Message(role="user", text="Why was Acme invoiced twice?")

    def after(*results: Message) -> str:
        calls = tuple(c for c in (handoff, lookup) if c.id in {r.tool_call_id for r in results})
        messages = (asked, Message(role="assistant", tool_calls=calls), *results)
        made = generate("a/b", Request(messages=messages), "chat", LazyRng(Counted()))
        return made.text or ""

    handed = Message(role="tool", text='{"assistant": "billing"}', tool_call_id="call_1")
    found = Message(role="tool", text="2 invoices", tool_call_id="call_2")
    assert (
        after(handed)
        == generate("a/b", Request(messages=(asked,)), "chat", LazyRng(Counted())).text
    )  # as if unasked
    assert after(handed, found) == (
        "According to lookup, the result is: 2 invoices. Let me know what you would like next."
    )
