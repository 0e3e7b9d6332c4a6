"""The `emulator` command: serve and openapi here; reset, seed, keys and topup, which
work on a state file, in `cli_state`.

Every `serve` option is also an EMULATOR_* environment variable. Heavy
imports happen inside the commands, so `emulator --help` is instant.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from emulator import __version__, cli_state
from emulator.cli_options import db_option, fixtures_option, seed_option
from emulator.settings import Settings, why_unsendable

if TYPE_CHECKING:
    from emulator.runtime import Runtime

DEMO_CREDENTIALS = [
    ("sk-emu-demo-all", "API key", "acct_demo: ai.gateway, video, studio.media"),
    ("sk-emu-demo-gateway", "API key", "acct_demo: ai.gateway"),
    ("sk-emu-demo-video", "API key", "acct_demo: video"),
    ("sk-emu-demo-studio", "API key", "acct_demo: studio.media"),
    ("sk-emu-demo-limited", "API key", "acct_demo: spend limit 2000 micros, monthly"),
    ("sk-emu-demo-ratelimited", "API key", "acct_demo: 3 requests per minute"),
    ("sk-emu-demo-disabled", "API key", "acct_demo: disabled"),
    ("sk-emu-broke", "API key", "acct_broke: balance 0"),
    ("sk-emu-other", "API key", "acct_other: all scopes"),
    ("emu_user_demo", "user token", "acct_demo: manages its keys"),
    ("emu_user_other", "user token", "acct_other"),
]


MIN_JOB_SPEED, MAX_JOB_SPEED = 0.001, 1_000_000


def _job_speed(value: str) -> float | None:
    if value == "instant":
        return None
    try:
        speed = float(value)
    except ValueError:
        speed = -1.0
    # Bounded so durations stay finite and above zero (1e-310 made every job last forever).
    if not MIN_JOB_SPEED <= speed <= MAX_JOB_SPEED:  # NaN too
        raise click.BadParameter(
            f"a number from {MIN_JOB_SPEED} to {MAX_JOB_SPEED:,} (2 = twice as fast) or 'instant'"
        )
    return speed


def _known_errors() -> tuple[type[Exception], ...]:
    from emulator.errors import EmulatorError
    from emulator.runtime import SeedInUse
    from emulator.server import ListenError
    from emulator.snapshots.service import SnapshotError
    from emulator.store.fixtures import FixtureError

    return (
        FixtureError,
        SnapshotError,
        EmulatorError,
        ListenError,
        SeedInUse,
        sqlite3.DatabaseError,
    )


class _Commands(click.Group):
    """Every command reports what is wrong with its input (a broken fixtures folder, a
    file that is not a snapshot, an answer the API would refuse) as one `Error:` line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _known_errors() as exc:
            said = str(exc)
            if isinstance(exc, sqlite3.DatabaseError):  # `file is not a database`: which
                said = f"the state file (--db) cannot be used: {said}"
            raise click.ClickException(said) from exc


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="emulator")
def main() -> None:
    """The Gateway & Studio emulator: the whole API on your laptop, deterministic and fast.

    Start it with `emulator serve`, then point a client at http://127.0.0.1:8787/api/v1
    with the API key sk-emu-demo-all.
    """


@main.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    envvar="EMULATOR_HOST",
    help="Interface to listen on.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8787,
    show_default=True,
    envvar="EMULATOR_PORT",
    help="Port to listen on (0: a free one, named in the banner).",
)
@db_option
@fixtures_option
@click.option(
    "--reset",
    is_flag=True,
    envvar="EMULATOR_RESET",
    help="Wipe the state and re-seed the fixtures on start.",
)
@seed_option
@click.option(
    "--clock",
    type=click.Choice(["real", "manual"]),
    default="real",
    show_default=True,
    envvar="EMULATOR_CLOCK",
    help="real follows the wall clock; manual stands still until POST /_emulator/clock.",
)
@click.option(
    "--job-speed",
    default="1",
    show_default=True,
    envvar="EMULATOR_JOB_SPEED",
    help="Scale of simulated job durations (2 = twice as fast), or 'instant'.",
)
@click.option(
    "--stream-delay-ms",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    envvar="EMULATOR_STREAM_DELAY_MS",
    help="Pause between stream chunks; 0 = none.",
)
@click.option(
    "--admin-token",
    envvar="EMULATOR_ADMIN_TOKEN",
    callback=lambda _ctx, _param, token: _sendable_admin_token(token),
    help="When set, /_emulator/* requires it as a bearer or X-Emulator-Admin-Token.",
)
@click.option(
    "--control-origin",
    "control_origins",
    multiple=True,
    envvar="EMULATOR_CONTROL_ORIGINS",
    callback=lambda _ctx, _param, origins: _control_origins(origins),
    help="A web page's origin (http://devbox:3000; null; * for any) allowed to call "
    "/_emulator/* without an admin token, besides localhost's; repeatable.",
)
@click.option(
    "--allow-faults/--no-allow-faults",
    default=True,
    show_default=True,
    envvar="EMULATOR_ALLOW_FAULTS",
    help="Obey the X-Emulator-Fault request header (fault rules of /_emulator/faults "
    "always apply; guard them with --admin-token).",
)
@click.option(
    "--journal-size",
    type=click.IntRange(min=0, max=1_000_000),
    default=1000,
    show_default=True,
    envvar="EMULATOR_JOURNAL_SIZE",
    help="Requests kept in the journal (/_emulator/requests); 0 = no journal.",
)
@click.option(
    "--restore",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    envvar="EMULATOR_RESTORE",
    help="Start from a snapshot file (written by --snapshot-on-exit).",
)
@click.option(
    "--snapshot-on-exit",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="EMULATOR_SNAPSHOT_ON_EXIT",
    help="Write the whole state to this file when the server stops.",
)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
    envvar="EMULATOR_LOG_LEVEL",
    help="Server log level; debug also logs every request.",
)
def serve(**options: Any) -> None:
    """Start the emulator (default http://127.0.0.1:8787/api/v1)."""
    options["job_speed"] = _job_speed(options["job_speed"])
    settings = Settings(**options)
    _check_snapshot_target(settings)
    # Start-up creates many long-lived objects (models, routes): collecting garbage
    # among them only slows the cold start. `run` freezes them and turns it back on.
    gc.disable()
    from emulator.server import run

    # uvicorn raises the Ctrl-C again once it has stopped: a stop asked for, not a failure
    with contextlib.suppress(KeyboardInterrupt):
        run(settings, banner=lambda rt: click.echo(banner(rt)))


