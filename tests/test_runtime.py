"""The runtime follows what another process does to its file (`emulator reset` beside
a server) and numbers every state a reset or restore makes."""

from __future__ import annotations

import shutil
from pathlib import Path

from emulator.billing import holds
from emulator.clock import parse_iso
from emulator.control.schemas import ProviderSet
from emulator.control.service import set_provider
from emulator.runtime import Runtime, merge_fixtures, open_runtime
from emulator.settings import Settings, default_fixtures_dir
from emulator.snapshots.service import restore_from
from emulator.store import reservations
from emulator.store.accounts import get_account, list_ledger
from emulator.store.meta import get_world
from tests.billing.test_holds import _event


def test_a_hold_of_a_state_reset_by_another_process_charges_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    served = open_runtime(Settings(db=db, clock="manual"))
    taken = holds.hold(served, "acct_demo", None, 600, None)  # a stream in flight
    served.clock.set(parse_iso("2026-03-01T00:00:00Z"))
    served.save_clock()

    open_runtime(Settings(db=db), serving=False).reset()  # `emulator reset`

    holds.settle(served, taken, _event(served.new_id("gen"), 500))
    with served.store.read() as conn:
        account = get_account(conn, "acct_demo")
        ledger = list_ledger(conn, "acct_demo", {}, 200, None)
        assert reservations.active_total(conn, "acct_demo") == 0
    assert account is not None and account.balance_micros == 25_000_000
    assert not [entry for _, entry in ledger if entry.kind == "charge"]
    assert served.clock.now_iso() == "2026-01-01T00:00:00.000Z"


