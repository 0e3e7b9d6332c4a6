"""What the fake providers say, on their own: the generator is made only when drawn from."""

from __future__ import annotations

import random

from emulator.gateway.canonical import Message, Request, Tool, ToolCall
from emulator.gateway.content import generate
from emulator.ids import Ids, LazyRng


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
    assert answer("a/b", (text,), tools=tools, tool_choice="notify") == (None, ["notify"])


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
