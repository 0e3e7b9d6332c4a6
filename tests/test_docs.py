"""Docs that cannot drift: every command, option, control route and credential is documented."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from emulator.app import create_app
from emulator.cli import main
from emulator.settings import Settings, default_fixtures_dir
from emulator.store.fixtures import load_fixtures

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
