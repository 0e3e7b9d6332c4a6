"""What a route declares of its answers beyond its success, for the OpenAPI document:
the errors only it gives, and a success that may be a stream.

Every route's common errors (400, 401/403, 404 on a path id, 413/415 on a body, 422)
are added by `emulator.openapi.finish`; each error's body is the envelope.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Operation

from emulator.web import ErrorEnvelope

ERRORS = {
    "400": "Bad request: malformed JSON or a body that is not an object",
    "401": "No credential, an unknown one, or the wrong kind for this route",
    "402": "The balance cannot cover the request's hold, or a spend limit is reached",
    "403": "The API key lacks the scope this route needs",
    "404": "Not found",
    "409": "A request with this Idempotency-Key is still running (see `Retry-After`)",
    "413": "The body is larger than the emulator reads (10,000,000 bytes)",
    "415": "The body is compressed (`Content-Encoding`): send it as is",
    "416": "The `Range` lies past the file's end (`Content-Range: bytes */<size>`)",
    "422": "A field is invalid; `error.param` names it",
    "429": "A rate limit of the key or the account is reached (see `Retry-After`)",
    "503": "No provider can serve the request: each is down, or none can do what it asks",
}
# The gateway's inference routes answer a field that is invalid with 400, as OpenAI
# and Anthropic do (`emulator.error_handlers`).
WHOLE_OR_STREAMED = "The answer (server-sent events when the body says `stream: true`)"
INVALID_AS_400 = "Bad request: malformed JSON, or a field is invalid (`error.param` names it)"


def refusals(*statuses: int, worded: Mapping[int, str] | None = None) -> dict[int, ResponseSpec]:
    """Errors a route gives beyond every route's, described as `ERRORS` says unless
    `worded` words one for this route."""
    specs = {}
    for status in statuses:
        text = (worded or {}).get(status, ERRORS[str(status)])
        specs[status] = ResponseSpec(
            data_container=ErrorEnvelope, description=text, generate_examples=False
        )
    return specs


@dataclass
class Streamed(Operation):
    """An operation whose success is a `text/event-stream` when the body says
    `"stream": true`, and JSON otherwise."""

    def to_schema(self) -> dict[str, Any]:
        schema = super().to_schema()
        success = schema.get("responses", {}).get("200")
        if success is not None:
            success.setdefault("content", {})["text/event-stream"] = {
                "schema": {
                    "type": "string",
                    "description": "Server-sent events, each `data:` line one JSON chunk",
                }
            }
        return schema


# The gateway's inference routes: a hold on the balance, a model, an Idempotency-Key,
# the rate limits and the providers.
INFERENCE = refusals(
    400,
    402,
    404,
    409,
    422,
    429,
    503,
    worded={
        400: INVALID_AS_400,
        422: "The Idempotency-Key was used before with another body",
    },
)
# Counting tokens routes the request without serving it: no hold, no key.
COUNTING = refusals(400, 404, 429, 503, worded={400: INVALID_AS_400})
