"""The `emulator` command: every subcommand works and has useful help."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from emulator.billing import holds
from emulator.cli import main
from emulator.clock import parse_iso
from emulator.runtime import open_runtime
from emulator.settings import Settings, default_fixtures_dir
from emulator.store import reservations
from emulator.store.accounts import list_ledger

COMMANDS = [
    ["serve"],
    ["reset"],
    ["seed"],
    ["openapi"],
    ["keys"],
    ["keys", "list"],
    ["keys", "create"],
    ["topup"],
]


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "state.db")


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout  # what a script reads (notes go to standard error)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_help(command: list[str]) -> None:
    out = run(*command, "--help")
    assert "Usage:" in out and len(out.splitlines()) > 4


def test_serve_options_are_documented_with_their_environment_variables() -> None:
    out = run("serve", "--help")
    for option in (
        "--host",
        "--port",
        "--db",
        "--fixtures",
        "--reset",
        "--seed",
        "--clock",
        "--job-speed",
        "--stream-delay-ms",
        "--admin-token",
        "--log-level",
    ):
        assert option in out
    from emulator.cli import serve

    for param in serve.params:
        assert param.envvar == f"EMULATOR_{param.name.upper()}", param.name  # type: ignore[union-attr]


def test_bad_serve_options_are_refused_before_starting() -> None:
    for speed in ("fast", "0", "nan", "inf", "1e-310", "0.0009", "1e7"):
        result = CliRunner().invoke(main, ["serve", "--job-speed", speed])
        assert result.exit_code == 2 and "instant" in result.output
    result = CliRunner().invoke(main, ["serve", "--clock", "sundial"])
    assert result.exit_code == 2


def test_an_admin_token_no_client_can_send_is_refused() -> None:
    for token, says in (
        ("", "blank"),
        ("  ", "blank"),
        ("s3cret ", "ends"),
        ("caf\u00e9", "ASCII"),
    ):
        result = CliRunner().invoke(main, ["serve", "--admin-token", token])
        assert result.exit_code == 2 and says in result.output, (token, result.output)
    blank = CliRunner().invoke(main, ["serve"], env={"EMULATOR_ADMIN_TOKEN": " "})
    assert blank.exit_code == 2 and "blank" in blank.output


@pytest.mark.parametrize(
    "command",
    [
        ["topup", "acct_demo", "1"],
        ["keys", "create", "acct_demo", "--name", "x"],
        ["keys", "list", "acct_demo"],
        ["reset"],
        ["seed", "--fixtures", str(default_fixtures_dir())],
    ],
)
def test_state_commands_refuse_an_in_memory_database(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--db", ":memory:"])
    assert result.exit_code == 2 and "no server sees" in result.output, result.output
    assert "sk-emu-" not in result.output


def test_keys_create_then_list(db: str) -> None:
    out = run(
        "keys",
        "create",
        "acct_demo",
        "--name",
        "from cli",
        "--scope",
        "ai.gateway",
        "--scope",
        "video",
        "--spend-limit-micros",
        "500",
        "--reset-interval",
        "daily",
        "--db",
        db,
    )
    key_id, secret = out.split()[:2]
    assert key_id.startswith("key_") and secret.startswith("sk-emu-")
    listed = run("keys", "list", "acct_demo", "--db", db)
    assert key_id in listed and "from cli" in listed and secret not in listed
    assert "limit 500 micros daily" in listed


def test_keys_create_refuses_what_the_api_refuses(db: str) -> None:
    result = CliRunner().invoke(
        main, ["keys", "create", "acct_demo", "--name", "v", "--scope", "video", "--db", db]
    )
    assert result.exit_code == 1 and "ai.gateway" in result.output
    result = CliRunner().invoke(main, ["keys", "create", "acct_nope", "--name", "v", "--db", db])
    assert result.exit_code == 1 and "acct_nope" in result.output
    result = CliRunner().invoke(main, ["keys", "create", "acct_demo", "--name", "", "--db", db])
    assert result.exit_code == 1 and result.exception is not None
    assert result.output.startswith("Error: Invalid field `name`: String should have at least 1")


@pytest.mark.parametrize("command", [["keys", "list", "acct_demo"], ["topup", "acct_demo", "1"]])
def test_a_file_that_is_not_a_state_is_one_error_line(command: list[str], tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    result = CliRunner().invoke(main, [*command, "--db", str(text)])
    assert result.exit_code == 1, result.output
    assert result.output == "Error: the state file (--db) cannot be used: file is not a database\n"


def test_topup_writes_a_ledger_entry(db: str) -> None:
    out = run("topup", "acct_demo", "12.50", "--db", db)
    assert "+12.500000 USD" in out and "balance 37.500000 USD" in out
    result = CliRunner().invoke(main, ["topup", "acct_demo", "lots", "--db", db])
    assert result.exit_code == 2
    result = CliRunner().invoke(main, ["topup", "acct_nope", "1", "--db", db])
    assert result.exit_code == 1 and "acct_nope" in result.output


def test_commands_beside_a_server_leave_its_holds_and_keep_its_clock(db: str) -> None:
    """A server may be serving the file: a hold there is a request in flight (releasing
    it would let the balance go negative), and what a command writes is dated by the
    server's virtual clock, not the wall clock."""
    served = open_runtime(Settings(db=db, clock="manual"))
    served.clock.set(parse_iso("2026-03-01T12:00:00Z"))
    served.save_clock()
    taken = holds.hold(served, "acct_demo", None, 600, None)
    run("keys", "list", "acct_demo", "--db", db)
    run("topup", "acct_demo", "1", "--db", db)
    with served.store.read() as conn:
        assert reservations.active_total(conn, "acct_demo") == 600
        ((_, topup),) = list_ledger(conn, "acct_demo", {"kind": "topup"}, 1, None)
    assert topup.created_at == "2026-03-01T12:00:00.000Z"
    # A server started on the file once that one stopped does release it: its request died.
    served.close()
    restarted = open_runtime(Settings(db=db))
    with restarted.store.read() as conn:
        assert reservations.active_total(conn, "acct_demo") == 0
    assert taken.amount == 600


