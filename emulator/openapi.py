"""The OpenAPI document: litestar's, finished so that every error says our envelope.

Litestar documents its own validation error shape; ours is different, so the
finished document replaces every 4xx/5xx body with `ErrorEnvelope` and adds
the 401/403/413/415/422/429 answers each route can give (a route declares the rest:
`emulator.openapi_answers`).
"""

from __future__ import annotations

import copy
from http import HTTPStatus
from typing import Any

from litestar import Litestar, MediaType, Request, Router, get
from litestar.exceptions import NotFoundException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme, Tag
from litestar.params import FromPath
from pydantic import BaseModel

from emulator import __version__
from emulator.auth.credentials import RouteAuth
from emulator.bodies import RequestBody
from emulator.docs_assets import ASSETS, swagger_asset
from emulator.gateway import chat_schemas, responses_schemas
from emulator.openapi_answers import ERRORS
from emulator.web import GATEWAY_SCOPES, ErrorEnvelope

_ERROR_REF = {"$ref": "#/components/schemas/ErrorEnvelope"}
# Request fields validated apart from their body's model (only requests that send them
# pay for it), documented as fields of that body.
_FIELDS_CHECKED_APART: dict[str, tuple[type[BaseModel], ...]] = {
    "ChatCompletionRequest": (chat_schemas.ReasoningFields, chat_schemas.SamplingFields),
    "ResponsesRequest": (responses_schemas.ReasoningFields,),
}


def finish(document: dict[str, Any], app: Litestar) -> dict[str, Any]:
    doc = copy.deepcopy(document)
    auths = _route_auths(app)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    models: list[type[BaseModel]] = [ErrorEnvelope, *_subclasses(RequestBody)]
    for model in models:
        _add_pydantic_schema(schemas, model)
    for name, models_apart in _FIELDS_CHECKED_APART.items():
        for fields in models_apart if name in schemas else ():
            schemas[name].setdefault("properties", {}).update(_inlined_properties(fields))
    for path, item in doc.get("paths", {}).items():
        for method, operation in item.items():
            if isinstance(operation, dict) and method != "parameters":
                auth = auths.get((path, method))
                if auth is not None:
                    _document_auth(operation, auth)
                _finish_operation(operation, auth)
                operation.get("parameters", []).sort(key=lambda p: _parameter_order(path, p))
    # litestar lists a handler's several paths, and their parameters, from sets (in hash
    # order): sorted, the document is the same in every process (SPEC section 2)
    doc["paths"] = dict(sorted(doc.get("paths", {}).items()))
    return doc


def _route_auths(app: Litestar) -> dict[tuple[str, str], RouteAuth]:
    """The (path, method) of every documented route, and what it takes."""
    auths: dict[tuple[str, str], RouteAuth] = {}
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            auth = handler.opt.get("auth")
            if auth is not None:
                auths.update(((route.path_format, m.lower()), auth) for m in handler.http_methods)
    return auths


def _rate_counted(auth: RouteAuth) -> bool:
    """A route a gateway key reaches: its requests count against the rate limits
    (`emulator.web.count_request`), so it may answer 429."""
    return GATEWAY_SCOPES[0] in auth.every_scope()


def _document_auth(operation: dict[str, Any], auth: RouteAuth) -> None:
    """The credential a route takes, as its `security`, and the scope, in its words."""
    if auth.kind == "admin":
        return  # the control plane's own routers say it
    scheme: dict[str, list[str]] = {"userToken" if auth.kind == "user_token" else "bearer": []}
    operation["security"] = [{}, scheme] if auth.kind == "optional" else [scheme]
    if auth.scopes:
        needs = f"Needs an API key with the scope {auth.describe_scopes()}"
        if auth.by_query is not None:
            name = auth.by_query[0]
            needs += f"; with `{name}`, the scope {auth.for_query({name}).describe_scopes()}"
        said = operation.get("description")
        operation["description"] = f"{said}\n\n{needs}." if said else f"{needs}."


def _parameter_order(path: str, parameter: dict[str, Any]) -> tuple[str, int, str]:
    """Path parameters in the order the path names them, then the others by name."""
    where, name = parameter.get("in", ""), parameter.get("name", "")
    return where, path.find("{" + name) if where == "path" else 0, name


def _subclasses(cls: type[RequestBody]) -> list[type[RequestBody]]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return [c for c in found if not c.__name__.startswith("_")]


