"""The base of every JSON request body the emulator defines."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class RequestBody(BaseModel):
    """Unknown fields are refused (422 naming the field), so typos do not pass silently.

    Subclasses are documented in the OpenAPI document by pydantic's own JSON schema,
    which keeps every constraint (see `emulator.openapi.finish`).
    """

    model_config = ConfigDict(extra="forbid")
