"""/api/v1/keys: parse, call the service, answer. Every route takes a user token."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, delete, get, patch, post
from litestar.params import FromPath, JSONBody, QueryParameter

from emulator.keys import service
from emulator.keys.schemas import (
    ApiKeyCreated,
    ApiKeyDeleted,
    ApiKeyList,
    ApiKeyOut,
    KeyCreate,
    KeyUpdate,
)
from emulator.web import (
    API_PREFIX,
    BEARER,
    CallerDep,
    Cursor,
    RuntimeDep,
    auth_opt,
)

KeysLimit = Annotated[
    int | None, QueryParameter(ge=1, le=100, description="Items a page, 1-100 (default 50).")
]


class KeysController(Controller):
    path = f"{API_PREFIX}/keys"
    tags = ["API keys"]
    opt = auth_opt("user_token")
    security = BEARER

    @get("/", summary="List the account's API keys (never their secrets)")
    async def list_keys(
        self,
        rt: RuntimeDep,
        caller: CallerDep,
        limit: KeysLimit = None,
        cursor: Cursor = None,
    ) -> ApiKeyList:
        return ApiKeyList(**service.list_keys(rt, caller.account_id, limit, cursor))

    @post("/", summary="Create an API key; the raw secret is in this answer only")
    async def create_key(
        self, rt: RuntimeDep, caller: CallerDep, data: JSONBody[KeyCreate]
    ) -> ApiKeyCreated:
        return service.create_key(rt, caller.account_id, data)

    @get("/{key_id:str}", summary="Fetch one API key")
    async def get_key(self, rt: RuntimeDep, caller: CallerDep, key_id: FromPath[str]) -> ApiKeyOut:
        return service.get_key(rt, caller.account_id, key_id)

    @patch("/{key_id:str}", summary="Update name, status, scopes, environment or spend limit")
    async def update_key(
        self, rt: RuntimeDep, caller: CallerDep, key_id: FromPath[str], data: JSONBody[KeyUpdate]
    ) -> ApiKeyOut:
        return service.update_key(rt, caller.account_id, key_id, data)

    @delete("/{key_id:str}", status_code=200, summary="Revoke an API key")
    async def revoke_key(
        self, rt: RuntimeDep, caller: CallerDep, key_id: FromPath[str]
    ) -> ApiKeyDeleted:
        return ApiKeyDeleted(id=service.revoke_key(rt, caller.account_id, key_id))


__all__: list[Any] = ["KeysController"]
