"""Gateway routes built so far: the catalog and the pricing (no auth needed)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, get
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, QueryParameter

from emulator.gateway.catalog import find_model, models_page
from emulator.gateway.schemas import ModelList, ModelOut, Pricing
from emulator.web import (
    API_PREFIX,
    Cursor,
    RuntimeDep,
    auth_opt,
    json_bytes,
    runtime_of,
)

ModelsLimit = Annotated[
    int | None,
    QueryParameter(ge=1, le=500, description="Items a page, 1-500 (default: all)."),
]


class CatalogController(Controller):
    path = API_PREFIX
    tags = ["Gateway"]
    opt = auth_opt("optional")

    @get(
        "/models",
        summary="The model catalog (a bearer is accepted, not required)",
        responses={
            200: ResponseSpec(
                data_container=ModelList, description="The catalog", generate_examples=False
            )
        },
    )
    async def list_models(
        self,
        request: Request[Any, Any, Any],
        limit: ModelsLimit = None,
        cursor: Cursor = None,
    ) -> Response[bytes]:
        # The hottest read of all: no dependency injection, cached bytes.
        return json_bytes(models_page(runtime_of(request).catalog.view(), limit, cursor))

    @get("/models/{model_id:path}", summary="One catalog entry by its <vendor>/<model_name> id")
    async def get_model(self, rt: RuntimeDep, model_id: FromPath[str]) -> ModelOut:
        return ModelOut.model_validate(find_model(rt.catalog.view(), model_id.lstrip("/")))

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
