"""create_app(settings) -> Litestar: routers, guard, error handler, headers, OpenAPI."""

from __future__ import annotations

from litestar import Litestar, Router
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.plugins.pydantic import PydanticPlugin

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
from emulator.wire import with_wire_headers

API_PREFIX = "/api/v1"


def create_app(settings: Settings | None = None, runtime: Runtime | None = None) -> Litestar:
    settings = settings or Settings()
    rt = runtime or open_runtime(settings)
    # The guard authenticates by each route's `opt["auth"]`; the catalog routes take
    # no credential, so they skip it (a guard costs a handler copy per request).
    public = Router(path=API_PREFIX, route_handlers=[CatalogController])
    api = Router(
        path=API_PREFIX, guards=[guard], route_handlers=[KeysController, *pending_handlers()]
    )
    control = Router(path="/", guards=[guard], route_handlers=[ControlController])
    app = Litestar(
        route_handlers=[public, api, control],
        dependencies={
            "rt": Provide(provide_runtime, sync_to_thread=False),
            "caller": Provide(provide_caller, sync_to_thread=False),
        },
        exception_handlers={
            EmulatorError: handle_emulator_error,
            HTTPException: handle_http_exception,
            Exception: handle_http_exception,
        },
        on_shutdown=[lambda: rt.store.close()],
        openapi_config=openapi_config(),
        # Strict: JSON types as sent ("100" is not an integer, 1 is not a boolean).
        plugins=[PydanticPlugin(validate_strict=True)],
        logging_config=None,
        debug=False,
    )
    app.state.runtime = rt
    app.asgi_handler = with_wire_headers(app.asgi_handler, rt.ids.request_id)
    return app
