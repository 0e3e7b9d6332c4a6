"""The running emulator's world: settings, store, clock, ids and caches.

Start-up and reset take the same path: migrate, seed (when empty), done.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from emulator.billing.limits import RateLimiter
from emulator.clock import Clock, ClockMode, parse_iso
from emulator.faults.rules import FaultBook
from emulator.gateway.catalog import Catalog
from emulator.ids import Ids
from emulator.journal.book import Journal
from emulator.settings import Settings, default_fixtures_dir
from emulator.snapshots.service import Snapshots
from emulator.store import Store
from emulator.store.keys import KeyCache
from emulator.store.lease import ServeLease, served
from emulator.store.meta import (
    REQUEST_SEQUENCE,
    GivenIdentities,
    SequenceBlock,
    adopt_request_count,
    count_catalog_change,
    get_meta,
    get_platform,
    get_world,
    give_back,
    next_world,
    set_meta,
    set_platform,
)
from emulator.store.migrations import data_tables, migrate
from emulator.store.orphans import end_orphaned_requests

if TYPE_CHECKING:  # fixtures and seeding load only when a database is (re)built
    from emulator.store.fixture_models import Fixtures

# The fixtures folder the last server on a state file served (its commands load it).
SERVED_FIXTURES = "fixtures"
SEEDED_FROM = "seeded_from"  # the folder the state's world was built from


@dataclass
class Runtime:
    settings: Settings
    store: Store
    clock: Clock
    ids: Ids
    catalog: Catalog
    fixtures_dir: Path
    limiter: RateLimiter = field(default_factory=RateLimiter)
    # Which state requests run in: a reset or a restore replaces it, and a request
    # still running then (a stream) must not write its charge into the new one.
    world: int = 0
    identities: GivenIdentities = field(default_factory=GivenIdentities)
    lease: ServeLease | None = None  # this server's share of the state file
    seeded_from: str | None = None  # the fixtures folder its world was built from, if known
    stopping: bool = False  # the server was asked to stop: open streams end now
    keys: KeyCache = field(init=False)
    faults: FaultBook = field(init=False)
    journal: Journal = field(init=False)
    snapshots: Snapshots = field(init=False)

    def __post_init__(self) -> None:
        self.keys = self.new_key_cache()
        self.faults = FaultBook(self.ids)
        self.journal = Journal(self.settings.journal_size)
        self.snapshots = Snapshots()

    def after_restore(self, conn: sqlite3.Connection, saved_clock: dict[str, Any]) -> None:
        """The database was replaced (under the store's lock): drop what the process kept
        of the old one, and count a new state, above the one the restored file was in."""
        self.world = next_world(conn, self.world)
        self._forget_kept(fresh_start=False)
        started = get_platform(conn, "world")  # the restored state's start: a floor
        if started is not None:
            self.clock.reset(parse_iso(started["clock_start"]))
        restore_clock(self.clock, saved_clock)
        set_meta(conn, "seed", self.ids.seed)  # this server's, whatever the file's was
        self.catalog.invalidate()

    def serve_beside_others(self) -> None:
        """Follow what another process (`emulator reset`) does to this file: see
        `adopt_outside_state`. An in-memory database has no other writer."""
        if not self.settings.in_memory:
            self.store.watch_outside(self.adopt_outside_state)

    def adopt_outside_state(self, conn: sqlite3.Connection) -> None:
        """Another process committed to the file (under the store's lock). If it reset the
        state, forget this one's as `reset` does: a request still running (a stream)
        writes nothing into the new state, ids start again from the new sequences
        (numbers kept in blocks would collide), the clock is the one the reset saved,
        fault rules and the journal are cleared."""
        try:
            world = get_world(conn)
        except sqlite3.OperationalError:  # a snapshot of an older version, mid-restore
            return  # the restore numbers the state itself
        self.catalog.follow(conn)  # `emulator seed`
        if world == self.world:
            return  # a top-up, a key created: nothing this process keeps depends on it
        self.world = world
        self._forget_kept(fresh_start=True)
        saved = get_meta(conn, "clock") or {}
        started = get_platform(conn, "world")
        self.clock.reset(parse_iso(started["clock_start"]) if started else None)
        restore_clock(self.clock, saved)
        self.catalog.invalidate()

    def _forget_kept(self, *, fresh_start: bool) -> None:
        """Drop what this process keeps of a state being replaced: cached keys, id numbers
        reserved in blocks, rate windows; for a fresh start (a reset, here or by another
        process) also the request ids, fault rules and journal, which a restore keeps."""
        self.keys = self.new_key_cache()
        self.drop_id_blocks()
        self.limiter.reset()
        if fresh_start:
            self.ids.reset()
            self.identities = GivenIdentities()  # a fresh start gives the first ids again
            self.faults.reset()
            self.journal.clear()

    # Numbers of the ids the hot path makes (generations, reservations, ledger
    # entries), reserved a block at a time: one write per block, not per id.
    _blocks: dict[str, SequenceBlock] = field(default_factory=dict)

    def unused_ids(self) -> list[tuple[str, int, int]]:
        """The numbers reserved in blocks and not used yet (under the store's lock): a
        state saved or left gives them back (`give_back`), so its ids go on as if it had
        never been saved or the server stopped."""
        return [u for block in self._blocks.values() if (u := block.unused()) is not None]

    def drop_id_blocks(self) -> None:
        """Forget the numbers reserved and not used (under the store's lock): the next id
        of each kind starts a new block from the database's sequence."""
        for block in self._blocks.values():
            block.reset()

    def new_key_cache(self) -> KeyCache:
        # No other process can write to an in-memory database.
        return KeyCache(other_writers=not self.settings.in_memory)

    def new_id(self, prefix: str) -> str:
        return self.ids.make(prefix, self._block(prefix).next())

    def request_number(self) -> int:
        # Every request takes one, reads too: a write per 256 of them.
        return self._block(REQUEST_SEQUENCE, 256).next()

    def _block(self, prefix: str, size: int = 64) -> SequenceBlock:
        block = self._blocks.get(prefix)
        if block is None:
            block = self._blocks.setdefault(prefix, SequenceBlock(self.store, prefix, size))
        return block

    def generation_id(self) -> str:
        return self.new_id("gen")

    def fixtures(self) -> Fixtures:
        from emulator.store.fixtures import load_fixtures

        return load_fixtures(self.fixtures_dir)

    def close(self) -> None:
        """At shut-down: the clock saved as it reads now (never behind what was dated
        by it), the file closed and left to the other servers."""
        if not self.settings.in_memory:
            with self.store.write() as conn:
                save_clock(conn, self.clock)
                give_back(conn, self.unused_ids())
        self.store.close()
        if self.lease is not None:
            self.lease.release()

    def save_clock(self) -> None:
        with self.store.write() as conn:
            save_clock(conn, self.clock)

    def reset(self) -> None:
        """Back to the fixtures' state: wipe, migrate, seed; the clock to its start."""
        fx = self.fixtures()
        with self.store.write() as conn:
            served = get_meta(conn, SERVED_FIXTURES)  # the server's, whoever resets
            wipe(conn)
            self.world = next_world(conn, self.world)
            self.clock.reset(fx.world.clock_start_ts)
            self._forget_kept(fresh_start=True)
            build(conn, fx, self.ids, self.clock)
            set_meta(conn, SEEDED_FROM, str(self.fixtures_dir))
            if served is not None:
                set_meta(conn, SERVED_FIXTURES, served)
        self.catalog.invalidate()


def open_runtime(settings: Settings, *, serving: bool = True) -> Runtime:
    """The state of `settings.db`, migrated, seeded when empty. `serving=False` is a
    command run beside a server that may be using the same file (`emulator topup`,
    `emulator keys`): it keeps the clock mode the state was served with, so what it
    writes is dated by the server's virtual clock, and leaves the holds alone, since
    they may belong to requests in flight."""
    store = Store(settings.db)
    lease = ServeLease(settings.db) if serving and not settings.in_memory else None
    with store.write() as conn:
        migrate(conn)
        ids = Ids(_state_seed(conn, settings, serving))
        fixtures_dir = _state_fixtures(conn, settings, serving)
        if settings.reset:  # as `emulator reset`: a server on the file follows
            wipe(conn)
            next_world(conn)
        world = get_platform(conn, "world")
        if world is None:  # an empty database: seed it from the fixtures
            from emulator.store.fixtures import load_fixtures

            fx = load_fixtures(fixtures_dir)
            clock = Clock(settings.clock, fx.world.clock_start_ts)
            build(conn, fx, ids, clock)
            set_meta(conn, SEEDED_FROM, str(fixtures_dir))
        else:
            saved = get_meta(conn, "clock") or {}
            mode = settings.clock if serving else _saved_mode(saved, settings.clock)
            clock = Clock(mode, parse_iso(world["clock_start"]))
            restore_clock(clock, saved)
            if serving:
                if lease is None or lease.alone:
                    # No other server serves the state: a hold still active now belongs
                    # to a request that died with the previous one (a crash, a kill).
                    # Nothing was charged.
                    end_orphaned_requests(
                        conn, "released at start: the server stopped mid-request", clock.now_iso()
                    )
                save_clock(conn, clock)  # with its mode, for the commands run beside it
                adopt_request_count(conn)
            if get_platform(conn, "video") is None:  # a state file from before video jobs
                from emulator.store.fixtures import load_fixtures

                video = load_fixtures(fixtures_dir).video
                set_platform(conn, "video", video.model_dump(mode="json"))
        if serving:
            set_meta(conn, SERVED_FIXTURES, str(fixtures_dir))
        seeded_from = get_meta(conn, SEEDED_FROM)
        if settings.fixtures is not None and seeded_from != str(fixtures_dir):
            from emulator.store.fixtures import load_fixtures

            load_fixtures(fixtures_dir)  # not loaded now, but a mistake is told now
        world_number = get_world(conn)
    rt = Runtime(
        settings=settings.with_(seed=ids.seed),
        store=store,
        clock=clock,
        ids=ids,
        catalog=Catalog(store),
        fixtures_dir=fixtures_dir,
        world=world_number,
        lease=lease,
        seeded_from=seeded_from,
    )
    ids.number_requests(rt.request_number)
    if lease is not None:
        lease.share()
    if serving:
        rt.serve_beside_others()
    return rt


class SeedInUse(Exception):
    """A state command given a `--seed` other than the one a live server serves."""


def _state_seed(conn: sqlite3.Connection, settings: Settings, serving: bool) -> int:
    """A server's `--seed` is the state's, kept for the commands run beside it: theirs,
    unless they are given one, so a key they create is the one the server would make.
    Beside a live server, another seed is refused: the server keeps its own, so the file
    would name a seed nobody serves."""
    saved = get_meta(conn, "seed")
    seed = settings.seed if settings.seed is not None else saved if saved is not None else 0
    if not serving and saved is not None and seed != saved and served(settings.db):
        raise SeedInUse(
            f"a server is serving {settings.db} with --seed {saved}: run this command "
            f"with --seed {saved} (or none), or stop the server first"
        )
    if serving or saved is None:
        set_meta(conn, "seed", seed)
    return int(seed)


def _state_fixtures(conn: sqlite3.Connection, settings: Settings, serving: bool) -> Path:
    """A server's `--fixtures` is the state's, kept for the commands run beside it, as
    its seed is: `emulator reset` without `--fixtures` loads the folder the server
    serves (while it still exists), as `POST /_emulator/reset` would."""
    if settings.fixtures is not None:
        return settings.fixtures.expanduser().resolve()
    saved = None if serving else get_meta(conn, SERVED_FIXTURES)
    kept = Path(saved) if isinstance(saved, str) else None
    return kept if kept is not None and kept.is_dir() else default_fixtures_dir()


def wipe(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA defer_foreign_keys = ON")
    for table in data_tables(conn):
        conn.execute(f'DELETE FROM "{table}"')


def build(conn: sqlite3.Connection, fx: Fixtures, ids: Ids, clock: Clock) -> None:
    from emulator.store.seed import seed

    migrate(conn)
    seed(conn, fx, ids, clock.now_iso())
    set_meta(conn, "seed", ids.seed)
    save_clock(conn, clock)


def save_clock(conn: sqlite3.Connection, clock: Clock) -> None:
    """The clock survives a restart of a file database (it never moves backwards)."""
    manual_now, offset = clock.state()
    set_meta(
        conn,
        "clock",
        {"manual_now": manual_now, "offset": offset, "mode": clock.mode, "now": clock.now()},
    )


def restore_clock(clock: Clock, saved: dict[str, Any]) -> None:
    """Put back the clock `save_clock` saved, in `clock`'s mode (which may not be the
    one it was saved in)."""
    clock.restore(saved.get("manual_now"), saved.get("offset", 0.0), saved.get("now"))


def _saved_mode(saved: dict[str, Any], default: ClockMode) -> ClockMode:
    mode = saved.get("mode")
    return mode if mode in ("real", "manual") else default


def merge_fixtures(rt: Runtime) -> None:
    """`emulator seed`: load the fixtures over the current state without wiping it."""
    from emulator.store.seed import seed

    fx = rt.fixtures()
    with rt.store.write() as conn:
        migrate(conn)
        seed(conn, fx, rt.ids, rt.clock.now_iso())
        set_meta(conn, SEEDED_FROM, str(rt.fixtures_dir))
        count_catalog_change(conn)
    rt.catalog.invalidate()