def test_reset_and_seed(db: str, tmp_path: Path) -> None:
    run("topup", "acct_demo", "1", "--db", db)
    assert "Reset" in run("reset", "--db", db)
    assert "balance 26.000000" in run("topup", "acct_demo", "1", "--db", db)
    from emulator.settings import default_fixtures_dir

    assert "Seeded" in run("seed", "--fixtures", str(default_fixtures_dir()), "--db", db)
    assert "balance 27.000000" in run("topup", "acct_demo", "1", "--db", db)


def test_seed_replaces_the_catalog(db: str, tmp_path: Path) -> None:
    import shutil

    import yaml

    from emulator.settings import default_fixtures_dir

    run("reset", "--db", db)
    folder = tmp_path / "fx"
    shutil.copytree(default_fixtures_dir(), folder)
    catalog = yaml.safe_load((folder / "models.yaml").read_text())
    catalog["models"] = [m for m in catalog["models"] if m["id"] != "emulator/premium"]
    (folder / "models.yaml").write_text(yaml.safe_dump(catalog))
    run("seed", "--fixtures", str(folder), "--db", db)
    rt = open_runtime(Settings(db=db), serving=False)
    with rt.store.read() as conn:
        models = {r["id"] for r in conn.execute("SELECT id FROM models")}
        served = {r["model_id"] for r in conn.execute("SELECT model_id FROM model_providers")}
    rt.store.close()
    assert "emulator/premium" not in models | served
    assert models == served == {m["id"] for m in catalog["models"]}


