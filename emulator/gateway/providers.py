"""The fake upstream providers: each speaks one wire format, deterministically.

A provider receives a request in its own format, answers in its own format,
and streams its own events; it never sees the client's format. Its
`behavior` (fixtures) and `status` (control plane) decide whether it fails.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from emulator.gateway import content
from emulator.gateway.canonical import Completion
from emulator.gateway.prompt_cache import MIN_TOKENS
from emulator.gateway.scripted import ScriptedReply
from emulator.gateway.tokens import token_spans
from emulator.gateway.wire import (
    chat,
    chat_chunks,
    messages,
    messages_events,
    responses,
    responses_events,
)
from emulator.ids import LazyRng

if TYPE_CHECKING:
    from emulator.gateway.prompt_cache import PromptCache

WIRE: dict[str, ModuleType] = {"chat": chat, "responses": responses, "messages": messages}
# Each format's stream, in a module of its own: the chat format's chunks
# (`render_chunks`, `parse_chunks`), the others' events (`render_events`, `parse_events`).
EVENTS: dict[str, ModuleType] = {
    "chat": chat_chunks,
    "responses": responses_events,
    "messages": messages_events,
}
# A provider's own answer ids: the gateway never shows them (it answers with its
# generation id), so they are numbered, not drawn from the answer's generator.
_ANSWER_NUMBERS = itertools.count(1)


class ProviderFailed(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class FakeProvider:
    name: str
    wire_format: str
    status: str
    behavior: str
    replies: tuple[ScriptedReply, ...] = ()
    cache: PromptCache | None = None  # None: the route does not cache prompts

    def check(self) -> None:
        if self.status == "down":
            raise ProviderFailed("provider_down", f"{self.name} is marked down.")
        if self.behavior == "fail":
            raise ProviderFailed("upstream_error", f"{self.name} failed (it always does).")

    def complete(self, request: dict[str, Any], rng: LazyRng) -> dict[str, Any]:
        """A whole answer, in this provider's format."""
        self.check()
        completions = self._generate(request, rng)
        return self._render(completions, request["model"])

    def stream(self, request: dict[str, Any], rng: LazyRng) -> Iterator[dict[str, Any]]:
        """The answer as this provider's stream events."""
        self.check()
        completions = self._generate(request, rng)
        deltas = itertools.chain.from_iterable(  # `n` answers in turn (chat has `n`)
            chat_chunks.deltas(
                completion,
                stream_pieces(completion.text or "", self.wire_format),
                choice,
                stream_pieces(completion.reasoning or "", self.wire_format),
            )
            for choice, completion in enumerate(completions)
        )
        ident = self._answer_id()
        if self.wire_format == "chat":
            first = completions[0]
            return chat_chunks.render_chunks(
                deltas, id=ident, model=request["model"], created=0, extra={},
                tools_first=bool(first.tool_calls) and not first.text,
            )  # fmt: skip
        if self.wire_format == "messages":
            first = completions[0]
            start = (first.input_tokens, first.cache)
            return messages_events.render_events(
                deltas, id=ident, model=request["model"], start=start
            )
        return responses_events.render_events(deltas, id=ident, model=request["model"], created=0)

    def _generate(self, request: dict[str, Any], rng: LazyRng) -> list[Completion]:
        canonical = WIRE[self.wire_format].parse_request(request)
        completions = [
            content.generate(request["model"], canonical, self.wire_format, rng, self.replies)
            for _ in range(canonical.n)
        ]
        prompt = completions[0].input_tokens
        if self.cache is not None and prompt >= MIN_TOKENS:  # shorter: never cached
            use = self.cache.use(canonical, prompt)
            for completion in completions:
                completion.cache = use
        return completions

    def _answer_id(self) -> str:
        return f"{self.name}-{next(_ANSWER_NUMBERS):012x}"

    def _render(self, completions: list[Completion], model: str) -> dict[str, Any]:
        ident = self._answer_id()
        if self.wire_format == "chat":
            return chat.render_response(completions, id=ident, model=model, created=0, extra={})
        if self.wire_format == "messages":
            return messages.render_response(completions[0], id=ident, model=model)
        return responses.render_response(completions[0], id=ident, model=model, created=0)


def stream_pieces(text: str, family: str) -> list[str]:
    """Stream text a token or two at a time, as real providers do."""
    spans = token_spans(text, family)
    pieces, start = [], 0
    for index in range(1, len(spans), 2):
        end = spans[index][1]
        pieces.append(text[start:end])
        start = end
    rest = text[start:]
    if rest and pieces and rest.isspace():  # spaces at the end go with the last token
        pieces[-1] += rest
    elif rest:
        pieces.append(rest)
    return pieces
