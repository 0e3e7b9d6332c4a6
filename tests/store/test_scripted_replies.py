"""Scripted replies in fixtures/replies.yaml: a text or tool calls, checked at load time."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.gateway.scripted import ScriptedReply
from emulator.store.fixtures import FixtureError, load_fixtures


def load(tmp_path: Path, replies: str) -> list[dict]:
    (tmp_path / "replies.yaml").write_text("replies:\n" + replies)
    return [rule.stored() for rule in load_fixtures(tmp_path).replies]


def test_a_rule_scripts_tool_calls_as_compact_json_in_the_written_order(tmp_path: Path) -> None:
    stored = load(
        tmp_path,
        """
  - pattern: "^book it$"
    tool_calls:
      - {name: book, arguments: {when: "2026-01-02", seats: 2, ok: true, notes: null}}
      - {name: notify}
""",
    )
    assert stored == [
        {
            "pattern": "^book it$",
            "tool_calls": [
                {"name": "book", "arguments": {"when": "2026-01-02", "seats": 2, "ok": True,
                                               "notes": None}},
                {"name": "notify", "arguments": {}},
            ],
            "models": [],
        }
    ]  # fmt: skip
    rule = ScriptedReply.stored(stored[0])
    assert rule.reply is None
    assert rule.tool_calls == (
        ("book", '{"when":"2026-01-02","seats":2,"ok":true,"notes":null}'),
        ("notify", "{}"),
    )


def test_a_text_rule_is_stored_as_before(tmp_path: Path) -> None:
    stored = load(tmp_path, '  - {pattern: "^hi$", reply: "Hello", models: [a/b]}\n')
    assert stored == [{"pattern": "^hi$", "reply": "Hello", "models": ["a/b"]}]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ('{pattern: x, reply: "y", tool_calls: [{name: f}]}', "either `reply`.*not both"),
        ("{pattern: x}", "either `reply`.*not neither"),
        ("{pattern: x, tool_calls: []}", "at least one"),
        (
            "{pattern: x, tool_calls: [{arguments: {a: 1}}]}",
            r"0\.tool_calls\.0\.name: Field required",
        ),
        ('{pattern: x, tool_calls: [{name: ""}]}', "needs the name of a tool"),
        ("{pattern: x, tool_calls: [{name: f, arguments: [1, 2]}]}", "must be a mapping.*not list"),
        ("{pattern: x, tool_calls: [{name: f, arguments: {d: 2026-01-02}}]}", "quote dates"),
        ("{pattern: x, tool_calls: [f]}", r"tool_calls\.0"),
        ("{pattern: 'a{99999999}', reply: y}", "required repeats come to 10,001 or more"),
    ],
)
def test_a_broken_rule_is_a_clear_error(tmp_path: Path, rule: str, message: str) -> None:
    with pytest.raises(FixtureError, match=f"replies.yaml: .*{message}"):
        load(tmp_path, f"  - {rule}\n")
