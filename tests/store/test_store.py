"""The store: one shared in-memory database, migrations, seeding, the ledger, fixtures."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from emulator.runtime import merge_fixtures, open_runtime
from emulator.settings import Settings, default_fixtures_dir
from emulator.store import Store
from emulator.store.accounts import get_account, ledger_sum
from emulator.store.fixtures import FixtureError, load_fixtures
from emulator.store.migrations import MIGRATIONS, migrate


def test_memory_database_is_one_database_for_every_connection_and_thread() -> None:
    store = Store(":memory:")
    with store.write() as conn:
        conn.execute("CREATE TABLE t (v INTEGER)")
        conn.execute("INSERT INTO t VALUES (1)")
    # A second connection to the same URI sees the same data...
    other = sqlite3.connect(store.uri, uri=True)
    assert other.execute("SELECT v FROM t").fetchall() == [(1,)]
    other.close()
    # ...and so does every thread going through the store.
    seen: list[int] = []

    def read() -> None:
        with store.read() as conn:
            seen.append(conn.execute("SELECT v FROM t").fetchone()[0])

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [1, 1, 1, 1]
    # Two stores are two databases.
    assert Store(":memory:").uri != store.uri


@pytest.mark.skipif(sqlite3.sqlite_version_info < (3, 36), reason="no memdb before SQLite 3.36")
def test_memory_database_is_a_memdb_file_not_a_shared_cache() -> None:
    # A shared-cache memory database walks its whole page cache on every commit:
    # requests got slower as it grew (docs/performance.md). memdb stays flat.
    store = Store(":memory:")
    assert "vfs=memdb" in store.uri and "cache=shared" not in store.uri
    with store.write() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] != "off"  # rollbacks work


def test_a_file_database_is_wal_and_checkpoints_every_4000_pages(tmp_path: Path) -> None:
    # The CLI writes while a server runs (WAL); checkpoints are batched (docs/performance.md).
    store = Store(str(tmp_path / "state.db"))
    with store.read() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 4000
    store.close()


def test_write_rolls_back_on_error() -> None:
    store = Store(":memory:")
    with store.write() as conn:
        conn.execute("CREATE TABLE t (v INTEGER)")
    with pytest.raises(RuntimeError), store.write() as conn:
        conn.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError
    with store.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0


def test_write_keeps_what_an_answer_error_recorded_and_drops_sequence_blocks() -> None:
    rt = open_runtime(Settings(db=":memory:"))
    with rt.store.write() as conn:
        conn.execute("CREATE TABLE t (v INTEGER)")
    with pytest.raises(LookupError), rt.store.write(keep=(LookupError,)) as conn:
        conn.execute("INSERT INTO t VALUES (1)")
        raise LookupError
    # A block of ids reserved inside a transaction that rolls back is given up with it:
    # the next ids are the same numbers again, never a duplicate later.
    with pytest.raises(RuntimeError), rt.store.write():
        first = rt.new_id("gen")
        raise RuntimeError
    assert rt.new_id("gen") == first
    with rt.store.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 1


def test_the_key_cache_sees_every_writer_of_what_authentication_reads(tmp_path: Path) -> None:
    from emulator.ids import hash_secret

    rt = open_runtime(Settings(db=str(tmp_path / "state.db")))
    secret = hash_secret("sk-emu-demo-all")
    with rt.store.read() as conn:
        key, owner = rt.keys.lookup(conn, secret) or (None, None)
    assert key is not None and key.status == "active" and owner is not None
    # Another process (the CLI) disables the key and approves the account.
    other = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
    other.execute("UPDATE api_keys SET status = 'disabled' WHERE secret_hash = ?", [secret])
    other.execute("UPDATE accounts SET premium_approved = 1 WHERE id = ?", [key.account_id])
    other.close()
    with rt.store.read() as conn:
        key, owner = rt.keys.lookup(conn, secret) or (None, None)
    assert key is not None and key.status == "disabled"
    assert owner is not None and owner.premium_approved
    # A reset never winds the epoch back to a value a stale cache could trust.
    with rt.store.read() as conn:
        before = conn.execute("SELECT value FROM _auth_epoch").fetchone()[0]
    rt.reset()
    with rt.store.read() as conn:
        assert conn.execute("SELECT value FROM _auth_epoch").fetchone()[0] > before
        key, _ = rt.keys.lookup(conn, secret) or (None, None)
    assert key is not None and key.status == "active"


def test_an_in_memory_key_cache_reads_the_epoch_only_after_a_write() -> None:
    from emulator.ids import hash_secret

    rt = open_runtime(Settings(db=":memory:"))
    secret = hash_secret("sk-emu-demo-all")
    statements: list[str] = []
    with rt.store.read() as conn:
        rt.keys.lookup(conn, secret)
        conn.set_trace_callback(statements.append)
        for _ in range(3):  # a run of reads (polls): no other process can have written
            key, _owner = rt.keys.lookup(conn, secret) or (None, None)
        assert statements == [] and key is not None and key.status == "active"
    with rt.store.write() as conn:  # any write of this connection: read the epoch again
        conn.execute("UPDATE api_keys SET status = 'disabled' WHERE secret_hash = ?", [secret])
    with rt.store.read() as conn:
        key, _owner = rt.keys.lookup(conn, secret) or (None, None)
        conn.set_trace_callback(None)
    assert key is not None and key.status == "disabled"
    assert any("_auth_epoch" in s for s in statements)


def test_the_key_as_it_is_now_is_the_cached_one_until_the_epoch_moves() -> None:
    """Spending reads the key again in its transaction (`KeyCache.current`): no query
    on an in-memory database this connection has not written since authentication,
    the epoch once it has, the row again once a key changed."""
    from emulator.ids import hash_secret

    rt = open_runtime(Settings(db=":memory:"))
    secret = hash_secret("sk-emu-demo-all")
    with rt.store.read() as conn:
        cached, _owner = rt.keys.lookup(conn, secret) or (None, None)
    assert cached is not None
    statements: list[str] = []
    with rt.store.write() as conn:
        conn.set_trace_callback(statements.append)
        assert rt.keys.current(conn, cached) is cached
        assert statements == []
        conn.execute("UPDATE accounts SET balance_micros = 1 WHERE id = ?", [cached.account_id])
        assert rt.keys.current(conn, cached) is cached  # a write, but not to what auth reads
        conn.set_trace_callback(None)
        assert statements[-1] == "SELECT value FROM _auth_epoch"
        conn.execute("UPDATE api_keys SET status = 'disabled' WHERE id = ?", [cached.id])
        fresh = rt.keys.current(conn, cached)
        assert fresh is not None and fresh.status == "disabled"
        conn.execute("DELETE FROM api_keys WHERE id = ?", [cached.id])
        assert rt.keys.current(conn, cached) is None


def test_migrations_run_once() -> None:
    store = Store(":memory:")
    with store.write() as conn:
        assert migrate(conn) == [name for name, _ in MIGRATIONS]
        assert migrate(conn) == []


def test_file_state_survives_a_restart_and_reset_flag_wipes_it(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    rt = open_runtime(Settings(db=db, clock="manual"))
    rt.clock.advance(120)
    rt.save_clock()
    from emulator.billing.ledger import top_up

    top_up(rt, "acct_demo", 1_000_000, "test")
    rt.store.close()
    again = open_runtime(Settings(db=db, clock="manual"))
    with again.store.read() as conn:
        assert get_account(conn, "acct_demo").balance_micros == 26_000_000  # type: ignore[union-attr]
    assert again.clock.now_iso() == "2026-01-01T00:02:00.000Z"
    again.store.close()
    wiped = open_runtime(Settings(db=db, clock="manual", reset=True))
    with wiped.store.read() as conn:
        assert get_account(conn, "acct_demo").balance_micros == 25_000_000  # type: ignore[union-attr]
    assert wiped.clock.now_iso() == "2026-01-01T00:00:00.000Z"


def test_balances_equal_the_sum_of_the_ledger() -> None:
    rt = open_runtime(Settings(db=":memory:"))
    with rt.store.read() as conn:
        for account_id in ("acct_demo", "acct_broke", "acct_other"):
            account = get_account(conn, account_id)
            assert account is not None
            assert ledger_sum(conn, account_id, "usd_micros") == account.balance_micros
            assert ledger_sum(conn, account_id, "studio_credits") == account.studio_credits


def test_seed_merges_without_touching_balances(tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    shutil.copytree(default_fixtures_dir(), fixtures)
    rt = open_runtime(Settings(db=":memory:", fixtures=fixtures))
    from emulator.billing.ledger import top_up

    top_up(rt, "acct_demo", 5, "test")
    text = (
        (fixtures / "pricing.yaml")
        .read_text()
        .replace("platform_fee_percent: 5.5", "platform_fee_percent: 7")
    )
    (fixtures / "pricing.yaml").write_text(text)
    merge_fixtures(rt)
    assert rt.catalog.view().pricing["platform_fee_percent"] == 7
    with rt.store.read() as conn:
        assert get_account(conn, "acct_demo").balance_micros == 25_000_005  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        ("models.yaml", "provider: xai,", "provider: nobody,", "nobody"),
        ("models.yaml", "id: openai/gpt-4.1", "id: gpt-4.1", "vendor"),
        ("accounts.yaml", "id: key_other", "id: key_broke", "key_broke"),
        (
            "pricing.yaml",
            "minimum_charge_micros: 20",
            "minimum_charge_micros: -1",
            "minimum_charge_micros",
        ),
        (
            "world.yaml",
            "default_rate_limit_rpm: 600",
            "default_rate_limit_rpm: [",
            "not valid YAML",
        ),
        ("video.yaml", '"1:1": {width', '"4:3": {width', "no output clip for aspect ratio 1:1"),
        (
            "models.yaml",
            "capabilities: [streaming, reasoning]\n    default_reasoning: shown",
            "capabilities: [streaming]\n    default_reasoning: shown",
            "default_reasoning needs the `reasoning` capability",
        ),
        (
            "models.yaml",
            "cache_read_micros_per_mtok: 75000",
            "cache_read_micros_per_mtok: 150001",
            "must not exceed prompt_micros_per_mtok",
        ),
        # A misspelt list key loaded as no models, and seeding then dropped them all.
        ("models.yaml", "\nmodels:", "\nmodel:", "unknown key 'model'.*`models:`"),
        ("accounts.yaml", "\naccounts:", "\nacounts:", "unknown key 'acounts'"),
        # A price or a time that pays the account, or never ends, is a typo.
        ("video.yaml", "standard: 60000", "standard: -1000", "greater than or equal to 0"),
        ("video.yaml", "multi_elements_micros: 180000", "multi_elements_micros: -1", "tasks"),
        ("video.yaml", "durations: [5, 10]", "durations: [0, 10]", "durations"),
        ("video.yaml", "processing_s: 2,", "processing_s: .inf,", "finite"),
        # A clip a video would be served from, missing: the request would fail.
        ("video.yaml", "media/video-16x9-5s.mp4", "media/typo-16x9-5s.mp4", "typo-16x9-5s.mp4"),
        ("video.yaml", "durations: [5, 10]", "durations: [5, 7, 10]", "no 16:9 clip of 7 s"),
    ],
)
def test_a_broken_fixture_names_file_and_field(tmp_path: Path, file, old, new, message) -> None:
    fixtures = tmp_path / "fixtures"
    shutil.copytree(default_fixtures_dir(), fixtures)
    path = fixtures / file
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    with pytest.raises(FixtureError, match=message):
        load_fixtures(fixtures)


def test_a_fixture_edited_within_one_tick_of_the_file_clock_is_read_again(tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    shutil.copytree(default_fixtures_dir(), fixtures)
    assert load_fixtures(fixtures).pricing.platform_fee_percent == 5.5
    path = fixtures / "pricing.yaml"
    before = path.stat()
    path.write_text(
        path.read_text().replace("platform_fee_percent: 5.5", "platform_fee_percent: 7")
    )
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # a coarse file clock
    assert load_fixtures(fixtures).pricing.platform_fee_percent == 7


@pytest.mark.parametrize("content", [None, b"\xff\xfe not UTF-8"])
def test_an_unreadable_fixture_names_its_file(tmp_path: Path, content: bytes | None) -> None:
    fixtures = tmp_path / "fixtures"
    shutil.copytree(default_fixtures_dir(), fixtures)
    path = fixtures / "models.yaml"
    path.unlink()
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(FixtureError, match=r"models\.yaml: cannot be read"):
        load_fixtures(fixtures)


def test_the_default_fixtures_hold_the_contract_credentials() -> None:
    fx = load_fixtures(default_fixtures_dir())
    secrets = {k.secret: (a.id, k) for a in fx.accounts for k in a.keys}
    assert set(secrets) == {
        "sk-emu-demo-all",
        "sk-emu-demo-gateway",
        "sk-emu-demo-video",
        "sk-emu-demo-studio",
        "sk-emu-demo-limited",
        "sk-emu-demo-ratelimited",
        "sk-emu-demo-disabled",
        "sk-emu-broke",
        "sk-emu-other",
    }
    assert secrets["sk-emu-demo-limited"][1].spend_limit_micros == 2000
    assert secrets["sk-emu-broke"][0] == "acct_broke"
    tokens = {t: a.id for a in fx.accounts for t in a.user_tokens}
    assert tokens == {"emu_user_demo": "acct_demo", "emu_user_other": "acct_other"}
    demo = next(a for a in fx.accounts if a.id == "acct_demo")
    assert demo.balance_micros == 25_000_000 and demo.studio_credits > 0


def test_secrets_are_stored_only_as_hashes() -> None:
    rt = open_runtime(Settings(db=":memory:"))
    with rt.store.read() as conn:
        dump = "\n".join(conn.iterdump())
    assert "sk-emu-demo-all" not in dump and "emu_user_demo" not in dump


def test_a_state_file_from_before_video_jobs_gets_the_video_catalog(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    rt = open_runtime(Settings(db=db))
    with rt.store.write() as conn:
        conn.execute("DELETE FROM platform WHERE key = 'video'")
    rt.store.close()
    again = open_runtime(Settings(db=db))
    with again.store.read() as conn:
        video = conn.execute("SELECT value FROM platform WHERE key = 'video'").fetchone()
    assert video is not None and "vidprov/v1.6" in video[0]
