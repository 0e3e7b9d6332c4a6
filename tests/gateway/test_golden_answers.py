"""Generated answers do not change between versions: users keep them in snapshot tests.

The digest covers whole answer bodies (text, tool calls, structured output, n,
max_tokens cuts, streams in all three provider formats) on a manual clock and
seed 0. If a change moves it on purpose, that is a breaking change: say so in
the CHANGELOG, then update the digest.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from litestar.testing import TestClient

from emulator.app import create_app
from emulator.settings import Settings

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city"],
        },
    },
}
SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "facts",
        "schema": {
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "array", "items": {"type": "number"}},
            },
            "required": ["a", "b"],
        },
    },
}
ROUTES = [  # (model, provider preferences): each provider wire format, and echo
    ("openai/gpt-4o", None),  # responses
    ("openai/gpt-4o", {"only": ["azure"]}),  # chat
    ("anthropic/claude-sonnet-4", None),  # messages
    ("emulator/echo", None),
]
VARIANTS: list[dict[str, Any]] = [
    {},
    {"tools": [WEATHER]},
    {"response_format": SCHEMA},
    {"response_format": {"type": "json_object"}},
    {"n": 2},
    {"max_tokens": 5},
    {"messages": [{"role": "user", "content": "[emulator:tokens=30] databases"}]},
    {"stream": True},
    {"stream": True, "tools": [WEATHER]},
]
DIGEST = "f21a83d10904720020ae8fb7cff39581143cfb96f572db2c3fb4440abf688d81"


def answers() -> bytes:
    app = create_app(Settings(db=":memory:", clock="manual", seed=0))
    out = []
    with TestClient(app, base_url="http://127.0.0.1") as client:
        headers = {"Authorization": "Bearer sk-emu-demo-all"}
        for model, provider in ROUTES:
            for variant in VARIANTS:
                body: dict[str, Any] = {
                    "model": model,
                    "messages": [{"role": "user", "content": "Explain cache invalidation"}],
                    **variant,
                }
                if provider:
                    body["provider"] = provider
                reply = client.post("/api/v1/chat/completions", json=body, headers=headers)
                assert reply.status_code == 200, reply.text
                out += [json.dumps(body).encode(), reply.content]
            reply = client.post(
                "/api/v1/responses",
                json={"model": model, "input": "Explain cache invalidation", "stream": True}
                | ({"provider": provider} if provider else {}),
                headers=headers,
            )
            out.append(reply.content)
    return b"\n".join(out)


def test_generated_answers_are_the_same_bytes_as_in_earlier_versions() -> None:
    assert hashlib.sha256(answers()).hexdigest() == DIGEST
