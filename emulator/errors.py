"""The one error tree of the emulator, and the envelope every error is sent in.

Each class carries the wire's status, type and code; `app.py` renders any of
them (and the framework's own errors) as SPEC section 6's envelope:
``{"error": {"message", "type", "code", "param"}}``.

    EmulatorError
    ├── InvalidRequest            400 invalid_request_error / invalid_request
    │   ├── MalformedJson         400                       / invalid_json
    │   ├── ValidationFailed      422                       / invalid_request (or a field code)
    │   │   └── IdempotencyKeyMismatch 422                  / idempotency_key_mismatch
    │   ├── ModelNotFound         404                       / model_not_found
    │   └── ThreadUnsupported     400                       / thread_unsupported_request
    ├── AuthenticationFailed      401 authentication_error  / invalid_api_key
    │   ├── MissingApiKey         401                       / missing_api_key
    │   ├── KeyDisabled           401                       / key_disabled
    │   └── AdminTokenRequired    401                       / invalid_admin_token
    ├── BillingError              402 billing_error         / insufficient_credits
    │   ├── BudgetExceeded        402                       / budget_exceeded
    │   └── PremiumApprovalRequired 402                     / premium_approval_required
    ├── PermissionDenied          403 permission_error      / insufficient_scope
    ├── NotFound                  404 not_found_error       / not_found
    ├── MethodNotAllowed          405 invalid_request_error / method_not_allowed
    ├── Conflict                  409 conflict_error        / idempotency_key_in_use
    ├── PayloadTooLarge           413 invalid_request_error / payload_too_large
    ├── UnsupportedMediaType      415 invalid_request_error / unsupported_media_type
    ├── RateLimited               429 rate_limit_error      / rate_limit_exceeded
    ├── InternalError             500 api_error             / internal_error
    ├── NotImplementedYet         501 not_implemented_error / not_implemented
    ├── StateUnavailable          503 api_error             / state_unavailable
    ├── UpstreamError             503 upstream_error        / upstream_failed
    │   └── NoRouteAvailable      503                       / no_route_available
    └── InjectedFault             any status a fault rule names, with its type and code
"""

from __future__ import annotations

from typing import Any, ClassVar


class EmulatorError(Exception):
    status: ClassVar[int] = 500
    type: ClassVar[str] = "api_error"
    code: ClassVar[str] = "internal_error"
    # Sent with every instance, e.g. `x-should-retry: false` so SDKs fail fast.
    default_headers: ClassVar[dict[str, str]] = {}

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.instance_code = code or self.code
        self.headers = {**self.default_headers, **(headers or {})}
        self.metadata = metadata
        # (account id, key id) of a key known but refused (disabled, revoked, without the
        # scope): the journal names it, so a test can find the refusals of its key.
        self.refused_key: tuple[str, str] | None = None

    def envelope(self) -> dict[str, Any]:
        return error_envelope(
            self.message, self.type, self.instance_code, self.param, self.metadata
        )


def error_envelope(
    message: str,
    type_: str,
    code: str,
    param: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message, "type": type_, "code": code, "param": param}
    if metadata is not None:
        body["metadata"] = metadata
    return {"error": body}


class InvalidRequest(EmulatorError):
    status = 400
    type = "invalid_request_error"
    code = "invalid_request"


class MalformedJson(InvalidRequest):
    code = "invalid_json"


class ValidationFailed(InvalidRequest):
    status = 422


class IdempotencyKeyMismatch(ValidationFailed):
    code = "idempotency_key_mismatch"


class ModelNotFound(InvalidRequest):
    status = 404
    code = "model_not_found"


class ThreadUnsupported(InvalidRequest):
    """Anthropic's refusal of a `thread` the server cannot hold: its SDKs' tool runners
    read `details` and go on sending the whole conversation each turn."""

    code = "thread_unsupported_request"

    def envelope(self) -> dict[str, Any]:
        body = super().envelope()
        body["error"]["details"] = {"error_code": self.code, "unsupported": ["thread"]}
        return body


class AuthenticationFailed(EmulatorError):
    status = 401
    type = "authentication_error"
    code = "invalid_api_key"


class MissingApiKey(AuthenticationFailed):
    code = "missing_api_key"


class KeyDisabled(AuthenticationFailed):
    code = "key_disabled"


class AdminTokenRequired(AuthenticationFailed):
    code = "invalid_admin_token"


