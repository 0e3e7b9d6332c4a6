"""Turn an `Authorization` header into a caller, or the 401/403 that explains why not.

Two kinds of credential exist: API keys (`sk-emu-...`, scoped, for the
gateway, video and studio routes) and user tokens (`emu_user_...`, for key
management). Each route names the kind it takes; sending the other kind is
a 401 whose message says which one the route wants.
"""

from __future__ import annotations

import hmac
import sqlite3
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Literal

from emulator.clock import Clock, iso
from emulator.errors import (
    AdminTokenRequired,
    AuthenticationFailed,
    EmulatorError,
    KeyDisabled,
    MissingApiKey,
    PermissionDenied,
)
from emulator.ids import hash_secret
from emulator.store import Store
from emulator.store.accounts import account_for_user_token, get_account
from emulator.store.keys import ApiKey, KeyCache, KeyOwner, touch_key

RouteKind = Literal["api_key", "user_token", "optional", "admin"]
LAST_USED_RESOLUTION_S = 60  # `last_used_at` is written at most once a minute per key


@dataclass(frozen=True)
class RouteAuth:
    """What a route takes: a kind of credential and, for API keys, any one of `scopes`."""

    kind: RouteKind
    scopes: tuple[str, ...] = ()
    # A route whose scope depends on what it is asked: with this query parameter, these
    # scopes instead (`GET /generation?id=` is a gateway call, without it a video list).
    by_query: tuple[str, tuple[str, ...]] | None = None

    def describe_scopes(self) -> str:
        return " or ".join(f"`{s}`" for s in self.scopes)

    def every_scope(self) -> tuple[str, ...]:
        return self.scopes + (self.by_query[1] if self.by_query else ())

    def for_query(self, names: Collection[str]) -> RouteAuth:
        """The auth of a request whose query names `names`: decided before anything else
        (faults, validation) acts on it."""
        if self.by_query is None:
            return self
        name, scopes = self.by_query
        return RouteAuth(self.kind, scopes if name in names else self.scopes)


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class Caller:
    kind: Literal["api_key", "user_token"]
    account_id: str
    key: ApiKey | None = None
    owner: KeyOwner | None = None  # the account's limits, for API-key callers
    scopes: tuple[str, ...] = ()  # any one of which the route took: checked again to spend


def bearer_token(header: str | None) -> str | None:
    """The token of `Bearer <token>`; None when no credential was sent at all."""
    if header is None or not header.strip():
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        said = "a credential without a scheme"  # a bare secret is not said back
        if scheme.isalpha() and len(scheme) <= 16:  # a scheme's name (Basic, Token) is
            said = f"a `{scheme}` credential"
        raise AuthenticationFailed(
            f"The Authorization header must be `Bearer <token>`; got {said} instead."
        )
    token = token.strip()
    return token or None


def authenticate(
    store: Store, keys: KeyCache, clock: Clock, auth: RouteAuth, header: str | None
) -> Caller:
    token = bearer_token(header)
    if token is None:
        raise MissingApiKey(_missing_message(auth))
    secret_hash = hash_secret(token)
    with store.read() as conn:
        found = keys.lookup(conn, secret_hash)
        key, owner = found if found else (None, None)
        user_account = None if key else account_for_user_token(conn, secret_hash)
    if auth.kind == "user_token":
        if user_account is not None:
            return Caller(kind="user_token", account_id=user_account)
        if key is not None:
            raise AuthenticationFailed(
                "Key management takes a user token (for example `emu_user_demo`), not an API key."
            )
        raise AuthenticationFailed("The user token is not valid. The demo one is emu_user_demo.")
    if key is None:
        if user_account is not None:
            raise AuthenticationFailed(
                "This route takes an API key (for example `sk-emu-demo-all`), not a user "
                "token; create one with POST /api/v1/keys."
            )
        raise AuthenticationFailed(
            "The API key is not valid. Check it, or use a demo key such as sk-emu-demo-all."
        )
    try:
        _check_key(key, auth)
    except EmulatorError as refused:
        refused.refused_key = (key.account_id, key.id)
        raise
    used_at = _note_use(store, clock, key)
    if used_at is not None and owner is not None:
        key = replace(key, last_used_at=used_at)
        keys.remember(key, owner)
    return Caller(
        kind="api_key", account_id=key.account_id, key=key, owner=owner, scopes=auth.scopes
    )


