"""One frozen Settings object, built by the CLI (options or EMULATOR_* variables)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

DEFAULT_DB = ".emulator/state.db"
MEMORY_DB = ":memory:"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8787
    db: str = DEFAULT_DB
    fixtures: Path | None = None  # None: the bundled default fixtures
    reset: bool = False
    seed: int | None = 0  # None (state commands only): the seed the state was served with
    clock: Literal["real", "manual"] = "real"
    job_speed: float | None = 1.0  # None means "instant": jobs finish at creation
    stream_delay_ms: int = 20
    admin_token: str | None = None
    control_origins: tuple[str, ...] = ()  # web pages allowed to call /_emulator/*
    allow_faults: bool = True  # the X-Emulator-Fault header is obeyed
    journal_size: int = 1000  # requests kept by /_emulator/requests
    restore: Path | None = None  # a snapshot file to start from
    snapshot_on_exit: Path | None = None
    log_level: str = "info"

    @property
    def in_memory(self) -> bool:
        return self.db == MEMORY_DB

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/api/v1"

    @property
    def origin(self) -> str:
        """Where a client reaches this server when no request says it (a wildcard address
        stands for the machine itself: its loopback); links in answers follow the
        request's `Host`."""
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def with_(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


def default_fixtures_dir() -> Path:
    """The bundled fixtures: inside the wheel, or at the top of a source checkout."""
    here = Path(__file__).resolve().parent
    packaged = here / "_fixtures"
    return packaged if packaged.is_dir() else here.parent / "fixtures"


def why_unsendable(credential: str) -> str | None:
    """Why a client could not send `credential` in a header, or None if it can: a blank
    one, or one edged with spaces (stripped from every header), would never match."""
    if not credential.strip():
        return "is blank"
    if credential != credential.strip() or not all(" " <= c <= "~" for c in credential):
        return "must be printable ASCII with no spaces at its ends (it is sent in a header)"
    return None