def test_state_commands_use_the_seed_the_state_was_served_with(db: str, tmp_path: Path) -> None:
    def made(state: str) -> tuple[list[str], str]:
        run("reset", "--db", state)
        key = run("keys", "create", "acct_demo", "--name", "ci", "--db", state)
        rt = open_runtime(Settings(db=state, seed=None), serving=False)
        with rt.store.read() as conn:
            entries = [entry.id for _, entry in list_ledger(conn, "acct_demo", {}, 100, None)]
        rt.store.close()
        return entries, key

    open_runtime(Settings(db=db, seed=42)).close()
    twin = str(tmp_path / "twin.db")
    open_runtime(Settings(db=twin, seed=42)).close()
    unserved = str(tmp_path / "unserved.db")
    assert made(db) == made(twin) != made(unserved)
    assert "served with" in " ".join(run("reset", "--help").split())


@pytest.mark.parametrize(
    "command",
    [["reset"], ["keys", "create", "acct_demo", "--name", "ci"], ["topup", "acct_demo", "1"]],
    ids=["reset", "keys-create", "topup"],
)
def test_another_seed_beside_a_live_server_is_refused(db: str, command: list[str]) -> None:
    served = open_runtime(Settings(db=db, seed=42))
    try:
        result = CliRunner().invoke(main, [*command, "--seed", "5", "--db", db])
        assert result.exit_code == 1 and result.output == (
            f"Error: a server is serving {db} with --seed 42: run this command with "
            "--seed 42 (or none), or stop the server first\n"
        )
        run(*command, "--seed", "42", "--db", db)  # its own seed is fine
    finally:
        served.close()
    run(*command, "--seed", "5", "--db", db)  # no server: the command's seed


def test_broken_fixtures_are_a_clear_error(tmp_path: Path, db: str) -> None:
    folder = tmp_path / "fx"
    folder.mkdir()
    (folder / "models.yaml").write_text("models: [{id: nope}]\n")
    result = CliRunner().invoke(main, ["reset", "--fixtures", str(folder), "--db", db])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert (
        "models.yaml: 0.id: Value error, a model id has the form <vendor>/<model_name>"
        in result.output
    )


def test_openapi_prints_the_document(tmp_path: Path) -> None:
    doc = json.loads(run("openapi"))
    assert doc["openapi"].startswith("3.") and "/api/v1/keys" in doc["paths"]
    target = tmp_path / "openapi.json"
    run("openapi", "-o", str(target))
    assert json.loads(target.read_text()) == doc


@pytest.mark.parametrize(
    ("filename", "text", "message"),
    [
        ("accounts.yaml", "accounts: [{id: 5}]\n", "accounts.yaml: 0.id: Input should be"),
        ("models.yaml", "models: [1, 2\n", "models.yaml: not valid YAML"),
        ("world.yaml", "clock_start: '2026-02-30T00:00:00Z'\n", "not an ISO-8601 instant"),
        ("world.yaml", "clock_start: '1960-01-01T00:00:00Z'\n", "runs from 1970-01-01"),
        (
            "accounts.yaml",
            "accounts: [{id: acct_x, name: x, balance_micros: 99999999999999999999}]\n",
            "0.balance_micros: Value error, at most 1,000,000,000,000,000",
        ),
    ],
    ids=["invalid", "not-yaml", "no-such-day", "before-the-clock", "too-large"],
)
@pytest.mark.parametrize("command", ["reset", "seed"])
def test_broken_fixtures_are_a_clear_error_on_a_state_already_seeded(
    tmp_path: Path, db: str, command: str, filename: str, text: str, message: str
) -> None:
    run("reset", "--db", db)  # seeded: the fixtures load only in reset or seed itself
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / filename).write_text(text)
    result = CliRunner().invoke(main, [command, "--fixtures", str(folder), "--db", db])
    assert result.exit_code == 1 and result.exception is not None
    assert isinstance(result.exception, SystemExit)  # click's error, not a traceback
    assert result.output.startswith("Error: ") and message in result.output


