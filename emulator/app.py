"""create_app(settings) -> Litestar: routers, guard, error handler, headers, OpenAPI."""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Router
from litestar.config.cors import CORSConfig
from litestar.datastructures import MutableScopeHeaders
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.plugins.pydantic import PydanticPlugin
from litestar.types import Message, Scope

from emulator import __version__
from emulator.control.routes import ControlController
from emulator.error_handlers import handle_emulator_error, handle_http_exception
from emulator.errors import EmulatorError
from emulator.gateway.routes import CatalogController
from emulator.keys.routes import KeysController
from emulator.openapi import openapi_config
from emulator.pending import pending_handlers
from emulator.runtime import Runtime, open_runtime
from emulator.settings import Settings
from emulator.web import guard, provide_caller, provide_runtime

API_PREFIX = "/api/v1"
EXPOSED_HEADERS = ["X-Request-Id", "X-Emulator-Version", "Retry-After"]


def create_app(settings: Settings | None = None, runtime: Runtime | None = None) -> Litestar:
    settings = settings or Settings()
    rt = runtime or open_runtime(settings)
    api = Router(
        path=API_PREFIX, route_handlers=[CatalogController, KeysController, *pending_handlers()]
    )
    app = Litestar(
        route_handlers=[api, ControlController],
        guards=[guard],
        dependencies={
            "rt": Provide(provide_runtime, sync_to_thread=False),
            "caller": Provide(provide_caller, sync_to_thread=False),
        },
        exception_handlers={
            EmulatorError: handle_emulator_error,
            HTTPException: handle_http_exception,
            Exception: handle_http_exception,
        },
        before_send=[_wire_headers(rt)],
        on_shutdown=[lambda: rt.store.close()],
        cors_config=CORSConfig(allow_origins=["*"], expose_headers=EXPOSED_HEADERS),
        openapi_config=openapi_config(),
        # Strict: JSON types as sent ("100" is not an integer, 1 is not a boolean).
        plugins=[PydanticPlugin(validate_strict=True)],
        logging_config=None,
        debug=False,
    )
    app.state.runtime = rt
    return app


def _wire_headers(rt: Runtime) -> Any:
    """Every answer, errors and 404s included, carries a request id and our version."""
    version = __version__.encode()

    async def add_headers(message: Message, scope: Scope) -> None:
        if message["type"] != "http.response.start":
            return
        state = scope.setdefault("state", {})
        request_id = state.get("request_id")
        if request_id is None:
            request_id = state["request_id"] = rt.ids.request_id()
        headers = MutableScopeHeaders.from_message(message)
        headers.add("X-Request-Id", request_id)
        headers.add("X-Emulator-Version", version.decode())

    return add_headers
