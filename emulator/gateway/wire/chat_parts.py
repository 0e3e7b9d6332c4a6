"""The pieces of the chat-completions format that whole answers (`chat`) and the
stream's chunks (`chat_chunks`) both write or read: usage and its details, a choice's
`native_finish_reason` and `logprobs`, and OpenRouter's structured reasoning."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from emulator.gateway.canonical import CacheUse, TokenLogprob
from emulator.gateway.logprobs import entry_json
from emulator.gateway.wire import native_finish
from emulator.gateway.wire.messages import signature as thinking_signature


def native_fields(
    native: str | None, reason: str | None, stop: str | None = None
) -> dict[str, Any]:
    """A choice's `native_finish_reason` (none when the provider's format is not told)."""
    if native is None:
        return {}
    return {"native_finish_reason": native_finish(native, reason, stop)}


def logprobs_json(entries: Iterable[TokenLogprob]) -> dict[str, Any]:
    """A choice's (or a chunk's) `logprobs`: its content's tokens; tool calls have none."""
    return {"content": [entry_json(e) for e in entries], "refusal": None}


# OpenRouter's `reasoning_details` formats, by the serving provider's wire format: its
# vendor's (Anthropic's thinking, OpenAI's reasoning summaries); others `unknown`.
REASONING_FORMATS = {"messages": "anthropic-claude-v1", "responses": "openai-responses-v1"}


def reasoning_detail(text: str, *, signature: bool = False, style: str = "chat") -> dict[str, Any]:
    """OpenRouter's structured reasoning, in the vendor's shape of the provider's format
    (`style`): a responses provider's is a `reasoning.summary`; the others a
    `reasoning.text`, whose whole answer carries a `signature` (a messages provider's
    thinking block's, else null; a stream's pieces none). Clients such as the AI SDK
    keep it and send it back on the assistant message, where it is accepted and ignored."""
    fmt = REASONING_FORMATS.get(style, "unknown")
    if style == "responses":
        return {"type": "reasoning.summary", "summary": text, "format": fmt, "index": 0}
    detail: dict[str, Any] = {"type": "reasoning.text", "text": text}
    if signature:
        detail["signature"] = thinking_signature(text) if style == "messages" else None
    return {**detail, "format": fmt, "index": 0}


def usage(
    prompt: int, completion: int, reasoning: int = 0, cache: CacheUse | None = None
) -> dict[str, Any]:
    """`prompt` counts the cached tokens too (`cache`: those read and written)."""
    read, written = (cache.read, cache.written) if cache is not None else (0, 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {
            "cached_tokens": read,
            "cache_write_tokens": written,
            "audio_tokens": 0,
        },
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def cache_of(details: dict[str, Any] | None) -> CacheUse | None:
    """The cache use a usage's prompt details tell (chat's or responses' own)."""
    if not details:
        return None
    read, written = details.get("cached_tokens") or 0, details.get("cache_write_tokens") or 0
    return CacheUse(read, written) if read or written else None


def split_total(total: int, parts: int, index: int) -> int:
    """A total over the choices, shared out: the first carries the remainder."""
    per, extra = divmod(total, parts)
    return per + (extra if index == 0 else 0)


def detail_tokens(usage: dict[str, Any], name: str) -> int:
    """A count of a usage's `completion_tokens_details` (`reasoning_tokens`, ...); 0 when
    it has none."""
    return int((usage.get("completion_tokens_details") or {}).get(name) or 0)
