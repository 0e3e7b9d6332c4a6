"""The `emulator` commands that change or read a server's state file directly: reset,
seed, keys and topup (`emulator.cli` adds them to its group)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from emulator.cli_options import fixtures_option, state_db_option, state_seed_option
from emulator.settings import MEMORY_DB, Settings

if TYPE_CHECKING:
    from emulator.runtime import Runtime


def _open(
    db: str,
    fixtures: Path | None,
    seed: int | None = None,
    reset: bool = False,
    *,
    existing: bool = False,
    verb: str = "change",
) -> Runtime:
    """The state of a server's file. `existing`: a command that reads or adds to a
    state says so when the file was not there (a typo, another folder than the
    server's): it is made and seeded, as a state prepared before serving is."""
    from emulator.runtime import open_runtime

    if db == MEMORY_DB:  # a database of this process alone: no server would see the change
        raise click.UsageError(
            f"--db :memory: is a database of one process: this command would {verb} a "
            "state no server sees. Name the server's file, or use a `:memory:` server "
            "over HTTP (GET /_emulator/accounts/{id}, POST /_emulator/accounts/{id}/topup, "
            "POST /api/v1/keys, POST /_emulator/reset)."
        )
    new = existing and not Path(db).exists()
    # serving=False: a server may be using the same file (its holds stay, its clock dates)
    rt = open_runtime(Settings(db=db, fixtures=fixtures, seed=seed, reset=reset), serving=False)
    if new:
        click.echo(
            f"Note: there was no state file at {Path(db).resolve()}: it is made now, from "
            "the fixtures. A server on another file does not see this command's change.",
            err=True,
        )
    return rt


def _open_account(db: str, account: str, seed: int | None = None, verb: str = "change") -> Runtime:
    """The state, once ACCOUNT is known to be in it."""
    from emulator.store.accounts import get_account

    rt = _open(db, None, seed, existing=True, verb=verb)
    with rt.store.read() as conn:
        if get_account(conn, account) is None:
            raise click.ClickException(f"no account {account!r} in {db}")
    return rt


@click.command()
@state_db_option
@fixtures_option
@state_seed_option
def reset(db: str, fixtures: Path | None, seed: int | None) -> None:
    """Wipe the state file and load the fixtures again."""
    rt = _open(db, fixtures, seed)
    rt.reset()
    click.echo(f"Reset {db} to the fixtures in {rt.fixtures_dir}.")


@click.command()
@state_db_option
@click.option(
    "--fixtures",
    required=True,
    envvar="EMULATOR_FIXTURES",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The fixtures folder to load.",
)
@state_seed_option
def seed(db: str, fixtures: Path, seed: int | None) -> None:
    """Merge a fixtures folder into the state: the catalog and pricing are replaced,
    accounts and keys are added when missing (existing balances are kept)."""
    from emulator.runtime import merge_fixtures

    rt = _open(db, fixtures, seed)
    merge_fixtures(rt)
    click.echo(f"Seeded {db} from {fixtures}.")


@click.group()
def keys() -> None:
    """List or create API keys directly in the state file."""


@keys.command("list")
@click.argument("account")
@state_db_option
def keys_list(account: str, db: str) -> None:
    """List ACCOUNT's API keys (never their secrets)."""
    from emulator.keys.service import list_keys

    rt = _open_account(db, account, verb="read")
    keys, cursor = [], None
    while True:  # every page: an account may have more keys than one holds
        page = list_keys(rt, account, limit=100, cursor=cursor)
        keys += page["data"]
        cursor = page["next_cursor"]
        if not page["has_more"] or cursor is None:
            break
    if not keys:
        click.echo(f"{account} has no API keys.")
    for key in keys:
        limit = key["spend_limit_micros"]
        spend = f"limit {limit} micros {key['spend_reset_interval'] or 'total'}" if limit else ""
        click.echo(
            f"{key['id']:<26} {key['key_hint']:<16} {key['status']:<9} "
            f"{','.join(key['scopes']):<32} {key['name']} {spend}".rstrip()
        )


@keys.command("create")
@click.argument("account")
@click.option("--name", required=True, help="A label for the key.")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    default=["ai.gateway"],
    show_default=True,
    type=click.Choice(["ai.gateway", "video", "studio.media"]),
    help="Repeat for several scopes.",
)
@click.option(
    "--product",
    type=click.Choice(["ai_gateway", "video", "studio"]),
    default="ai_gateway",
    show_default=True,
    help="What the key is for (its own spend and usage are counted per product).",
)
@click.option("--spend-limit-micros", type=click.IntRange(min=0), help="Spend limit in micros.")
@click.option(
    "--reset-interval",
    type=click.Choice(["daily", "weekly", "monthly"]),
    help="Window of the spend limit (none: the limit covers all time).",
)
@state_db_option
@state_seed_option
def keys_create(
    account: str,
    name: str,
    scopes: tuple[str, ...],
    product: str,
    spend_limit_micros: int | None,
    reset_interval: str | None,
    db: str,
    seed: int | None,
) -> None:
    """Create an API key for ACCOUNT and print its secret (shown only now)."""
    from emulator.bodies import validate
    from emulator.keys.schemas import KeyCreate
    from emulator.keys.service import create_key

    rt = _open_account(db, account, seed)
    # Checked as the API checks its body: what it refuses is one `Error:` line, in its words.
    body = validate(
        {
            "name": name,
            "scopes": list(scopes),
            "product": product,
            "spend_limit_micros": spend_limit_micros,
            "spend_reset_interval": reset_interval,
        },
        KeyCreate,
    )
    created = create_key(rt, account, body)
    click.echo(f"{created.id}  {created.key}")
    click.echo("Store the secret now: it is not shown again.", err=True)


@click.command()
@click.argument("account")
@click.argument("usd")
@state_db_option
@state_seed_option
def topup(account: str, usd: str, db: str, seed: int | None) -> None:
    """Add USD to ACCOUNT's balance (USD such as 10.00): a ledger entry, as the dashboard
    writes."""
    from emulator.billing.ledger import top_up
    from emulator.billing.money import micros_to_usd, usd_to_micros
    from emulator.store.accounts import get_account

    try:
        micros = usd_to_micros(usd)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="USD") from exc
    rt = _open(db, None, seed, existing=True)
    entry = top_up(rt, account, micros, reference="cli")
    with rt.store.read() as conn:
        balance = get_account(conn, account)
    assert balance is not None
    click.echo(
        f"{account}: +{micros_to_usd(micros)} USD (ledger entry {entry.id}); "
        f"balance {micros_to_usd(balance.balance_micros)} USD"
    )
