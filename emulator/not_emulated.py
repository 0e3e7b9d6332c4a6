"""Paths of OpenRouter's and OpenAI's APIs that SDKs call and the service's interface
does not have: their 404 says what they are, not only that no route matches."""

from __future__ import annotations

_NOT_EMULATED = {
    "/api/v1/embeddings": "OpenRouter's embeddings API",
    "/api/v1/completions": "the legacy completions API (use /api/v1/chat/completions)",
    "/api/v1/rerank": "OpenRouter's rerank API",
    "/api/v1/moderations": "OpenAI's moderations API",
    "/api/v1/audio/transcriptions": "OpenAI's audio API (audio input goes in chat messages)",
    "/api/v1/audio/speech": "OpenAI's audio API (audio output: chat `modalities`)",
    "/api/v1/images/generations": (
        "OpenAI's images API (images: chat `modalities`, or the image tools under /api/v1/images)"
    ),
}


def not_emulated(path: str) -> str:
    """A sentence for the 404 of `path` when it is a known API's, else ""."""
    what = _NOT_EMULATED.get(path.rstrip("/"))
    return f" It is {what}, which the emulator does not emulate." if what else ""
