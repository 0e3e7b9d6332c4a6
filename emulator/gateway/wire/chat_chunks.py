"""The chat-completions format's stream: a completion as its deltas, the deltas as chat
chunks (`data: {...}` lines: the role first, content and tool-call pieces, each choice's
finish, one usage for all), and chunks read back as deltas."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from emulator.gateway import audio_output, image_output
from emulator.gateway.canonical import (
    AudioDelta,
    Completion,
    Delta,
    Finish,
    ImageDelta,
    ReasoningDelta,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStart,
)
from emulator.gateway.logprobs import entries_of, split
from emulator.gateway.wire.chat_parts import (
    REASONING_FORMATS,
    cache_of,
    detail_tokens,
    logprobs_json,
    native_fields,
    reasoning_detail,
    split_total,
    usage,
)
from emulator.gateway.wire.messages import signature as thinking_signature


def deltas(
    completion: Completion, pieces: Iterable[str], choice: int = 0, thoughts: Iterable[str] = ()
) -> Iterator[Delta]:
    """A completion as a provider streams it: its reasoning and its text in pieces, then
    each tool call."""
    for thought in thoughts:
        yield ReasoningDelta(thought, choice)
    if completion.audio_out is not None:  # the text is the sound's transcript
        yield from audio_output.deltas(completion, list(pieces), choice)
    elif completion.logprobs is None:
        for piece in pieces:
            yield TextDelta(piece, choice)
    else:
        pieces = list(pieces)
        for piece, entries in zip(pieces, split(completion.logprobs, pieces), strict=True):
            yield TextDelta(piece, choice, entries)
    for index, call in enumerate(completion.tool_calls):
        yield ToolCallStart(index, call.id, call.name, choice)
        for start in range(0, len(call.arguments), 24):
            yield ToolArgumentsDelta(index, call.arguments[start : start + 24], choice)
    for url in completion.images:
        yield ImageDelta(url, choice)
    yield Finish(
        completion.finish_reason,
        completion.input_tokens,
        completion.output_tokens,
        choice,
        completion.reasoning_tokens,
        completion.cache,
        completion.stop_sequence,
        completion.image_tokens,
        completion.audio_tokens,
    )


def render_chunks(
    stream: Iterable[Delta],
    *,
    id: str,
    model: str,
    created: int,
    extra: dict[str, Any],
    tools_first: bool = False,
    native: str | None = None,
    reasoning_style: str = "chat",
) -> Iterator[dict[str, Any]]:
    """Chat chunks: the role first, content and tool-call deltas, finish, then usage.
    `native`: as for `render_response`, each chunk's `native_finish_reason`.
    `tools_first`: the (first) answer is tool calls, so its role chunk has null content.
    It is told, not peeked at: the role chunk goes out before any delta is taken,
    so that a stream cut after it counts none of them as sent.
    A messages provider's thinking ends with a delta of its signature alone, as
    OpenRouter streams it (clients such as the AI SDK send it back on the next turn)."""
    head = {
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        **extra,
    }

    def chunk(
        delta: dict[str, Any],
        choice: int,
        finish: str | None = None,
        logprobs: dict[str, Any] | None = None,
        stop: str | None = None,
    ) -> dict[str, Any]:
        entry = {
            "index": choice,
            "delta": delta,
            "finish_reason": finish,
            **native_fields(native, finish, stop),
        }
        entry["logprobs"] = logprobs
        return {**head, "choices": [entry]}

    yield chunk(_role(tools_first), 0)
    opened = {0}
    ended: list[Finish] = []
    thoughts: dict[int, list[str]] = {}  # each choice's thinking, until it is signed
    signed = reasoning_style == "messages"
    for delta in stream:
        if delta.choice not in opened:  # the next of `n` answers begins
            opened.add(delta.choice)
            yield chunk(_role(isinstance(delta, ToolCallStart)), delta.choice)
        if signed and not isinstance(delta, ReasoningDelta) and delta.choice in thoughts:
            yield chunk(_signature_piece(thoughts.pop(delta.choice)), delta.choice)
        if isinstance(delta, TextDelta):
            entries = delta.logprobs
            logprobs = None if entries is None else logprobs_json(entries)
            yield chunk({"content": delta.text}, delta.choice, None, logprobs)
        elif isinstance(delta, ReasoningDelta):  # OpenRouter's fields
            details = [reasoning_detail(delta.text, style=reasoning_style)]
            piece = {"content": "", "reasoning": delta.text, "reasoning_details": details}
            if signed:
                thoughts.setdefault(delta.choice, []).append(delta.text)
            yield chunk(piece, delta.choice)
        elif isinstance(delta, ToolCallStart):
            call = {
                "index": delta.index,
                "id": delta.id,
                "type": "function",
                "function": {"name": delta.name, "arguments": ""},
            }
            yield chunk({"tool_calls": [call]}, delta.choice)
        elif isinstance(delta, ToolArgumentsDelta):
            fragment = {"index": delta.index, "function": {"arguments": delta.fragment}}
            yield chunk({"tool_calls": [fragment]}, delta.choice)
        elif isinstance(delta, ImageDelta):  # OpenRouter's
            yield chunk({"images": [image_output.part(delta.url)]}, delta.choice)
        elif isinstance(delta, AudioDelta):
            yield chunk({"audio": audio_output.wire_piece(delta, created)}, delta.choice)
        else:
            yield chunk({}, delta.choice, delta.reason, stop=delta.stop_sequence)
            ended.append(delta)
    if ended:  # one usage for all the choices
        output = sum(finish.output_tokens for finish in ended)
        reasoning = sum(finish.reasoning_tokens for finish in ended)
        tokens = usage(ended[0].input_tokens, output, reasoning, ended[0].cache)
        images = sum(finish.image_tokens for finish in ended)
        if images:
            tokens["completion_tokens_details"]["image_tokens"] = images
        sound = sum(finish.audio_tokens for finish in ended)
        if sound:
            tokens["completion_tokens_details"]["audio_tokens"] = sound
        yield {**head, "choices": [], "usage": tokens}


def _signature_piece(thought: list[str]) -> dict[str, Any]:
    """The last delta of a thinking: no text, the signature of all of it."""
    signature = thinking_signature("".join(thought))
    detail: dict[str, Any] = {"type": "reasoning.text", "text": "", "signature": signature}
    detail |= {"format": REASONING_FORMATS["messages"], "index": 0}
    return {"content": "", "reasoning": "", "reasoning_details": [detail]}


def _role(tool_calls: bool) -> dict[str, Any]:
    """A choice's first chunk: `content` is null when the answer is tool calls."""
    return {"role": "assistant", "content": None if tool_calls else ""}


