"""Swagger UI's own files, served from the installed `swagger-ui-py` package, so that
the /schema page works offline (litestar's page loads them from a CDN)."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

from litestar import Response, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath

ASSETS = "/schema/assets"
_TYPES = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui-standalone-preset.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}


@get("/assets/{name:str}", sync_to_thread=False, include_in_schema=False)
def swagger_asset(name: FromPath[str]) -> Response[bytes]:
    if name not in _TYPES:
        raise NotFoundException()
    # The files change only with the package: a browser keeps them a day.
    return Response(
        _read(name), media_type=_TYPES[name], headers={"Cache-Control": "public, max-age=86400"}
    )


@cache
def _read(name: str) -> bytes:
    return (_static_folder() / name).read_bytes()


def _static_folder() -> Path:
    # Found, not imported: the package's __init__ imports a templating engine we never use.
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise NotFoundException("Swagger UI's files are not installed (pip install swagger-ui-py).")
    return Path(next(iter(spec.submodule_search_locations))) / "static"
