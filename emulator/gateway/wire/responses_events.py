"""The responses wire format's stream: typed `response.*` events, each numbered."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from emulator.gateway.canonical import (
    Completion,
    Delta,
    Finish,
    ImageDelta,
    ReasoningDelta,
    TextDelta,
    TokenLogprob,
    ToolArgumentsDelta,
    ToolCall,
    ToolCallStart,
)
from emulator.gateway.logprobs import entries_of, entry_json
from emulator.gateway.wire.responses import parse_response, render_response
from emulator.gateway.wire.responses_items import (
    IMAGE_ITEM,
    SHOWN,
    Shown,
    call_item,
    call_item_id,
    image_item,
    image_url,
    item_key,
    reasoning_item,
    summary_part,
    text_part,
)


def render_events(
    stream: Iterable[Delta],
    *,
    id: str,
    model: str,
    created: int,
    extra: dict[str, Any] | None = None,
    shown: Shown = SHOWN,
) -> Iterator[dict[str, Any]]:
    """The typed event sequence, each event with a `sequence_number` from 0. Reasoning
    is the first item; without `shown.summary` its text is not sent (`summary: []`). A
    generated image comes after the text, whole (its item added and done while the
    message stays open: the message is done at the end, `incomplete` at `max_tokens`)."""
    summary = shown.summary
    key = item_key(id)
    numbers = iter(range(1_000_000))
    shell = {
        "id": id,
        "object": "response",
        "created_at": created,
        "completed_at": None,
        "model": model,
        **(extra or {}),
        "output": [],
        "error": None,
        "incomplete_details": None,
        "usage": None,
    }

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "sequence_number": next(numbers), **fields}

    yield event("response.created", response={**shell, "status": "in_progress"})
    yield event("response.in_progress", response={**shell, "status": "in_progress"})
    collected_text: list[str] = []
    collected_logprobs: list[TokenLogprob] | None = None  # None: the deltas carry none
    calls: list[Announced] = []
    message_open = False
    output_index = -1
    message_at = -1  # the message's output_index (an image may come after it is opened)
    thoughts: list[str] | None = None  # the reasoning, once it has begun
    thinking = False
    images: list[str] = []
    for delta in stream:
        if thinking and not isinstance(delta, ReasoningDelta):
            thinking = False
            yield from _close_reasoning(event, key, output_index, thoughts or [], shown)
        if isinstance(delta, ReasoningDelta):
            if thoughts is None:
                thoughts, thinking, output_index = [], True, output_index + 1
                yield from _open_reasoning(event, key, output_index, summary)
            thoughts.append(delta.text)
            if summary:
                yield event(
                    "response.reasoning_summary_text.delta",
                    item_id=f"rs_{key}",
                    output_index=output_index,
                    summary_index=0,
                    delta=delta.text,
                )
        elif isinstance(delta, TextDelta):
            if not message_open:
                message_open, output_index = True, output_index + 1
                message_at = output_index
                yield from _open_message(event, key, output_index)
            collected_text.append(delta.text)
            if delta.logprobs is not None:
                collected_logprobs = collected_logprobs or []
                collected_logprobs.extend(delta.logprobs)
            yield event(
                "response.output_text.delta",
                item_id=f"msg_{key}",
                output_index=message_at,
                content_index=0,
                delta=delta.text,
                logprobs=[entry_json(e, with_bytes=False) for e in delta.logprobs or ()],
            )
        elif isinstance(delta, ToolCallStart):
            yield from _close_message(
                event, key, message_at, message_open, collected_text, collected_logprobs
            )
            message_open = False
            if calls:  # each call is done before the next is added, as the API streams them
                yield from _close_call(event, calls[-1], "completed")
            output_index += 1
            calls.append(
                Announced(delta.id, delta.name, output_index, call_item_id(key, len(calls)))
            )
            item = call_item(calls[-1].item_id, delta.id, delta.name, "", "in_progress")
            yield event("response.output_item.added", output_index=output_index, item=item)
        elif isinstance(delta, ToolArgumentsDelta):
            call = calls[delta.index]
            call.arguments += delta.fragment
            yield event(
                "response.function_call_arguments.delta",
                item_id=call.item_id,
                output_index=call.output_index,
                delta=delta.fragment,
            )
        elif isinstance(delta, ImageDelta):
            output_index += 1
            yield from _image(event, key, len(images), output_index, delta.url)
            images.append(delta.url)
        elif isinstance(delta, Finish):
            status = "incomplete" if delta.reason == "length" else "completed"
            # Cut before any visible output: the reasoning alone, as OpenAI answers it.
            thinking_only = thoughts is not None and delta.reason == "length"
            if not calls and not message_open and not thinking_only and not images:
                # an empty answer is an empty message
                message_open, output_index = True, output_index + 1
                message_at = output_index
                yield from _open_message(event, key, output_index)
            yield from _close_message(
                event, key, message_at, message_open, collected_text, collected_logprobs, status
            )
            if calls:
                yield from _close_call(event, calls[-1], status)
            wrote = collected_text or not (calls or thinking_only or images)
            completion = Completion(
                "".join(collected_text) if wrote else None,
                tuple(ToolCall(c.id, c.name, c.arguments) for c in calls),
                delta.reason,
                delta.input_tokens,
                delta.output_tokens,
                cache=delta.cache,
                images=tuple(images),
                image_tokens=delta.image_tokens,
            )
            if thoughts is not None:
                completion.reasoning = "".join(thoughts)
                completion.reasoning_tokens = delta.reasoning_tokens
            if collected_logprobs is not None:
                completion.logprobs = tuple(collected_logprobs)
            final = render_response(
                completion, id=id, model=model, created=created, extra=extra, shown=shown
            )
            kind = (
                "response.incomplete" if final["status"] == "incomplete" else "response.completed"
            )
            yield event(kind, response=final)


@dataclass
class Announced:
    """A function call a stream has added: its arguments so far and where it is."""

    id: str
    name: str
    output_index: int
    item_id: str
    arguments: str = ""


def _close_call(event: Any, call: Announced, status: str) -> Iterator[dict[str, Any]]:
    yield event(
        "response.function_call_arguments.done",
        item_id=call.item_id,
        output_index=call.output_index,
        name=call.name,
        arguments=call.arguments,
    )
    item = call_item(call.item_id, call.id, call.name, call.arguments, status)
    yield event("response.output_item.done", output_index=call.output_index, item=item)


def _image(
    event: Any, key: str, index: int, output_index: int, url: str
) -> Iterator[dict[str, Any]]:
    """A generated image's events, as OpenAI's image generation call streams them
    (without partial images: the image comes whole)."""
    where = {"output_index": output_index, "item_id": f"ig_{key}_{index}"}
    item = image_item(key, index, None, "in_progress")
    yield event("response.output_item.added", output_index=output_index, item=item)
    yield event("response.image_generation_call.in_progress", **where)
    yield event("response.image_generation_call.generating", **where)
    yield event("response.image_generation_call.completed", **where)
    item = image_item(key, index, url, "completed")
    yield event("response.output_item.done", output_index=output_index, item=item)


def _open_reasoning(event: Any, id: str, index: int, summary: bool) -> Iterator[dict[str, Any]]:
    item = reasoning_item(id, "")
    yield event("response.output_item.added", output_index=index, item=item)
    if summary:
        yield event(
            "response.reasoning_summary_part.added",
            item_id=f"rs_{id}",
            output_index=index,
            summary_index=0,
            part=summary_part(""),
        )


def _close_reasoning(
    event: Any, id: str, index: int, thoughts: list[str], shown: Shown
) -> Iterator[dict[str, Any]]:
    text = "".join(thoughts)
    if shown.summary:
        where = {"item_id": f"rs_{id}", "output_index": index, "summary_index": 0}
        yield event("response.reasoning_summary_text.done", **where, text=text)
        yield event("response.reasoning_summary_part.done", **where, part=summary_part(text))
    item = reasoning_item(id, text, shown)
    yield event("response.output_item.done", output_index=index, item=item)


def _open_message(event: Any, id: str, index: int) -> Iterator[dict[str, Any]]:
    item = {
        "type": "message",
        "id": f"msg_{id}",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    yield event("response.output_item.added", output_index=index, item=item)
    yield event(
        "response.content_part.added",
        item_id=f"msg_{id}",
        output_index=index,
        content_index=0,
        part=text_part(""),
    )


def _close_message(
    event: Any,
    id: str,
    index: int,
    is_open: bool,
    text: list[str],
    logprobs: list[TokenLogprob] | None,
    status: str = "completed",
) -> Iterator[dict[str, Any]]:
    if not is_open:
        return
    full = "".join(text)
    yield event(
        "response.output_text.done",
        item_id=f"msg_{id}",
        output_index=index,
        content_index=0,
        text=full,
        logprobs=[entry_json(e, with_bytes=False) for e in logprobs or ()],
    )
    part = text_part(full, logprobs)
    yield event(
        "response.content_part.done",
        item_id=f"msg_{id}",
        output_index=index,
        content_index=0,
        part=part,
    )
    item = {
        "type": "message",
        "id": f"msg_{id}",
        "status": status,
        "role": "assistant",
        "content": [part],
    }
    yield event("response.output_item.done", output_index=index, item=item)


def parse_events(events: Iterable[dict[str, Any]]) -> Iterator[Delta]:
    calls: dict[str, int] = {}
    for event in events:
        kind = event["type"]
        if kind == "response.output_text.delta":
            yield TextDelta(event["delta"], 0, entries_of(event.get("logprobs")) or None)
        elif kind == "response.reasoning_summary_text.delta":
            yield ReasoningDelta(event["delta"])
        elif kind == "response.output_item.added" and event["item"]["type"] == "function_call":
            item = event["item"]
            calls[item["id"]] = len(calls)
            yield ToolCallStart(calls[item["id"]], item["call_id"], item["name"])
        elif kind == "response.function_call_arguments.delta":
            yield ToolArgumentsDelta(calls[event["item_id"]], event["delta"])
        elif kind == "response.output_item.done" and event["item"]["type"] == IMAGE_ITEM:
            yield ImageDelta(image_url(event["item"]))
        elif kind in ("response.completed", "response.incomplete"):
            done = parse_response(event["response"])[0]
            yield Finish(
                done.finish_reason,
                done.input_tokens,
                done.output_tokens,
                0,
                done.reasoning_tokens,
                done.cache,
                image_tokens=done.image_tokens,
            )
