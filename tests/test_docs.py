"""Docs that cannot drift: every command, option, control route and credential is
documented, and the testing guide's examples pass."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from emulator.app import create_app
from emulator.cli import main
from emulator.settings import Settings, default_fixtures_dir
from emulator.store.fixtures import load_fixtures
from emulator.testing import EmulatorHandle

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def commands(group: click.Group, prefix: str = "emulator") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        found.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            found += commands(command, f"{prefix} {name}")
    return found


@pytest.mark.parametrize(("name", "command"), commands(main), ids=lambda v: str(v))
def test_every_cli_command_has_help_and_is_in_the_readme(name: str, command: click.Command) -> None:
    assert command.help, f"{name} has no help text"
    assert f"`{name}" in README, f"{name} is not in the README"


def test_every_serve_option_is_in_the_readme() -> None:
    serve = main.commands["serve"]
    for param in serve.params:
        assert isinstance(param, click.Option)
        assert param.help, param.name
        assert f"`{param.opts[0]}" in README, param.opts[0]
        assert f"`{param.envvar}`" in README, param.envvar


def test_every_control_route_is_in_the_readme_with_a_summary() -> None:
    app = create_app(Settings(db=":memory:"))
    for route in app.routes:
        if not route.path.startswith("/_emulator"):
            continue
        for handler in route.route_handlers:  # type: ignore[union-attr]
            for method in sorted(handler.http_methods - {"OPTIONS", "HEAD"}):
                path = re.sub(r":\w+}", "}", route.path).replace("{account_id}", "{id}")
                assert f"`{method} {path}`" in README, f"{method} {path}"
                assert handler.summary, path


def test_every_demo_credential_is_in_the_readme() -> None:
    fx = load_fixtures(default_fixtures_dir())
    for account in fx.accounts:
        for key in account.keys:
            assert f"`{key.secret}`" in README, key.secret
        for token in account.user_tokens:
            assert f"`{token}`" in README, token


def test_every_fixture_file_is_described() -> None:
    described = (ROOT / "fixtures" / "README.md").read_text()
    for path in default_fixtures_dir().glob("*.yaml"):
        assert f"`{path.name}`" in described, path.name


def test_the_readme_gives_the_two_commands() -> None:
    assert "pip install -e . && emulator serve" in README
    assert "pip install -e '.[test]' && pytest" in README


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, re.S)


def test_the_readme_s_client_examples_run(demo: EmulatorHandle) -> None:
    """The README's scripts (OpenAI, the Agents SDK, Anthropic) run as written, against
    this run's emulator instead of the default address."""
    scripts = [b for b in python_blocks(README) if "def test_" not in b]
    assert len(scripts) >= 3
    for script in scripts:
        assert "http://127.0.0.1:8787" in script
        code = script.replace("http://127.0.0.1:8787", demo.url)
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 0, script + run.stderr[-2000:]


def test_the_testing_guide_s_python_examples_pass_as_written(tmp_path: Path) -> None:
    """docs/testing.md's examples (and the README's test) are tests a user copies: run
    them, each block a file of its own (the block that starts `# conftest.py` is the
    conftest), under the plugin, in a pytest of their own."""
    guide = (ROOT / "docs" / "testing.md").read_text()
    blocks = python_blocks(guide) + [b for b in python_blocks(README) if "def test_" in b]
    written = 0
    for number, block in enumerate(blocks):
        name = "conftest.py" if block.startswith("# conftest.py") else f"test_guide_{number}.py"
        (tmp_path / name).write_text(block)
        written += len(re.findall(r"^def test_", block, re.M))
    assert (tmp_path / "conftest.py").exists() and written >= 10
    own = {k: v for k, v in os.environ.items() if not k.startswith(("EMULATOR_", "PYTEST_"))}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=own,  # its own emulator, whatever this run was given
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert f"{written} passed" in run.stdout, run.stdout[-2000:]
