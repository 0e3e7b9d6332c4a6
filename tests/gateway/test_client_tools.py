"""Anthropic's client tools (text editor, bash, memory) on `/messages` (`client_tools`):
called with `tool_use` blocks of their own name and a runnable input."""

from __future__ import annotations

from typing import Any, get_args

import anthropic
import pytest

from emulator.gateway.client_tools import CLIENT_TOOLS
from emulator.gateway.messages_tools import ClientToolType
from emulator.gateway.prompt_facts import Facts

SONNET = "anthropic/claude-sonnet-4"
EDITOR: Any = {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}


def test_every_client_tool_is_taken_by_the_schema() -> None:
    assert set(get_args(ClientToolType)) == set(CLIENT_TOOLS)


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("Open src/app.py and fix the bug", ("src/app.py",)),
        ("What's in /etc/hosts?", ("/etc/hosts",)),
        ("Look at main.py.", ("main.py",)),
        ("Edit README.md, then config/settings.yaml", ("README.md", "config/settings.yaml")),
        ("Read ./docs/ please", ("./docs/",)),
        ("and/or TCP/IP, e.g. example.com, version 3.11", ()),
        ("See https://example.com/a/b.html or mail a@b.co", ()),
    ],
)
def test_paths_are_read_as_written(text: str, paths: tuple[str, ...]) -> None:
    assert Facts(text, lambda rng: "").paths == paths


def test_the_editor_views_the_file_the_user_named(claude: anthropic.Anthropic) -> None:
    ask: Any = [{"role": "user", "content": "Open src/app.py and fix the bug"}]
    made = claude.messages.create(model=SONNET, max_tokens=500, messages=ask, tools=[EDITOR])
    call = made.content[-1]
    assert made.stop_reason == "tool_use" and call.type == "tool_use"
    assert call.name == "str_replace_based_edit_tool"
    assert call.input == {"command": "view", "path": "src/app.py"}
    result = {"type": "tool_result", "tool_use_id": call.id, "content": "1: print('hi')"}
    answer = claude.messages.create(
        model=SONNET,
        max_tokens=500,
        tools=[EDITOR],
        messages=[
            *ask,
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in made.content],
            },
            {"role": "user", "content": [result]},
        ],
    )
    assert answer.stop_reason == "end_turn" and "print('hi')" in answer.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("tool", "wanted"),
    [
        ({"type": "bash_20250124", "name": "bash"}, "command"),
        ({"type": "memory_20250818", "name": "memory"}, "path"),
    ],
)
def test_bash_and_memory_are_called_with_runnable_input(
    claude: anthropic.Anthropic, tool: dict[str, Any], wanted: str
) -> None:
    made = claude.messages.create(
        model=SONNET,
        max_tokens=500,
        messages=[{"role": "user", "content": "What do we have so far?"}],
        tools=[tool],
    )
    call = made.content[-1]
    assert call.type == "tool_use" and call.name == tool["name"]
    schema = CLIENT_TOOLS[tool["type"]][2]
    assert set(call.input) == set(schema["required"]) and wanted in call.input  # type: ignore[arg-type]
    if tool["name"] == "memory":
        assert call.input == {"command": "view", "path": "/memories"}
    else:
        assert call.input["command"] in schema["properties"]["command"]["enum"]  # type: ignore[index]


def test_a_client_tool_goes_by_its_own_name(claude: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError) as refused:
        claude.messages.create(
            model=SONNET,
            max_tokens=100,
            messages=[{"role": "user", "content": "Open main.py"}],
            tools=[{**EDITOR, "name": "editor"}],
        )
    assert "str_replace_based_edit_tool" in str(refused.value)
