"""create_app(settings) -> Litestar: routes, auth hook, error handler, headers, OpenAPI."""

from __future__ import annotations

import sqlite3

from litestar import Litestar
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.plugins.pydantic import PydanticPlugin
from litestar.types import ASGIApp, Receive, Scope, Send

from emulator.billing.routes import (
    BalanceController,
    OpenRouterAccountController,
    QuoteController,
    ReservationsController,
    UsageController,
)
from emulator.control.routes import ControlController
from emulator.control_origins import is_loopback_host
from emulator.dashboard.routes import DashboardController
from emulator.direct import with_direct_routes
from emulator.error_handlers import handle_emulator_error, handle_http_exception
from emulator.errors import EmulatorError
from emulator.faults.routes import FaultsController
from emulator.gateway.chat_routes import CHAT_COMPLETIONS, ChatController
from emulator.gateway.messages_routes import MESSAGES, MessagesController
from emulator.gateway.responses_routes import RESPONSES, ResponsesController
from emulator.gateway.routes import LIST_MODELS, CatalogController
from emulator.gateway.stored_routes import StoredResponsesController, compact
from emulator.jobs.routes import JobsControlController
from emulator.journal.capture import with_journal
from emulator.journal.routes import JournalController
from emulator.keys.routes import KeysController
from emulator.media.routes import MediaController
from emulator.openapi import openapi_config
from emulator.pending import pending_handlers
from emulator.query_checks import mark_query_parameters
from emulator.runtime import Runtime, open_runtime
from emulator.settings import Settings
from emulator.snapshots.routes import SnapshotsController
from emulator.snapshots.service import restore_file, save_file
from emulator.video.routes import GET_GENERATION, VideoController
from emulator.vidprov.routes import VidprovController
from emulator.web import authenticate_request, provide_caller, provide_runtime
from emulator.wire import refuse_unavailable_state, route_methods, with_wire_headers

# The routes clients call in tight loops, served in front of litestar (`emulator.direct`).
DIRECT_ROUTES = (LIST_MODELS, CHAT_COMPLETIONS, RESPONSES, MESSAGES, GET_GENERATION)


def create_app(settings: Settings | None = None, runtime: Runtime | None = None) -> Litestar:
    settings = settings or Settings()
    rt = runtime or open_runtime(settings)
    app = Litestar(
        # Handlers are registered directly, not through Routers: litestar deep-copies a
        # registered Router with all its handlers, which slows start-up.
        route_handlers=[
            CatalogController,
            DashboardController,
            ChatController,
            ResponsesController,
            MessagesController,
            StoredResponsesController,
            compact,
            BalanceController,
            OpenRouterAccountController,
            QuoteController,
            UsageController,
            ReservationsController,
            KeysController,
            ControlController,
            FaultsController,
            JournalController,
            SnapshotsController,
            VideoController,
            VidprovController,
            JobsControlController,
            MediaController,
            *pending_handlers(),
        ],
        dependencies={
            "rt": Provide(provide_runtime, sync_to_thread=False),
            "caller": Provide(provide_caller, sync_to_thread=False),
        },
        before_request=authenticate_request,
        exception_handlers={
            EmulatorError: handle_emulator_error,
            HTTPException: handle_http_exception,
            Exception: handle_http_exception,
        },
        on_shutdown=[lambda: shut_down(rt)],
        openapi_config=openapi_config(),
        # Strict: JSON types as sent ("100" is not an integer, 1 is not a boolean).
        plugins=[PydanticPlugin(validate_strict=True)],
        logging_config=None,
        debug=False,
    )
    app.state.runtime = rt
    mark_query_parameters(app)
    if settings.restore is not None:
        restore_file(rt, settings.restore)
    routes = [(r.path, {str(getattr(m, "value", m)) for m in r.methods}) for r in app.routes]
    journaled = with_journal(app.asgi_handler, rt.journal, rt.clock)
    app.asgi_handler = with_wire_headers(
        with_direct_routes(journaled, rt, DIRECT_ROUTES),
        rt.ids.request_id,
        route_methods(routes),
        None if settings.admin_token else frozenset(settings.control_origins),
        check_hosts=is_loopback_host(settings.host),
    )
    if not settings.in_memory:
        app.asgi_handler = with_outside_changes(app.asgi_handler, rt)
    return app


def with_outside_changes(inner: ASGIApp, rt: Runtime) -> ASGIApp:
    """Before each request on a file: learn what another process did to it since the
    last one (`emulator reset` beside the server: `Runtime.adopt_outside_state`)."""

    async def handler(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            rt.store.check_outside()  # a query only when the file's data_version moved
        except sqlite3.DatabaseError as exc:
            if scope["type"] == "http":  # type: ignore[comparison-overlap]
                await refuse_unavailable_state(exc, scope, receive, send)
                return
            raise
        await inner(scope, receive, send)

    return handler


def shut_down(rt: Runtime) -> None:
    try:
        if rt.settings.snapshot_on_exit is not None:
            rt.save_clock()  # the snapshot holds the clock as it stops, not as it started
            save_file(rt, rt.settings.snapshot_on_exit)
    finally:
        rt.close()
