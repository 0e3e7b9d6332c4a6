"""What a gateway request body is checked for beyond its model's schema, in the request
and in its quote alike: fields that need another, the reasoning and sampling fields
when it sends them, media asked of the wrong endpoint, and tool calls paired with
their results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from emulator.bodies import validate
from emulator.errors import InvalidRequest, ValidationFailed
from emulator.gateway import audio_output, chat_schemas, responses_schemas
from emulator.gateway.tool_turns import check_tool_turns
from emulator.gateway.wire.chat import REASONING_FIELDS as CHAT_REASONING_FIELDS
from emulator.gateway.wire.responses_items import is_sealed


def check_body(body: dict[str, Any], endpoint: str, history: Sequence[dict[str, Any]] = ()) -> None:
    """What a request body of `endpoint` is checked for beyond its model's schema, in the
    request and in its quote alike: the reasoning and sampling fields when it sends them,
    and tool calls paired with their results (`history`: a responses request's earlier
    turns, from `previous_response_id`). A messages body's own fields are its schema's."""
    _check_reasoning(body, endpoint)
    if endpoint == "chat.completions":
        if not chat_schemas.SAMPLING_FIELDS.isdisjoint(body):
            validate(body, chat_schemas.SamplingFields)  # apart, as the reasoning fields
        _check_chat_pairs(body)
    elif endpoint == "responses" and "modalities" in body:
        _no_media_here(body["modalities"])
    check_tool_turns(body, endpoint, history)


def _no_media_here(modalities: Any) -> None:
    """Sound is generated for chat only (`gateway.audio_output`; images on both): a
    responses request that asks for it is told so, rather than answered in text as if
    it had not."""
    if not isinstance(modalities, list):
        return
    if "audio" in modalities:
        raise InvalidRequest(
            "Audio output (`modalities` with `audio`) is emulated on POST "
            "/api/v1/chat/completions only (streamed): ask there, where the chunks' "
            "`delta.audio` carries it.",
            param="modalities",
        )


def _check_chat_pairs(body: dict[str, Any]) -> None:
    """Chat fields that need another one."""
    if "top_logprobs" in body and not body.get("logprobs"):
        raise ValidationFailed(
            "top_logprobs needs `logprobs: true`: set it, or leave top_logprobs out.",
            param="top_logprobs",
        )
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema" and not (fmt.get("json_schema") or {}).get("schema"):
        raise ValidationFailed(
            "response_format json_schema needs `json_schema.schema`.",
            param="response_format.json_schema.schema",
        )
    if "modalities" in body and not body.get("stream"):
        audio_output.check_streamed(body)


def _check_reasoning(body: dict[str, Any], endpoint: str) -> None:
    """The reasoning fields, when a body has them: checked apart from the request's model,
    so that the requests without them (nearly all) pay one look-up for them. A responses
    input's reasoning items sent back must carry their `encrypted_content` as given."""
    if endpoint == "responses":
        if "reasoning" in body:
            validate(body, responses_schemas.ReasoningFields)
        if not isinstance(body["input"], str):
            _check_sent_back_reasoning(body["input"])
    elif endpoint == "chat.completions" and not CHAT_REASONING_FIELDS.isdisjoint(body):
        validate(body, chat_schemas.ReasoningFields)


def _check_sent_back_reasoning(items: list[dict[str, Any]]) -> None:
    """The real API refuses an `encrypted_content` it cannot read."""
    for index, item in enumerate(items):
        blob = item.get("encrypted_content") if item.get("type") == "reasoning" else None
        if blob is not None and not (isinstance(blob, str) and is_sealed(blob)):
            raise InvalidRequest(
                f"The encrypted_content of the reasoning item input[{index}] cannot be "
                "read: send it back exactly as it came in the response's output.",
                param=f"input[{index}].encrypted_content",
                code="invalid_encrypted_content",
            )
