"""GET /_emulator/dashboard: the page a person clicks through in a demo.

The page carries no data: it reads the control plane and the API from the browser,
sending the admin token (when the emulator has one) and an API key it is given. So
it is served without a credential, as the OpenAPI docs page is.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from litestar import Controller, MediaType, Response, get
from litestar.openapi.datastructures import ResponseSpec

from emulator.web import auth_opt

# Never inside another site's frame: its buttons change the emulator (and under an admin
# token the page holds it), so a framing page could click them for a visitor.
_PAGE_HEADERS = {
    "cache-control": "no-cache",
    "x-frame-options": "DENY",
    "content-security-policy": "frame-ancestors 'none'; default-src 'self'; "
    "script-src 'unsafe-inline'; style-src 'unsafe-inline'; media-src 'self'",
}


@cache
def page() -> bytes:
    return files(__package__).joinpath("page.html").read_bytes()


class DashboardController(Controller):
    path = "/_emulator/dashboard"
    tags = ["Control plane"]
    opt = auth_opt("optional")

    @get(
        "/",
        summary="The demo dashboard: accounts, chat, videos, providers, faults, requests",
        media_type=MediaType.HTML,
        responses={
            200: ResponseSpec(
                data_container=str,
                media_type=MediaType.HTML,
                description="The page",
                generate_examples=False,
            )
        },
    )
    async def dashboard(self) -> Response[bytes]:
        return Response(page(), media_type=MediaType.HTML, headers=_PAGE_HEADERS)
