"""The options several `emulator` commands share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from emulator.settings import DEFAULT_DB


def _db_option(help_text: str) -> Callable[[Any], Any]:
    return click.option(
        "--db", default=DEFAULT_DB, show_default=True, envvar="EMULATOR_DB", help=help_text
    )


db_option = _db_option("SQLite file holding the state, or :memory: for none.")
# The state commands work on a server's file: `:memory:` is one process's database.
state_db_option = _db_option(
    "The SQLite state file a server uses (not :memory:, a database no other process sees)."
)
fixtures_option = click.option(
    "--fixtures",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    envvar="EMULATOR_FIXTURES",
    help="A fixtures folder (default: the bundled demo world).",
)
seed_option = click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    envvar="EMULATOR_SEED",
    help="Seed of every generated id, secret and text.",
)
state_seed_option = click.option(
    "--seed",
    type=int,
    default=None,
    envvar="EMULATOR_SEED",
    help="Seed of the ids it makes [default: the one the state was served with, else 0].",
)
