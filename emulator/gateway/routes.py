"""Gateway routes built so far: the catalog and the pricing (no auth needed)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, QueryParameter

from emulator.auth.credentials import RouteAuth
from emulator.direct import DirectRequest, DirectRoute, serve_declared
from emulator.gateway import openrouter_catalog
from emulator.gateway.catalog import find_model, models_page
from emulator.gateway.schemas import ModelEndpoints, ModelList, ModelOut, Pricing
from emulator.paging import encode_cursor
from emulator.web import (
    API_PREFIX,
    Cursor,
    Reply,
    RuntimeDep,
    answers,
    auth_opt,
    json_bytes,
)

MAX_MODELS_PAGE = 500
ModelsLimit = Annotated[
    int | None,
    QueryParameter(ge=1, le=MAX_MODELS_PAGE, description="Items a page, 1-500 (default: all)."),
]
_LIMIT = Annotated[int, msgspec.Meta(ge=1, le=MAX_MODELS_PAGE)] | None  # the same, for msgspec
_MODALITIES = Annotated[str, msgspec.Meta(max_length=200)] | None  # as below, for msgspec
_MODEL_ID = Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None
AfterId = Annotated[
    str | None,
    QueryParameter(
        min_length=1,
        max_length=200,
        description="Anthropic's cursor: the models after this id (its `last_id`)",
    ),
]
_PARAMETERS = Annotated[str, msgspec.Meta(max_length=500)] | None
OutputModalities = Annotated[
    str | None,
    QueryParameter(
        max_length=200,
        description="OpenRouter's: models with any of these comma-separated output "
        "modalities (text, video, ...); `all` (the default here) lists every model.",
    ),
]
SupportedParameters = Annotated[
    str | None,
    QueryParameter(
        max_length=500,
        description="OpenRouter's: models that take every one of these comma-separated "
        "parameters (e.g. `tools`).",
    ),
]


def list_models(request: DirectRequest) -> Reply:
    # The hottest read of all: cached bytes, served directly (`emulator.direct`).
    limit, cursor = request.query("limit", _LIMIT), request.query("cursor", str)
    after_id = request.query("after_id", _MODEL_ID)
    param = "cursor"
    if after_id and not cursor:  # Anthropic's SDKs page by the last id shown
        cursor, param = encode_cursor(after_id), "after_id"
    modalities = request.query("output_modalities", _MODALITIES)
    parameters = request.query("supported_parameters", _PARAMETERS)
    view = request.rt.catalog.view()
    return Reply(models_page(view, limit, cursor, modalities, parameters, cursor_param=param))


MODEL_LIST = {
    200: ResponseSpec(data_container=ModelList, description="The catalog", generate_examples=False)
}
LIST_MODELS = DirectRoute("GET", f"{API_PREFIX}/models", RouteAuth("optional"), list_models)


class CatalogController(Controller):
    path = API_PREFIX
    tags = ["Gateway"]
    opt = auth_opt("optional")

    @get(
        "/models",
        summary="The model catalog (a bearer is accepted, not required)",
        responses=MODEL_LIST,
    )
    async def list_models(
        self,
        request: Request[Any, Any, Any],
        limit: ModelsLimit = None,
        cursor: Cursor = None,
        output_modalities: OutputModalities = None,
        supported_parameters: SupportedParameters = None,
        after_id: AfterId = None,
    ) -> Response[Any]:
        return await serve_declared(request, LIST_MODELS)

    @get("/models/count", summary="How many models the catalog lists (OpenRouter's)")
    async def count_models(
        self,
        rt: RuntimeDep,
        output_modalities: OutputModalities = None,
        supported_parameters: SupportedParameters = None,
    ) -> dict[str, Any]:
        view = rt.catalog.view()
        return openrouter_catalog.count(view, output_modalities, supported_parameters)

    @get(
        "/models/user",
        summary="The catalog as the caller sees it: all of it (OpenRouter's)",
        responses=MODEL_LIST,
    )
    async def list_models_for_user(
        self,
        rt: RuntimeDep,
        limit: ModelsLimit = None,
        cursor: Cursor = None,
        output_modalities: OutputModalities = None,
        supported_parameters: SupportedParameters = None,
    ) -> Response[bytes]:
        view = rt.catalog.view()
        page = models_page(
            view,
            limit,
            cursor,
            output_modalities,
            supported_parameters,
            f"{API_PREFIX}/models/user",
        )
        return json_bytes(page)

    @get(
        "/models/{model_id:path}",
        summary="One catalog entry by its <vendor>/<model_name> id; with `/endpoints` "
        "after it, its endpoints (OpenRouter's)",
        responses=answers(ModelOut | ModelEndpoints, "The model, or its endpoints"),
    )
    async def get_model(self, rt: RuntimeDep, model_id: FromPath[str]) -> Any:
        model_id = model_id.lstrip("/")
        if model_id.count("/") == 2 and model_id.endswith("/endpoints"):  # ids have one
            return openrouter_catalog.endpoints(rt.catalog.view(), model_id.rsplit("/", 1)[0])
        return ModelOut.model_validate(find_model(rt.catalog.view(), model_id))

    @get("/model/{model_id:path}", summary="One catalog entry as {data} (OpenRouter's)")
    async def get_model_data(self, rt: RuntimeDep, model_id: FromPath[str]) -> dict[str, Any]:
        return {"data": find_model(rt.catalog.view(), model_id.lstrip("/"))}

    @get("/providers", summary="The providers of the catalog (OpenRouter's)")
    async def list_providers(
        self, rt: RuntimeDep, limit: ModelsLimit = None, cursor: Cursor = None
    ) -> dict[str, Any]:
        return openrouter_catalog.providers(rt.catalog.view(), limit, cursor)

    @get(
        "/ai-gateway/pricing",
        summary="Packages, platform fee, minimum charge and model prices",
        responses={
            200: ResponseSpec(
                data_container=Pricing, description="The pricing", generate_examples=False
            )
        },
    )
    async def pricing(self, rt: RuntimeDep) -> Response[bytes]:
        return json_bytes(rt.catalog.view().pricing_bytes)
