"""Fixtures that would load and then misbehave are refused at load, naming file and
field: repeated keys and ids, rules the API itself enforces, names the code reads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from emulator.cli import main
from emulator.settings import default_fixtures_dir
from emulator.store.fixtures import FixtureError, load_fixtures


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the bundled fixtures, to edit."""
    copy = tmp_path / "fixtures"
    shutil.copytree(default_fixtures_dir(), copy)
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def refused(folder: Path, message: str) -> str:
    with pytest.raises(FixtureError, match=message) as caught:
        load_fixtures(folder)
    return str(caught.value)


def test_a_repeated_key_is_refused_naming_file_and_line(folder: Path) -> None:
    """The README's `replies:` example pasted below the file's own would have replaced
    every bundled rule."""
    replies = folder / "replies.yaml"
    lines = replies.read_text().count("\n")
    with replies.open("a") as out:
        out.write('replies:\n  - {pattern: "^x$", reply: y}\n')
    error = refused(folder, "the key 'replies' is given twice")
    assert str(replies) in error and f"line {lines + 1}:" in error


def test_a_repeated_key_in_a_nested_mapping_is_refused(folder: Path) -> None:
    edit(folder / "video.yaml", "sound: false\n", "sound: false\n    sound: true\n")
    refused(folder, r"video\.yaml: line \d+: the key 'sound' is given twice")


def test_a_yaml_merge_key_may_still_be_overridden(tmp_path: Path) -> None:
    (tmp_path / "replies.yaml").write_text(
        'replies:\n  - &hi {pattern: "^hi$", reply: Hello}\n  - {<<: *hi, reply: Hey}\n'
    )
    assert [r.reply for r in load_fixtures(tmp_path).replies] == ["Hello", "Hey"]


def test_the_cli_says_which_key_is_repeated(tmp_path: Path, folder: Path) -> None:
    edit(folder / "world.yaml", "default_rate_limit_rpm: 600", "default_rate_limit_rpm: 600\n" * 2)
    result = CliRunner().invoke(
        main, ["reset", "--fixtures", str(folder), "--db", str(tmp_path / "state.db")]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "world.yaml: line" in result.output and "'default_rate_limit_rpm'" in result.output