def test_a_top_up_by_another_process_is_not_a_reset(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    served = open_runtime(Settings(db=db))
    world = served.world
    taken = holds.hold(served, "acct_demo", None, 600, None)
    beside = open_runtime(Settings(db=db), serving=False)
    with beside.store.write() as conn:
        conn.execute("UPDATE accounts SET balance_micros = balance_micros + 1")
    served.store.check_outside()
    assert served.world == world
    holds.settle(served, taken, _event(served.new_id("gen"), 500))
    with served.store.read() as conn:
        account = get_account(conn, "acct_demo")
    assert account is not None and account.balance_micros == 25_000_000 + 1 - 500


def test_a_restored_state_is_numbered_after_every_state_before(tmp_path: Path) -> None:
    rt = open_runtime(Settings(db=str(tmp_path / "state.db")))
    saved = rt.snapshots.save(rt, "start")
    rt.reset()
    rt.reset()
    before = rt.world
    restore_from(rt, saved.conn)
    with rt.store.read() as conn:
        assert get_world(conn) == rt.world > before


def test_a_state_without_its_number_is_left_to_the_restore_copying_it(tmp_path: Path) -> None:
    """A snapshot file of an older version has no `_world` until the restore migrates it;
    another process's commit seen in between changes nothing."""
    import sqlite3

    rt = open_runtime(Settings(db=str(tmp_path / "state.db")))
    world = rt.world
    rt.adopt_outside_state(sqlite3.connect(":memory:"))
    assert rt.world == world


def test_a_seed_by_another_process_is_served_at_the_next_request(tmp_path: Path) -> None:
    """`emulator seed` beside a server: the next request sees the new catalog (it used to
    be polled for every quarter second, so a test that seeded and asked at once could
    get the old one)."""
    fixtures = tmp_path / "fixtures"
    shutil.copytree(default_fixtures_dir(), fixtures)
    db = str(tmp_path / "state.db")
    served = open_runtime(Settings(db=db))
    served.serve_beside_others()
    assert served.catalog.view().pricing["platform_fee_percent"] == 5.5
    pricing = fixtures / "pricing.yaml"
    pricing.write_text(
        pricing.read_text().replace("platform_fee_percent: 5.5", "platform_fee_percent: 7")
    )
    merge_fixtures(open_runtime(Settings(db=db, fixtures=fixtures), serving=False))
    served.store.check_outside()  # what each request does first
    assert served.catalog.view().pricing["platform_fee_percent"] == 7


def test_a_write_by_another_process_keeps_the_catalog(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    served = open_runtime(Settings(db=db))
    served.serve_beside_others()
    view = served.catalog.view()
    beside = open_runtime(Settings(db=db), serving=False)
    with beside.store.write() as conn:
        conn.execute("UPDATE accounts SET balance_micros = balance_micros + 1")
    served.store.check_outside()
    assert served.catalog.view() is view


def test_a_provider_marked_down_by_another_server_is_down_here(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    served = open_runtime(Settings(db=db))
    served.serve_beside_others()
    assert served.catalog.view().providers["xai"].status == "up"
    other = open_runtime(Settings(db=db))
    set_provider(other, "xai", ProviderSet(status="down"))
    served.store.check_outside()
    assert served.catalog.view().providers["xai"].status == "down"


def test_a_server_started_beside_a_live_one_leaves_its_requests_alone(tmp_path: Path) -> None:
    """A hold (or an `Idempotency-Key`) still active at start belongs to a dead server
    only if no other server serves the file: a second server started beside a live one
    must not release it, or the live request's retry would be answered and charged."""
    db = str(tmp_path / "state.db")
    served = open_runtime(Settings(db=db))
    holds.hold(served, "acct_demo", None, 600, None)  # a stream in flight
    second = open_runtime(Settings(db=db))
    assert second.lease is not None and not second.lease.alone
    with second.store.read() as conn:
        assert reservations.active_total(conn, "acct_demo") == 600
    served.close()
    second.close()
    third = open_runtime(Settings(db=db))  # alone again: the first server's hold is orphaned
    assert third.lease is not None and third.lease.alone
    with third.store.read() as conn:
        assert reservations.active_total(conn, "acct_demo") == 0


def test_serve_reset_beside_a_live_server_is_that_servers_reset(tmp_path: Path) -> None:
    """`emulator serve --reset` on a file being served wipes it as `emulator reset` does:
    the live server follows (new state, ids from the start), it does not go on with
    numbers of sequences that are gone (a UNIQUE failure, a 500, on its next charge)."""
    db = str(tmp_path / "state.db")
    served = open_runtime(Settings(db=db))
    served.serve_beside_others()
    world = served.world
    served.new_id("le")  # a block of ledger numbers taken
    open_runtime(Settings(db=db, reset=True))
    served.store.check_outside()
    assert served.world > world


def test_a_reset_forgets_the_identities_kept_across_restores(tmp_path: Path) -> None:
    """Ids after a reset are those of a fresh start, whatever restores came before: a
    test that resets, saves and restores makes the same tenants every run."""
    from emulator.store.meta import new_id

    def tenant_after_reset_and_restore(rt: Runtime) -> str:
        rt.reset()
        restore_from(rt, rt.snapshots.save(rt, "clean").conn)
        with rt.store.write() as conn:
            return new_id(conn, rt.ids, "acct")

    fresh = open_runtime(Settings(db=str(tmp_path / "fresh.db")))
    used = open_runtime(Settings(db=str(tmp_path / "used.db")))
    saved = used.snapshots.save(used, "start")
    with used.store.write() as conn:
        for _ in range(3):
            new_id(conn, used.ids, "acct")
    restore_from(used, saved.conn)  # the three tenants' numbers are kept from here
    assert tenant_after_reset_and_restore(used) == tenant_after_reset_and_restore(fresh)


def test_the_clock_does_not_go_back_when_served_in_the_other_mode(tmp_path: Path) -> None:
    db = str(tmp_path / "state.db")
    manual = open_runtime(Settings(db=db, clock="manual"))
    manual.clock.set(parse_iso("2030-06-01T00:00:00Z"))
    manual.close()
    real = open_runtime(Settings(db=db, clock="real"))
    assert real.clock.now() >= parse_iso("2030-06-01T00:00:00Z")
    real.clock.advance(60)
    ahead = real.clock.now()
    real.close()  # saves the time it read at shut-down
    again = open_runtime(Settings(db=db, clock="manual"))
    assert again.clock.now() >= ahead


def _request_ids(rt: Runtime, n: int) -> list[str]:
    return [rt.ids.request_id() for _ in range(n)]


def test_request_ids_never_repeat_after_a_crash_or_beside_another_server(
    tmp_path: Path,
) -> None:
    """Request ids are numbered from the state's sequence, a block at a time: a server
    killed without its stop (which saved the count) does not make the ids it gave again,
    nor do two servers on one file; a clean stop goes on with the next number."""
    db = str(tmp_path / "state.db")
    first = open_runtime(Settings(db=db))
    before = _request_ids(first, 3)
    beside = open_runtime(Settings(db=db))
    both = before + _request_ids(beside, 3) + _request_ids(first, 3)
    assert len(set(both)) == 9
    beside.close()
    first.store.close()  # killed: no stop, no count saved
    assert first.lease is not None
    first.lease.release()  # the kernel drops a dead process's lock
    after_crash = open_runtime(Settings(db=db))
    given = _request_ids(after_crash, 3)
    assert not set(given) & set(both)
    after_crash.close()
    restarted = open_runtime(Settings(db=db))
    nxt = restarted.ids.request_id()
    restarted.close()
    # Consecutive over a clean stop: the id that would have come next without it.
    assert nxt == restarted.ids.make("req", int(_number_of(given[-1], restarted)) + 1)


def _number_of(request_id: str, rt: Runtime) -> int:
    return next(n for n in range(1, 5000) if rt.ids.make("req", n) == request_id)


def test_request_ids_go_on_across_a_restore_and_start_again_at_a_reset() -> None:
    rt = open_runtime(Settings(db=":memory:"))
    rt.reset()
    first = _request_ids(rt, 2)
    saved = rt.snapshots.save(rt, "start")
    given = _request_ids(rt, 3)
    restore_from(rt, saved.conn)  # the journal keeps the requests made since the save
    assert not set(_request_ids(rt, 3)) & set(first + given)
    rt.reset()  # a fresh start: the ids of a fresh start (SPEC 2)
    assert _request_ids(rt, 2) == first


def test_a_state_file_that_counted_requests_in_meta_goes_on_from_its_count(
    tmp_path: Path,
) -> None:
    from emulator.store.meta import set_meta

    db = str(tmp_path / "state.db")
    old = open_runtime(Settings(db=db))
    with old.store.write() as conn:  # as an earlier version left it at its stop
        set_meta(conn, "requests_made", 500)
    old.close()
    rt = open_runtime(Settings(db=db))
    assert rt.ids.request_id() == rt.ids.make("req", 501)
    rt.close()
