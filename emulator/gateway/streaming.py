"""Sending a served answer as server-sent events, paced like a real upstream.

Chunks are flushed one by one with `--stream-delay-ms` between them (longer
pauses and a keep-alive comment for a slow provider). The usage of what was
sent is recorded when the stream ends, also when the client leaves early.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

from emulator.auth.credentials import Caller
from emulator.faults import apply as fault_apply
from emulator.gateway import charges, service, usage_records
from emulator.gateway.canonical import (
    AudioDelta,
    Delta,
    Finish,
    ImageDelta,
    ReasoningDelta,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallStart,
)
from emulator.gateway.tokens import count_text

if TYPE_CHECKING:
    from emulator.runtime import Runtime

KEEP_ALIVE = b": EMULATOR PROCESSING\n\n"
SLOW_PAUSE_S = 0.25
UNPACED_TURN = 8  # an unpaced stream's lines between two looks at the event loop


def sse_lines(chunks: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    """Chat-style events: `data: {...}`."""
    for chunk in chunks:
        yield b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


def typed_sse_lines(events: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    """Responses-style events: `event: <type>` then `data: {...}`."""
    for event in events:
        data = json.dumps(event, separators=(",", ":")).encode()
        yield b"event: " + event["type"].encode() + b"\ndata: " + data + b"\n\n"


class ErrorEvent(bytes):
    """The last bytes of a stream that ended in an error: sent as they are, and marked
    so that an `Idempotency-Key` is not kept for replay of a failed answer."""


def cut_event(
    endpoint: str,
    sent: int,
    served: service.Served,
    why: str = "Injected fault",
    choice: int = 0,
) -> ErrorEvent:
    """The error event a real gateway sends when its upstream breaks mid-stream: for
    chat, a chunk like the others with a top-level `error` and `finish_reason: "error"`
    (SPEC section 9) for `choice`, the answer it broke (of `n`); for responses, an
    `error` event."""
    error = {
        "message": _cut_message(why, sent),
        "type": "upstream_error",
        "code": "stream_cut",
        "param": None,
    }
    if endpoint == "messages":  # Anthropic's error event
        failed = {"type": "error", "error": {"type": "api_error", "message": error["message"]}}
        data = json.dumps(failed, separators=(",", ":")).encode()
        return ErrorEvent(b"event: error\ndata: " + data + b"\n\n")
    if endpoint == "responses":
        return _responses_cut_event(sent, sent, why)
    chunk = {
        "id": served.id,
        "object": "chat.completion.chunk",
        "created": served.created,
        "model": served.route.model,
        "provider": served.route.provider,
        "system_fingerprint": service.FINGERPRINT,
        "error": error,
        "choices": [
            {
                "index": choice,
                "delta": {"content": ""},
                "finish_reason": "error",
                "native_finish_reason": "error",
                "logprobs": None,
            }
        ],
    }
    return ErrorEvent(b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n")


def _responses_cut_event(
    sent: int, sequence_number: int, why: str = "Injected fault"
) -> ErrorEvent:
    """A responses stream's `error` event, numbered `sequence_number`, for a stream cut
    after `sent` events."""
    event = {"type": "error", "sequence_number": sequence_number}
    event |= {"code": "stream_cut", "message": _cut_message(why, sent), "param": None}
    data = json.dumps(event, separators=(",", ":")).encode()
    return ErrorEvent(b"event: error\ndata: " + data + b"\n\n")


def replayed_lines(events: list[dict[str, Any]], model: str, provider: str) -> Iterator[bytes]:
    """A kept responses stream's `events` sent again, cut short where a stream-cut fault
    of the current request says (looked up now, in the request's context)."""
    lines = typed_sse_lines(iter(events))
    cut = fault_apply.stream_cut(model, provider)
    if cut is None or cut >= len(events):
        if cut is not None:
            fault_apply.cut_not_made()
        return lines
    error = _responses_cut_event(cut, events[cut]["sequence_number"])
    return itertools.chain(itertools.islice(lines, cut), [error])


def _cut_message(why: str, sent: int) -> str:
    return f"{why}: the stream was cut after {sent} chunks."


async def paced_stream(
    rt: Runtime,
    caller: Caller,
    call: service.Call,
    served: service.Served,
    render: Callable[[Iterator[Delta]], Iterator[bytes]],
    tail: bytes = b"",
    made: list[bytes] | None = None,
) -> AsyncIterator[bytes]:
    """`made`: the answer goes on when its client leaves (a background response): it is
    made to its end, kept and billed whole; every line, sent or not, is put in `made`."""
    # What the renderer took, in order: each choice's reasoning (owner: the choice and
    # -2) and text (-1), and each tool call's name and argument fragments (owner: its
    # choice and index). Reasoning a client does not see (`exclude`, no summary) was
    # still written by the model: taken, it is billed.
    sent: list[tuple[tuple[int, int], str]] = []
    # Of `sent`, what the lines already made carry. A renderer makes every line of a
    # delta before it takes the next (a responses stream closes the call before and
    # adds the next after taking its start; a chat stream opens the next of `n`
    # answers after taking its first delta), so a delta is out when the next is taken.
    carried = 0
    finish: list[Finish] = []
    provider = rt.catalog.view().providers[served.route.provider]
    slow = provider.status == "slow" or provider.body.get("behavior") == "slow"
    pause = max(rt.settings.stream_delay_ms / 1000, SLOW_PAUSE_S if slow else 0)

    def tracked() -> Iterator[Delta]:
        nonlocal carried
        for delta in served.deltas:
            carried = len(sent)
            if isinstance(delta, TextDelta):
                sent.append(((delta.choice, -1), delta.text))
            elif isinstance(delta, ReasoningDelta):
                sent.append(((delta.choice, -2), delta.text))
            elif isinstance(delta, ToolCallStart):
                sent.append(((delta.choice, delta.index), delta.name))
            elif isinstance(delta, ToolArgumentsDelta):
                sent.append(((delta.choice, delta.index), delta.fragment))
            elif isinstance(delta, ImageDelta):  # no text: its tokens are counted apart
                sent.append(((delta.choice, _IMAGE), ""))
            elif isinstance(delta, AudioDelta):  # the transcript is the text
                if delta.transcript:
                    sent.append(((delta.choice, -1), delta.transcript))
                elif delta.data:  # sound: its tokens are counted apart
                    sent.append(((delta.choice, _SOUND), ""))
            elif isinstance(delta, Finish):
                finish.append(delta)
            yield delta
        carried = len(sent)

    cut = fault_apply.stream_cut(served.route.model, served.route.provider)
    was_cut = False
    lines = render(tracked())

    def going(line: bytes) -> bytes:
        if made is not None:
            made.append(line)
        return line

    try:
        if slow:
            yield going(KEEP_ALIVE)
        for count, line in enumerate(lines):
            if count == cut or rt.stopping:  # lines before this one went out: billed
                broken = sent[-1][0][0] if sent else 0  # the answer being written
                del sent[carried:]
                finish.clear()
                was_cut = True
                why = "The emulator is stopping" if count != cut else "Injected fault"
                yield going(cut_event(call.endpoint, count, served, why, broken))
                return
            yield going(line)
            if pause:
                await asyncio.sleep(pause)
            elif count % UNPACED_TURN == UNPACED_TURN - 1:
                # Unpaced, the stream would never wait, and the server would not see a
                # client that left before the end (nor stop it, nor bill what was sent).
                await asyncio.sleep(0)
        if tail:
            yield going(tail)
    finally:
        if cut is not None and not was_cut:
            fault_apply.cut_not_made()
        if made is not None and not was_cut:
            made.extend(lines)  # what the client left behind is still made
            if tail:
                made.append(tail)
        close = getattr(lines, "close", None)
        if close is not None:  # now, not when collected: what it keeps is kept now
            close()
        ends = [d for d in served.deltas if isinstance(d, Finish)]  # one per choice
        prompt, cache = ends[0].input_tokens, ends[0].cache  # the prompt is read at once
        if len(finish) == len(ends):
            output = sum(e.output_tokens for e in ends)
            reasoning = sum(e.reasoning_tokens for e in ends)
            first = ends[0]
            spent = usage_records.Spent(
                prompt, output, reasoning, first.reason, "complete", cache, first.stop_sequence
            )
            image_tokens = sum(e.image_tokens for e in ends)
            audio_tokens = sum(e.audio_tokens for e in ends)
            if image_tokens or audio_tokens:
                images = _count(sent, _IMAGE) if image_tokens else 0
                spent.media = charges.MediaTokens(images, image_tokens, audio_tokens)
        else:  # cut, or the client left: count what was sent, never more than the
            # whole answer (a tool call cut at `max_tokens` streams its whole name)
            output, reasoning = _sent_tokens(sent, served.route.wire_format)
            # An image goes out whole, or not at all: each sent costs its tokens.
            images = _count(sent, _IMAGE)
            image_tokens = images * max((e.image_tokens for e in ends), default=0)
            audio_tokens = _sound_sent(sent, served.deltas, ends)
            output = min(output + image_tokens + audio_tokens, sum(e.output_tokens for e in ends))
            reasoning = min(reasoning, sum(e.reasoning_tokens for e in ends), output)
            end, reason = ("cut", "error") if was_cut else ("client_left", None)
            spent = usage_records.Spent(prompt, output, reasoning, reason, end, cache)
            if images or audio_tokens:
                spent.media = charges.MediaTokens(images, image_tokens, audio_tokens)
        with rt.store.write():  # one transaction: a crash cannot leave one done alone
            usage_records.record_usage(rt, caller, call, served, spent)
            if spent.stream_end == "complete":
                for hook in call.on_whole:
                    hook()


# The owners in `sent` of a choice's image and of its sound's chunks (its reasoning is
# -2, its text -1).
_IMAGE, _SOUND = -3, -4


def _count(sent: list[tuple[tuple[int, int], str]], owner: int) -> int:
    return sum(1 for (_choice, part), _ in sent if part == owner)


def _sound_sent(
    sent: list[tuple[tuple[int, int], str]], deltas: list[Delta], ends: list[Finish]
) -> int:
    """The audio tokens of the sound sent: its share of the whole, chunk by chunk."""
    chunks = _count(sent, _SOUND)
    if not chunks:
        return 0
    whole = sum(1 for d in deltas if isinstance(d, AudioDelta) and d.data)
    return sum(e.audio_tokens for e in ends) * chunks // whole


def _sent_tokens(sent: list[tuple[tuple[int, int], str]], family: str) -> tuple[int, int]:
    """Output tokens of what was sent, and of them the reasoning's, counted as a whole
    answer counts them: each choice's reasoning and text on their own (joined, the last
    word of one and the first of the next would count as one), and each tool call's name
    with its arguments."""
    pieces: dict[tuple[int, int], list[str]] = {}
    for owner, text in sent:
        pieces.setdefault(owner, []).append(text)
    counts = {owner: count_text("".join(texts), family) for owner, texts in pieces.items()}
    reasoning = sum(n for (_, part), n in counts.items() if part == -2)
    return sum(counts.values()), reasoning
