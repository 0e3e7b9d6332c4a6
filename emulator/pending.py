"""Routes of the interface (sections 4.1-4.5) that later issues build.

Each already exists with its real auth and scope, so clients and tests see
the right 401/403 today; past auth it answers 501 `not_implemented` in
the error envelope. A route leaves this table when its feature lands.
"""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.enums import HttpMethod
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec

from emulator.errors import NotImplementedYet
from emulator.web import API_PREFIX, BEARER, ErrorEnvelope, auth_opt

VIDEO = ("video",)
STUDIO = ("studio.media", "video")

# (method, path under /api/v1, scopes any of which is accepted, OpenAPI tag)
PENDING: list[tuple[str, str, tuple[str, ...], str]] = [
    ("GET", "/studio/workflows", STUDIO, "Studio"),
    ("GET", "/studio/recipes", STUDIO, "Studio"),
    ("POST", "/studio/sessions", STUDIO, "Studio"),
    ("GET", "/studio/sessions", STUDIO, "Studio"),
    ("GET", "/studio/sessions/{id:str}", STUDIO, "Studio"),
    ("POST", "/studio/sessions/{id:str}/approve", STUDIO, "Studio"),
    ("GET", "/studio/sessions/{id:str}/events", STUDIO, "Studio"),
    ("POST", "/studio/sessions/{id:str}/messages", STUDIO, "Studio"),
    ("GET", "/studio/sessions/{id:str}/assets", STUDIO, "Studio"),
    ("POST", "/studio/mcp", STUDIO, "Studio"),
    ("GET", "/studio/assets", STUDIO, "Studio"),
    ("POST", "/studio/assets", STUDIO, "Studio"),
    ("GET", "/studio/assets/{id:str}", STUDIO, "Studio"),
    ("POST", "/repurpose", VIDEO, "Repurpose"),
    ("GET", "/repurpose", VIDEO, "Repurpose"),
    ("GET", "/repurpose/{task_id:str}", VIDEO, "Repurpose"),
    ("POST", "/repurpose/{task_id:str}/retry", VIDEO, "Repurpose"),
    ("DELETE", "/repurpose/{task_id:str}", VIDEO, "Repurpose"),
    ("PUT", "/repurpose/{task_id:str}/clip/{clip_id:str}", VIDEO, "Repurpose"),
    ("POST", "/repurpose/{task_id:str}/clip/{clip_id:str}/render-captions", VIDEO, "Repurpose"),
    ("POST", "/images/generate", VIDEO, "Images"),
    ("POST", "/vidprov/images/generations", VIDEO, "Images"),
    ("POST", "/vidprov/general/ai-multi-shot", VIDEO, "Images"),
    ("POST", "/vidprov/images/vidprov-virtual-try-on", VIDEO, "Images"),
    ("POST", "/images/edit", VIDEO, "Images"),
    ("POST", "/images/enhance", VIDEO, "Images"),
    ("POST", "/images/faceswap", VIDEO, "Images"),
    ("POST", "/images/3d-angles", VIDEO, "Images"),
    ("POST", "/images/character-gen", VIDEO, "Images"),
    ("POST", "/vidprov/image-recognize", VIDEO, "Studio tools"),
    ("POST", "/vidprov/audio/text-to-audio", VIDEO, "Studio tools"),
    ("POST", "/vidprov/audio/video-to-audio", VIDEO, "Studio tools"),
    ("POST", "/vidprov/lipsync/identify-face", VIDEO, "Studio tools"),
    ("POST", "/vidprov/voices", VIDEO, "Studio tools"),
    ("GET", "/vidprov/voices", VIDEO, "Studio tools"),
    ("GET", "/vidprov/voices/presets", VIDEO, "Studio tools"),
    ("GET", "/vidprov/voices/{id:str}", VIDEO, "Studio tools"),
    ("POST", "/vidprov/voices/delete", VIDEO, "Studio tools"),
    ("POST", "/vidprov/elements", VIDEO, "Studio tools"),
    ("GET", "/vidprov/elements", VIDEO, "Studio tools"),
    ("GET", "/vidprov/elements/{id:str}", VIDEO, "Studio tools"),
    ("POST", "/vidprov/multi-elements/init-selection", VIDEO, "Studio tools"),
    ("POST", "/vidprov/multi-elements/add-selection", VIDEO, "Studio tools"),
    ("POST", "/vidprov/multi-elements/delete-selection", VIDEO, "Studio tools"),
    ("POST", "/vidprov/multi-elements/clear-selection", VIDEO, "Studio tools"),
    ("POST", "/vidprov/multi-elements/preview-selection", VIDEO, "Studio tools"),
    ("GET", "/vidprov/multi-elements", VIDEO, "Studio tools"),
    ("GET", "/vidprov/multi-elements/{id:str}", VIDEO, "Studio tools"),
    ("POST", "/repurpose/tts", VIDEO, "Studio tools"),
    ("POST", "/repurpose/enhance-audio", VIDEO, "Studio tools"),
    ("POST", "/repurpose/lipsync", VIDEO, "Studio tools"),
    ("POST", "/repurpose/recast", VIDEO, "Studio tools"),
    ("POST", "/video/transitions", VIDEO, "Studio tools"),
    ("POST", "/video/edit", VIDEO, "Studio tools"),
    ("POST", "/ads/generate", VIDEO, "Studio tools"),
    ("GET", "/broll/search", VIDEO, "Studio tools"),
]


def pending_handlers() -> list[HTTPRouteHandler]:
    """One handler per (methods, scopes, tag) serving all its paths: ~15 handlers, not 70,
    which keeps start-up fast. All methods of a path go in one handler, so the
    automatic OPTIONS answer's `Allow` lists every one of them."""
    methods: dict[str, list[str]] = {}
    meta: dict[str, tuple[tuple[str, ...], str]] = {}
    for method, path, scopes, tag in PENDING:
        methods.setdefault(path, []).append(method)
        meta[path] = (scopes, tag)
    groups: dict[tuple[tuple[str, ...], tuple[str, ...], str], list[str]] = {}
    for path, verbs in methods.items():
        groups.setdefault((tuple(sorted(verbs)), *meta[path]), []).append(path)
    return [_pending(verbs, paths, scopes, tag) for (verbs, scopes, tag), paths in groups.items()]


def _operation_id(handler: HTTPRouteHandler, method: str, components: list[Any]) -> str:
    parts = [c if isinstance(c, str) else c.name for c in components]
    return "_".join(["pending", method.lower(), *parts]).replace("-", "_")


def _pending(
    methods: tuple[str, ...], paths: list[str], scopes: tuple[str, ...], tag: str
) -> HTTPRouteHandler:
    async def not_yet(request: Request[Any, Any, Any]) -> None:
        raise NotImplementedYet(
            f"{request.method} {request.url.path} is part of the interface but not emulated "
            "yet: its auth and scopes are checked, its behaviour lands in a later release "
            "(see docs/fidelity.md)."
        )

    return HTTPRouteHandler(
        path=[API_PREFIX + path for path in paths],
        http_method=[HttpMethod(m) for m in methods],
        opt=auth_opt("api_key", *scopes),
        security=BEARER,
        tags=[tag],
        summary=f"Not emulated yet (answers 501); needs scope {' or '.join(scopes)}",
        operation_id=_operation_id,
        status_code=501,
        responses={
            501: ResponseSpec(
                data_container=ErrorEnvelope, description="Not yet", generate_examples=False
            )
        },
    )(not_yet)