class BillingError(EmulatorError):
    status = 402
    type = "billing_error"
    code = "insufficient_credits"
    default_headers = {"x-should-retry": "false"}  # a 402 does not change on retry


class BudgetExceeded(BillingError):
    code = "budget_exceeded"


class PremiumApprovalRequired(BillingError):
    code = "premium_approval_required"


class PermissionDenied(EmulatorError):
    status = 403
    type = "permission_error"
    code = "insufficient_scope"


class NotFound(EmulatorError):
    status = 404
    type = "not_found_error"
    code = "not_found"


class MethodNotAllowed(EmulatorError):
    status = 405
    type = "invalid_request_error"
    code = "method_not_allowed"


class Conflict(EmulatorError):
    status = 409
    type = "conflict_error"
    code = "idempotency_key_in_use"


class FixturesInvalid(Conflict):
    """A reset asked for while the fixtures folder cannot be loaded (a file being edited)."""

    code = "invalid_fixtures"


class PayloadTooLarge(EmulatorError):
    status = 413
    type = "invalid_request_error"
    code = "payload_too_large"


def quoted(value: object, limit: int = 200) -> str:
    """`value` as an error message names it: whole when short, else its start and its
    length (an id of megabytes is not echoed back)."""
    text = str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


MAX_BODY_BYTES = 10_000_000  # litestar's default limit; the direct routes keep the same


def body_too_large() -> PayloadTooLarge:
    """A body over the limit, on any route, in the same words."""
    return PayloadTooLarge(
        f"The request body is larger than {MAX_BODY_BYTES:,} bytes. Send less (images as "
        "URLs rather than base64, for example)."
    )


class ClientClosedRequest(EmulatorError):
    """The client left before its body had all arrived, or during an injected delay:
    nothing is done, nothing is charged. Nobody reads the answer; the journal shows it
    (499, as nginx logs it)."""

    status = 499
    type = "invalid_request_error"
    code = "client_closed_request"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(
            message
            or "The client closed the connection before the request body had all arrived; "
            "the request was not run and nothing was charged. Send it again."
        )


class UnsupportedMediaType(EmulatorError):
    status = 415
    type = "invalid_request_error"
    code = "unsupported_media_type"


class RateLimited(EmulatorError):
    status = 429
    type = "rate_limit_error"
    code = "rate_limit_exceeded"


class InternalError(EmulatorError):
    status = 500
    type = "api_error"
    code = "internal_error"


class NotImplementedYet(EmulatorError):
    status = 501
    type = "not_implemented_error"
    code = "not_implemented"
    default_headers = {"x-should-retry": "false"}


class StateUnavailable(EmulatorError):
    """The state file failed under a request (locked by another program, a full disk,
    a damaged file): the machine's trouble, not a bug, and said so."""

    status = 503
    type = "api_error"
    code = "state_unavailable"


class UpstreamError(EmulatorError):
    status = 503
    type = "upstream_error"
    code = "upstream_failed"


class NoRouteAvailable(UpstreamError):
    code = "no_route_available"
    default_headers = {"x-should-retry": "false"}  # it will not change on retry


# The usual type and code of a status, for fault rules that name only a status.
_FAULT_DEFAULTS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("authentication_error", "invalid_api_key"),
    402: ("billing_error", "insufficient_credits"),
    403: ("permission_error", "insufficient_scope"),
    404: ("not_found_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    408: ("timeout_error", "request_timeout"),
    409: ("conflict_error", "conflict"),
    413: ("invalid_request_error", "payload_too_large"),
    415: ("invalid_request_error", "unsupported_media_type"),
    422: ("invalid_request_error", "invalid_request"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("api_error", "internal_error"),
    501: ("not_implemented_error", "not_implemented"),
    502: ("upstream_error", "bad_gateway"),
    503: ("upstream_error", "upstream_failed"),
    504: ("upstream_error", "upstream_timeout"),
}


class InjectedFault(EmulatorError):
    """The answer a fault rule (or the `X-Emulator-Fault` header) asked for."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        error_type: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        default_type, default_code = _FAULT_DEFAULTS.get(
            status, ("api_error" if status >= 500 else "invalid_request_error", "injected_fault")
        )
        super().__init__(message, code=code or default_code, headers=headers)
        self.status = status  # type: ignore[misc]
        self.type = error_type or default_type  # type: ignore[misc]
