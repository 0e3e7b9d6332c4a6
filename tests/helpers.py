"""Assertions shared by the tests."""

from __future__ import annotations

from typing import Any

import httpx

# Between response.created and response.completed, a text answer streams these.
RESPONSES_STREAM_EVENTS = {
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_error(
    response: httpx.Response, status: int, code: str, type_: str | None = None
) -> dict[str, Any]:
    """The answer is the SPEC section 6 envelope with this status and code."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert {"message", "type", "code", "param"} <= set(error), error
    assert error["code"] == code, error
    if type_ is not None:
        assert error["type"] == type_, error
    assert isinstance(error["message"], str) and len(error["message"]) > 10
    return error
