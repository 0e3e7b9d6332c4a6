"""What the fake providers say, on their own: the generator is made only when drawn from."""

from __future__ import annotations

import random

from emulator.gateway.canonical import Message, Request, Tool
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