def starts_with_tool_call(deltas: Iterable[Delta]) -> bool:
    """Whether the first answer of a stream is tool calls (no text before them)."""
    first = next((d for d in deltas if not isinstance(d, (Finish, ReasoningDelta))), None)
    return isinstance(first, ToolCallStart)


def parse_chunks(chunks: Iterable[dict[str, Any]]) -> Iterator[Delta]:
    reasons: dict[int, str] = {}  # each choice's finish reason
    started: set[tuple[int, int]] = set()  # (choice, tool call index)
    for chunk in chunks:
        if chunk.get("usage") and not chunk.get("choices"):
            u = chunk["usage"]
            # The usage is a total over the choices: the first carries the remainder.
            choices = sorted(reasons) or [0]
            cache = cache_of(u.get("prompt_tokens_details"))
            for n, c in enumerate(choices):
                output = split_total(u["completion_tokens"], len(choices), n)
                reasoning = split_total(detail_tokens(u, "reasoning_tokens"), len(choices), n)
                images = split_total(detail_tokens(u, "image_tokens"), len(choices), n)
                sound = split_total(detail_tokens(u, "audio_tokens"), len(choices), n)
                reason = reasons.get(c, "stop")
                prompt = u["prompt_tokens"]
                yield Finish(reason, prompt, output, c, reasoning, cache, None, images, sound)  # type: ignore[arg-type]
            continue
        for choice in chunk.get("choices", []):
            c = choice.get("index", 0)
            delta = choice.get("delta", {})
            if delta.get("reasoning"):
                yield ReasoningDelta(delta["reasoning"], c)
            if delta.get("content"):
                logprobs = choice.get("logprobs")
                entries = None if logprobs is None else entries_of(logprobs.get("content") or ())
                yield TextDelta(delta["content"], c, entries)
            for call in delta.get("tool_calls") or ():
                index = call["index"]
                if (c, index) not in started:
                    started.add((c, index))
                    yield ToolCallStart(index, call["id"], call["function"]["name"], c)
                if call["function"].get("arguments"):
                    yield ToolArgumentsDelta(index, call["function"]["arguments"], c)
            for image in delta.get("images") or ():
                yield ImageDelta(image["image_url"]["url"], c)
            if delta.get("audio"):
                yield audio_output.parsed_piece(delta["audio"], c)
            if choice.get("finish_reason"):
                reasons[c] = choice["finish_reason"]
