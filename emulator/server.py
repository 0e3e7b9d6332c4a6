"""Run the app under uvicorn: in the foreground (`emulator serve`) or in a thread (tests)."""

from __future__ import annotations

import gc
import importlib.util
import socket
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import uvicorn

from emulator.app import create_app
from emulator.bodies import build_all_models
from emulator.protocol import EmulatorHttpProtocol
from emulator.runtime import Runtime, open_runtime
from emulator.settings import Settings


def uvicorn_config(app: Any, settings: Settings) -> uvicorn.Config:
    # Each where it exists: uvloop has no Windows build, httptools has, and the
    # protocol (batched writes, malformed requests in the envelope) needs only httptools.
    has_uvloop = importlib.util.find_spec("uvloop") is not None
    has_httptools = importlib.util.find_spec("httptools") is not None
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        loop="uvloop" if has_uvloop else "asyncio",
        http=EmulatorHttpProtocol if has_httptools else "h11",
        ws="none",
        lifespan="on",
        log_level=settings.log_level,
        access_log=settings.log_level == "debug",
        server_header=False,
        # A stop (Ctrl-C, SIGTERM) waits this long for streams still open, then ends
        # them: a slow stream must not hold the process (and `--snapshot-on-exit`) up.
        timeout_graceful_shutdown=2,
    )


class ListenError(Exception):
    """The server cannot take its address (a port in use): nothing else was done."""


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound before the state is opened: `serve --reset` on a port
    in use must not wipe the state of the server already there."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except OSError as exc:
        raise ListenError(f"cannot listen on {host}:{port}: {exc}") from exc
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return sock


def run(settings: Settings, banner: Callable[[Runtime], None]) -> None:
    sock = listening_socket(settings.host, settings.port)
    # `--port 0` takes a free port: the banner and the tenants' base URLs name that one
    settings = settings.with_(port=sock.getsockname()[1])
    rt = open_runtime(settings)
    app = create_app(settings, rt)
    banner(rt)
    gc.freeze()  # what start-up made lives as long as the process: never scan it again
    gc.enable()
    _StoppingServer(uvicorn_config(app, settings), rt).run(sockets=[sock])


class _StoppingServer(uvicorn.Server):
    """At Ctrl-C or SIGTERM, open streams end with an error event at their next chunk
    (billed for what was sent) instead of holding the stop up until they are cut off."""

    def __init__(self, config: uvicorn.Config, rt: Runtime) -> None:
        super().__init__(config)
        self.rt = rt

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.rt.stopping = True
        super().handle_exit(sig, frame)


class BackgroundServer:
    """A live emulator on a free port of 127.0.0.1, in a daemon thread."""

    def __init__(self, settings: Settings) -> None:
        self.sock = listening_socket(settings.host, 0)
        self.settings = settings.with_(port=self.sock.getsockname()[1])
        build_all_models()  # no lazy build racing between the test and server threads
        self.runtime = open_runtime(self.settings)
        self.app = create_app(self.settings, self.runtime)
        self.server = uvicorn.Server(uvicorn_config(self.app, self.settings))
        self.thread = threading.Thread(target=self._serve, name="emulator", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.settings.port}"

    def _serve(self) -> None:
        self.server.run(sockets=[self.sock])

    def start(self, timeout: float = 10.0) -> BackgroundServer:
        self.thread.start()
        waited = threading.Event()
        for _ in range(int(timeout / 0.01)):
            if self.server.started or not self.thread.is_alive():
                break
            waited.wait(0.01)
        if not self.server.started:
            raise RuntimeError("the emulator did not start")
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