def test_keys_list_of_an_unknown_account_is_an_error(db: str) -> None:
    result = CliRunner().invoke(main, ["keys", "list", "acct_nope", "--db", db])
    assert result.exit_code == 1
    assert result.stderr.endswith(f"Error: no account 'acct_nope' in {db}\n")


def test_the_readme_usage_of_keys_create_works(db: str) -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `emulator keys create"))
    assert "--product" in row
    example = row.split("e.g. `")[1].split("`")[0].split()
    out = run("keys", "create", "acct_demo", "--name", "readme", *example, "--db", db)
    assert out.split()[1].startswith("sk-emu-")


def test_bad_paths_and_ports_are_one_error_line(tmp_path: Path, db: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    cases = [
        (["serve", "--snapshot-on-exit", str(notes)], "is not a snapshot"),
        (["serve", "--snapshot-on-exit", str(tmp_path)], "is a directory"),
        (["serve", "--port", "70000"], "70000 is not in the range 0<=x<=65535"),
        (["serve", "--snapshot-on-exit", str(blocker / "x.snap")], f"no directory {blocker}"),
        (["serve", "--db", db, "--snapshot-on-exit", db], "is the state file itself"),
        (["openapi", "-o", str(blocker / "x.json")], f"cannot write {blocker / 'x.json'}"),
        (["topup", "acct_demo", "1", "--db", str(blocker / "sub" / "s.db")], "cannot create"),
    ]
    for args, message in cases:
        result = CliRunner().invoke(main, args)
        assert result.exit_code in (1, 2) and isinstance(result.exception, SystemExit), args
        assert result.output.startswith(("Error: ", "Usage: ")) and message in result.output
        assert "Traceback" not in result.output
    assert notes.read_text() == "my notes"


def test_keys_list_shows_every_key_past_a_page(db: str) -> None:
    from emulator.keys.schemas import KeyCreate
    from emulator.keys.service import create_key
    from emulator.runtime import open_runtime
    from emulator.settings import Settings

    run("reset", "--db", db)
    rt = open_runtime(Settings(db=db))
    try:
        made = [create_key(rt, "acct_demo", KeyCreate(name=f"k{i}")).id for i in range(101)]
    finally:
        rt.close()
    listed = run("keys", "list", "acct_demo", "--db", db)
    assert all(key_id in listed for key_id in made) and len(listed.splitlines()) > 101


@pytest.mark.parametrize(
    ("host", "token", "warned"),
    [
        ("0.0.0.0", None, True),
        ("192.168.1.5", None, True),
        ("devbox", None, True),
        ("0.0.0.0", "s3cret", False),
        ("127.0.0.1", None, False),
        ("localhost", None, False),
        ("::1", None, False),
    ],
)
def test_the_banner_warns_of_an_open_control_plane_on_the_network(
    host: str, token: str | None, warned: bool
) -> None:
    from types import SimpleNamespace

    from emulator.cli import banner

    rt = SimpleNamespace(
        settings=Settings(host=host, admin_token=token), clock=SimpleNamespace(now_iso=str)
    )
    assert ("WARNING: listening on" in banner(rt)) is warned  # type: ignore[arg-type]


def test_reset_beside_a_server_loads_the_fixtures_it_serves(tmp_path: Path) -> None:
    """A review found `emulator reset` next to `serve --fixtures DIR` loaded the bundled
    demo world: the custom one, its accounts and prices, were silently replaced."""
    import shutil

    custom = tmp_path / "world"
    shutil.copytree(default_fixtures_dir(), custom)
    db = str(tmp_path / "state.db")
    server = open_runtime(Settings(db=db, fixtures=custom))
    try:
        server.reset()  # the server's own reset keeps what it serves on record
        for _ in range(2):
            result = CliRunner().invoke(main, ["reset", "--db", db])
            assert result.exit_code == 0, result.output
            assert str(custom.resolve()) in result.output
        other = CliRunner().invoke(
            main, ["reset", "--db", db, "--fixtures", str(default_fixtures_dir())]
        )
        assert str(default_fixtures_dir()) in other.output  # named: that one
        again = CliRunner().invoke(main, ["reset", "--db", db])
        assert str(custom.resolve()) in again.output  # the server still serves its own
    finally:
        server.close()
    shutil.rmtree(custom)
    gone = CliRunner().invoke(main, ["reset", "--db", db])
    assert str(default_fixtures_dir()) in gone.output  # a folder no longer there: bundled


def test_a_command_on_a_file_not_there_says_it_made_one(db: str) -> None:
    """A typo in --db, or another folder than the server's: the change lands in a new
    file no server uses, and the command says so (a state prepared before serving is
    made the same way, so it is not refused)."""
    made = CliRunner().invoke(main, ["topup", "acct_demo", "1", "--db", db])
    assert made.exit_code == 0
    assert "Note: there was no state file at" in made.stderr and db in made.stderr
    assert made.stdout.startswith("acct_demo: +1.000000 USD")
    again = CliRunner().invoke(main, ["keys", "list", "acct_demo", "--db", db])
    assert again.exit_code == 0 and "Note:" not in again.stderr


@pytest.mark.parametrize("command", [["reset"], ["topup", "acct_demo", "1"]])
def test_another_programs_database_is_never_taken_over(command: list[str], tmp_path: Path) -> None:
    """A mistyped --db naming an app's SQLite file: refused, its tables and journal
    mode untouched (a reset would have wiped them)."""
    theirs = tmp_path / "app.db"
    with closing(sqlite3.connect(theirs)) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO users (name) VALUES ('alice')")
        conn.commit()
    result = CliRunner().invoke(main, [*command, "--db", str(theirs)])
    assert result.exit_code == 1, result.output
    assert "is not an emulator state file (it holds the tables users)" in result.output
    with closing(sqlite3.connect(theirs)) as conn:
        assert conn.execute("SELECT name FROM users").fetchall() == [("alice",)]
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["users"]


def test_serve_tells_when_its_fixtures_are_not_the_states(tmp_path: Path) -> None:
    """`serve --fixtures DIR` on a state built from another folder serves that state
    (the banner says DIR is not loaded, and how to load it); a broken DIR is told at
    once, not at the first reset."""
    from emulator.cli import banner
    from emulator.store.fixtures import FixtureError

    db = str(tmp_path / "state.db")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "accounts.yaml").write_text(
        (default_fixtures_dir() / "accounts.yaml").read_text(), encoding="utf-8"
    )
    open_runtime(Settings(db=db), serving=False).close()
    rt = open_runtime(Settings(db=db, fixtures=mine))
    try:
        assert f"Fixtures: {mine} NOT LOADED" in banner(rt)
        assert "--reset" in banner(rt)
    finally:
        rt.close()
    rt = open_runtime(Settings(db=db, fixtures=mine, reset=True))
    try:
        assert banner(rt).endswith(f"Fixtures: {mine}")
    finally:
        rt.close()
    rt = open_runtime(Settings(db=db, fixtures=mine))  # served again: loaded
    try:
        assert banner(rt).endswith(f"Fixtures: {mine}")
    finally:
        rt.close()
    (mine / "accounts.yaml").write_text("accounts: 3\n", encoding="utf-8")
    with pytest.raises(FixtureError, match=r"accounts\.yaml"):
        open_runtime(Settings(db=str(tmp_path / "other.db"), fixtures=mine)).close()
    open_runtime(Settings(db=str(tmp_path / "b.db")), serving=False).close()
    with pytest.raises(FixtureError, match=r"accounts\.yaml"):
        open_runtime(Settings(db=str(tmp_path / "b.db"), fixtures=mine)).close()