def _add_pydantic_schema(schemas: dict[str, Any], model: type[BaseModel]) -> None:
    """Pydantic's schema keeps what litestar's drops: bounds of optional fields, patterns,
    and `additionalProperties: false` for bodies that refuse unknown fields."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(schema.pop("$defs", {}))
    schemas[model.__name__] = schema


def _inlined_properties(model: type[BaseModel]) -> dict[str, Any]:
    """A model's properties with its nested models written in place (two modules may
    name a nested model alike: no shared component for them)."""
    schema = model.model_json_schema(ref_template="{model}")
    defs = schema.get("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(defs[node["$ref"]])
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    properties: dict[str, Any] = inline(schema.get("properties", {}))
    return properties


def _finish_operation(operation: dict[str, Any], auth: RouteAuth | None) -> None:
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    choices = body.get("schema", {}).get("oneOf", [])
    if len(choices) == 2 and {"type": "null"} in choices:  # `data: X | None = None`
        body["schema"] = next(c for c in choices if c != {"type": "null"})
        operation["requestBody"]["required"] = False
    responses = operation.setdefault("responses", {})
    wanted = ["400"]
    if operation.get("security"):
        wanted.append("401")
    if auth is not None and auth.every_scope():
        wanted.append("403")
    parameters = operation.get("parameters", [])
    if operation.get("requestBody") or parameters:
        wanted.append("422")
    if operation.get("requestBody"):
        wanted += ["413", "415"]
    if any(p.get("in") == "path" for p in parameters):
        wanted.append("404")
    if auth is not None and _rate_counted(auth):
        wanted.append("429")
    for status in wanted:
        responses.setdefault(status, {"description": ERRORS[status]})
    for status, response in responses.items():
        if status[0] in "45":
            response["content"] = {"application/json": {"schema": _ERROR_REF}}
            response.pop("headers", None)
            if response.get("description") == _litestars_words(status) and status in ERRORS:
                response["description"] = ERRORS[status]
    operation["responses"] = dict(sorted(responses.items()))


def _litestars_words(status: str) -> str:
    """The description litestar gives an answer it documents itself (its 400, for one)."""
    return HTTPStatus(int(status)).description


class _SchemaRouter(Router):
    """The documents' router, whose unknown paths (`/schema/redoc`, for one) answer the
    JSON error envelope's 404, as every other route does, rather than litestar's page."""

    def register(self, value: Any) -> Any:
        # Its handler named, not imported: litestar keeps it in a private module.
        if getattr(getattr(value, "fn", None), "__name__", "") == "handle_schema_path_not_found":
            value = get("/{path:str}", sync_to_thread=False, include_in_schema=False)(_no_document)
        return super().register(value)


def _no_document(path: FromPath[str]) -> None:
    raise NotFoundException()


class _Finished:
    _cache: tuple[int, dict[str, Any]] | None = None

    def finished(self, app: Litestar, openapi_schema: dict[str, Any]) -> dict[str, Any]:
        if self._cache is None or self._cache[0] != id(openapi_schema):
            self._cache = (id(openapi_schema), finish(openapi_schema, app))
        return self._cache[1]


class FinishedJson(_Finished, JsonRenderPlugin):
    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        return super().render(request, self.finished(request.app, openapi_schema))


class FinishedSwagger(_Finished, SwaggerRenderPlugin):
    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        return super().render(request, self.finished(request.app, openapi_schema))


def openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Gateway & Studio emulator",
        version=__version__,
        description=(
            "A local-first emulator of the Gateway & Studio API. Base URL `/api/v1`; the "
            "control plane lives under `/_emulator`. Demo credentials: API key "
            "`sk-emu-demo-all`, user token `emu_user_demo`. Every error answer is "
            '`{"error": {"message", "type", "code", "param"}}`.'
        ),
        path="/schema",
        openapi_router=_SchemaRouter(
            "/schema", route_handlers=[swagger_asset], include_in_schema=False
        ),
        render_plugins=[
            FinishedSwagger(
                path="/",
                js_url=f"{ASSETS}/swagger-ui-bundle.js",
                css_url=f"{ASSETS}/swagger-ui.css",
                standalone_preset_js_url=f"{ASSETS}/swagger-ui-standalone-preset.js",
                favicon=f"<link rel='icon' type='image/png' href='{ASSETS}/favicon-32x32.png'>",
            ),
            FinishedJson(media_type=MediaType.JSON),
        ],
        components=Components(
            security_schemes={
                "bearer": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="An API key (sk-emu-...); also taken as `x-api-key`.",
                ),
                "userToken": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="A user token (emu_user_...): manages an account's API keys.",
                ),
                "admin": SecurityScheme(
                    type="http",
                    scheme="bearer",
                    description="The --admin-token, when the emulator was started with one.",
                ),
            }
        ),
        tags=[
            Tag(name="Gateway"),
            Tag(name="API keys"),
            Tag(name="Control plane", description="Outside /api/v1: drive the emulator."),
        ],
    )