def _missing_message(auth: RouteAuth) -> str:
    if auth.kind == "user_token":
        return (
            "No user token was sent. Key management takes `Authorization: Bearer "
            "<user token>`; the demo one is emu_user_demo."
        )
    return (
        "No API key was sent. Send `Authorization: Bearer <API key>`; the demo key "
        "sk-emu-demo-all has every scope."
    )


def _check_key(key: ApiKey, auth: RouteAuth) -> None:
    check_usable(key)
    require_scope(key, auth)


def current_key(
    conn: sqlite3.Connection, keys: KeyCache, key: ApiKey, scopes: tuple[str, ...]
) -> ApiKey:
    """The key as it is now (in the caller's transaction), if it may still be used, and
    still has one of `scopes` (those its route took)."""
    fresh = keys.current(conn, key)
    if fresh is None:  # deleted since
        raise AuthenticationFailed(f"This API key ({key.id}) was revoked.")
    check_usable(fresh)
    require_scope(fresh, RouteAuth("api_key", scopes))
    return fresh


def check_account(conn: sqlite3.Connection, account_id: str) -> None:
    """401 if the caller's account is gone from the state now (in the caller's
    transaction): a reset or restore replaced it after the credential was checked."""
    if get_account(conn, account_id) is None:
        raise AuthenticationFailed(
            f"The account {account_id} is not in the emulator's state any more (it was "
            "reset or restored while this request waited): use a credential of the state now."
        )


def check_usable(key: ApiKey) -> None:
    """401 for a key revoked (deleted) or disabled: at authentication, and again when a
    request begins to spend (the key may have changed while its body arrived)."""
    if key.revoked_at is not None:
        raise AuthenticationFailed(f"This API key was revoked at {key.revoked_at}.")
    if key.status == "disabled":
        raise KeyDisabled(
            f"This API key ({key.id}) is disabled. Enable it with PATCH /api/v1/keys/{key.id} "
            '{"status": "active"}, or use another key.'
        )


def require_scope(key: ApiKey, auth: RouteAuth) -> None:
    """403 unless the key has one of `auth.scopes`: for a route whose scope depends on
    what it is asked (the route itself then takes any of them)."""
    if auth.scopes and not set(auth.scopes) & set(key.scopes):
        raise PermissionDenied(
            f"This API key lacks the scope {auth.describe_scopes()} that this route needs "
            f"(it has: {', '.join(key.scopes) or 'none'}). Use a key with that scope, or "
            "add it with PATCH /api/v1/keys/{id}.",
            param="scopes",
        )


def _note_use(store: Store, clock: Clock, key: ApiKey) -> str | None:
    """Write `last_used_at` if it is older than the resolution; the time written."""
    now = clock.now()
    if key.last_used_at is None or key.last_used_at < iso(now - LAST_USED_RESOLUTION_S):
        used_at = iso(now)
        with store.write() as conn:
            touch_key(conn, key.id, used_at)
        return used_at
    return None


def check_admin(expected: str | None, authorization: str | None, header_token: str | None) -> None:
    """The control plane is open unless the emulator runs with `--admin-token`."""
    if expected is None:
        return
    sent = header_token
    if sent is None and authorization:
        scheme, _, token = authorization.strip().partition(" ")
        sent = token.strip() if scheme.lower() == "bearer" else None
    if sent is None or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise AdminTokenRequired(
            "The control plane needs the admin token this emulator was started with: send "
            "`Authorization: Bearer <token>` or `X-Emulator-Admin-Token: <token>`."
        )