def _control_origins(origins: tuple[str, ...]) -> tuple[str, ...]:
    from emulator.control_origins import normal_origin

    try:
        return tuple(normal_origin(o) for o in origins)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--control-origin") from exc


def _sendable_admin_token(token: str | None) -> str | None:
    """A token a client can send: one blank or edged with spaces (stripped from every
    header) would lock the control plane for good, and look open in the banner."""
    if token is None:
        return None
    why = why_unsendable(token)
    if why is not None and not token.strip():
        why += (
            ": give a token, or leave the option out for an open control plane "
            '(an unset variable in `--admin-token "$TOKEN"` gives a blank one)'
        )
    if why is not None:
        raise click.BadParameter(why)
    return token


def _check_snapshot_target(settings: Settings) -> None:
    """`--snapshot-on-exit` is written at the stop: a path that cannot be is said now,
    before a session whose state it was meant to keep."""
    target = settings.snapshot_on_exit
    if target is None:
        return
    resolved = target.expanduser().resolve()
    parent = resolved.parent
    if not settings.in_memory and resolved == Path(settings.db).expanduser().resolve():
        raise click.BadParameter("is the state file itself", param_hint="--snapshot-on-exit")
    if not parent.is_dir():
        raise click.BadParameter(f"no directory {parent}", param_hint="--snapshot-on-exit")
    if not os.access(parent, os.W_OK):
        raise click.BadParameter(f"{parent} is not writable", param_hint="--snapshot-on-exit")
    if resolved.is_dir():
        raise click.BadParameter(f"{resolved} is a directory", param_hint="--snapshot-on-exit")
    if resolved.is_file() and resolved.stat().st_size and not _is_sqlite(resolved):
        # It is replaced at the stop: a file that is no snapshot is someone's, kept.
        raise click.BadParameter(
            f"{resolved} exists and is not a snapshot (an SQLite file): name a new file",
            param_hint="--snapshot-on-exit",
        )


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def banner(rt: Runtime) -> str:
    s = rt.settings
    root = f"http://{s.host}:{s.port}"
    lines = [
        f"Gateway & Studio emulator {__version__}",
        f"  API       {s.base_url}",
        f"  Docs      {root}/schema   (OpenAPI: {root}/schema/openapi.json)",
        f"  Control   {root}/_emulator" + ("   (admin token required)" if s.admin_token else ""),
        f"  Dashboard {root}/_emulator/dashboard",
        f"  State     {s.db}   seed {s.seed}, clock {s.clock} ({rt.clock.now_iso()})",
    ]
    from emulator.control_origins import is_loopback_host

    if not s.admin_token and not is_loopback_host(s.host):
        lines.append(
            f"WARNING: listening on {s.host} without --admin-token: anyone who can reach "
            "this machine can reset the state, read the journal and create keys."
        )
    if s.fixtures is None:
        lines.append("Demo credentials (Authorization: Bearer <credential>):")
        lines += [f"  {c:<25} {kind:<10} {note}" for c, kind, note in DEMO_CREDENTIALS]
    elif rt.seeded_from == str(rt.fixtures_dir):
        lines.append(f"Fixtures: {s.fixtures}")
    else:
        lines.append(
            f"Fixtures: {s.fixtures} NOT LOADED: {s.db} holds the world built from "
            f"{rt.seeded_from or 'another folder'}. Start with --reset (or POST "
            "/_emulator/reset) to load it, or `emulator seed --fixtures` to merge it."
        )
    return "\n".join(lines)


@main.command()
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of standard output.",
)
def openapi(output: Path | None) -> None:
    """Print the OpenAPI document of every route (the one served at /schema/openapi.json)."""
    from emulator.app import create_app
    from emulator.openapi import finish

    app = create_app(Settings(db=":memory:"))
    text = json.dumps(finish(app.openapi_schema.to_schema(), app), indent=2)
    if output is None:
        click.echo(text)
        return
    try:
        output.write_text(text + "\n")
    except OSError as exc:
        raise click.ClickException(f"cannot write {output}: {exc.strerror or exc}") from exc


for _command in (cli_state.reset, cli_state.seed, cli_state.keys, cli_state.topup):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
