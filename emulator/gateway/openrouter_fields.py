"""OpenRouter's fields that chat, responses and messages bodies share: routing
preferences (`provider`), `models` as fallbacks, `plugins` and `debug`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from emulator.bodies import OpenWireModel
from emulator.errors import ValidationFailed
from emulator.gateway import web_search

# A price in USD: a number, or a decimal string (the `openrouter` SDK types them so).
Usd = Annotated[float, Field(ge=0)] | Annotated[str, Field(pattern=r"^\d{1,9}(\.\d{1,12})?$")]


class MaxPrice(OpenWireModel):
    """OpenRouter's price ceiling, in USD per million tokens."""

    prompt: Usd | None = None
    completion: Usd | None = None


# `exacto`: OpenRouter's providers of the best tool-calling quality; here the catalog's
# order, which is the emulator's order of quality.
SortBy = Literal["price", "latency", "throughput", "exacto"]


class SortConfig(OpenWireModel):
    """`sort` as an object: `partition: "none"` sorts the routes of every model
    together, so a fallback model's route may come first (default `"model"`)."""

    by: SortBy | None = None
    partition: Literal["model", "none"] | None = None


class ProviderPreferences(OpenWireModel):
    order: list[str] | None = None
    only: list[str] | None = None
    ignore: list[str] | None = None
    allow_fallbacks: bool | None = None
    sort: SortBy | SortConfig | None = None
    # OpenRouter's: which routes may see the prompt, the most they may cost, and
    # whether a route must take every parameter the request sets.
    data_collection: Literal["allow", "deny"] | None = None
    zdr: bool | None = None
    max_price: MaxPrice | None = None
    require_parameters: bool | None = None


def model_from_models(body: Any) -> Any:
    """OpenRouter's: a body with `models` and no `model` is served by the first of them,
    the others its fallbacks (the list is kept whole, so that errors name its items)."""
    if isinstance(body, dict) and body.get("model") is None:
        models = body.get("models")
        if isinstance(models, list) and models:
            if not isinstance(models[0], str) or not models[0]:
                raise ValidationFailed(
                    "`models[0]` must be a model id: with no `model`, it is the model asked for.",
                    param="models[0]",
                )
            return {**body, "model": models[0]}
    return body


class Plugin(OpenWireModel):
    """One of OpenRouter's plugins: `context-compression` (`middle_out`) and `web`
    (`web_search`: `max_results`, `search_prompt`) are acted on; others are taken and
    ignored."""

    id: Annotated[str, Field(min_length=1)]
    enabled: bool | None = None
    # The `web` plugin's (other plugins' fields are theirs: taken as sent).
    max_results: Any = None
    search_prompt: Any = None

    @field_validator("max_results", "search_prompt")
    @classmethod
    def _web_fields(cls, value: Any, info: ValidationInfo) -> Any:
        if info.data.get("id") != "web" or value is None:
            return value
        if info.field_name == "search_prompt" and not isinstance(value, str):
            raise ValueError("search_prompt must be a string")
        if info.field_name == "max_results" and not (
            type(value) is int and 1 <= value <= web_search.MAX_RESULTS
        ):
            raise ValueError(
                f"max_results must be a whole number from 1 to {web_search.MAX_RESULTS}"
            )
        return value


class DebugOptions(OpenWireModel):
    """OpenRouter's: `echo_upstream_body` streams the provider's request first."""

    echo_upstream_body: bool | None = None
