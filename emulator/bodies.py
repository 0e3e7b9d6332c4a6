"""The base of every JSON request body the emulator defines."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """Every model of ours: its validator is built on first use, not at import, which
    keeps dozens of models out of the cold start."""

    model_config = ConfigDict(defer_build=True)


class RequestBody(WireModel):
    """Unknown fields are refused (422 naming the field), so typos do not pass silently.

    Subclasses are documented in the OpenAPI document by pydantic's own JSON schema,
    which keeps every constraint (see `emulator.openapi.finish`).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)


def build_all_models() -> None:
    """Build every deferred validator now. For servers in a thread (tests, the pytest
    plugin), where a test thread and the server thread could otherwise build the same
    model at once; `emulator serve` uses them from one event loop and builds lazily."""
    pending: list[type[BaseModel]] = [WireModel]
    while pending:
        model = pending.pop()
        pending += model.__subclasses__()
        if not model.__pydantic_complete__:
            model.model_rebuild(force=True)
