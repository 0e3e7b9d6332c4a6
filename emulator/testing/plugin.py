"""The pytest plugin (entry point `pytest11`): a live emulator and isolated tenants.

Fixtures:
- `emulator` (session): a running emulator with in-memory state and a manual
  clock, on a free port; or the one named by `--emulator-url`.
- `emulator_tenant`: a fresh account for each test, with an all-scopes API
  key and a user token, so tests never see each other's data.

The plugin imports the server only when a test asks for it, so it costs
nothing in suites that do not use it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from emulator.testing.handles import EmulatorHandle, Tenant


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("emulator", "Gateway & Studio emulator")
    group.addoption(
        "--emulator-url",
        default=os.environ.get("EMULATOR_URL"),
        help="Use the emulator already running at this URL (e.g. http://127.0.0.1:8787) "
        "instead of starting one. Also EMULATOR_URL.",
    )
    group.addoption(
        "--emulator-admin-token",
        default=os.environ.get("EMULATOR_ADMIN_TOKEN"),
        help="Admin token of that emulator's control plane, if it has one.",
    )
    group.addoption(
        "--emulator-seed",
        type=int,
        default=0,
        help="Seed of the emulator the plugin starts (default 0).",
    )


@pytest.fixture(scope="session")
def emulator(request: pytest.FixtureRequest) -> Iterator[EmulatorHandle]:
    """A running emulator for the whole session."""
    url = request.config.getoption("--emulator-url")
    if url:
        handle = EmulatorHandle(url, request.config.getoption("--emulator-admin-token"))
        try:
            _reached(handle)
            yield handle
        finally:
            handle.close()
        return
    from emulator.server import BackgroundServer
    from emulator.settings import Settings

    settings = Settings(
        db=":memory:",
        clock="manual",
        stream_delay_ms=0,
        seed=request.config.getoption("--emulator-seed"),
        log_level="warning",
    )
    server = BackgroundServer(settings).start()
    handle = EmulatorHandle(server.url)
    try:
        yield handle
    finally:
        handle.close()
        server.stop()


def _reached(handle: EmulatorHandle) -> None:
    """The emulator named by `--emulator-url` answers its control plane, or the test
    fails saying which option to fix."""
    import httpx

    from emulator.testing.handles import ControlError

    where = f"The emulator at {handle.url!r} (--emulator-url or EMULATOR_URL)"
    try:
        handle.health()
    except (httpx.TransportError, httpx.UnsupportedProtocol) as exc:
        pytest.fail(
            f"{where} cannot be reached ({exc}). Start it (`emulator serve`), fix the URL "
            "(with its scheme: http://127.0.0.1:8787), or leave the option out to have "
            "the plugin start one.",
            pytrace=False,
        )
    except ControlError as exc:
        token = exc.response.status_code == 401
        hint = (
            " Give its admin token: --emulator-admin-token or EMULATOR_ADMIN_TOKEN."
            if token
            else ""
        )
        pytest.fail(f"{where} refused its control plane: {exc}.{hint}", pytrace=False)


@pytest.fixture
def emulator_tenant(emulator: EmulatorHandle) -> Tenant:
    """A fresh isolated account ($25, 1000 studio credits, every scope) for this test."""
    return emulator.create_tenant()
