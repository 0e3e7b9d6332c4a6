"""The responses wire format: input items, output items, typed `response.*` stream events."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from emulator.gateway.canonical import (
    EFFORT_TOKENS,
    Completion,
    Delta,
    Finish,
    Message,
    Reasoning,
    ReasoningDelta,
    Request,
    TextDelta,
    Tool,
    ToolArgumentsDelta,
    ToolCall,
    ToolCallStart,
    effort_tokens,
    role_of,
)
from emulator.gateway.wire.chat import content_text


def parse_request(body: dict[str, Any]) -> Request:
    messages: list[Message] = []
    if body.get("instructions"):
        messages.append(Message("system", body["instructions"]))
    items = body["input"]
    if isinstance(items, str):
        messages.append(Message("user", items))
    else:
        for item in items:
            if item.get("type") != "reasoning":  # an earlier answer's, sent back: not read
                messages.append(_item(item))
    choice = body.get("tool_choice", "auto") or "auto"
    if isinstance(choice, dict):
        choice = choice.get("name", "auto")
    fmt = (body.get("text") or {}).get("format") or {}
    return Request(
        messages=tuple(messages),
        max_tokens=body.get("max_output_tokens"),
        tools=tuple(
            Tool(t["name"], t.get("description") or "", t.get("parameters") or {"type": "object"})
            for t in body.get("tools") or ()
            if t.get("type", "function") == "function"
        ),
        tool_choice=choice,
        response_format=_format(fmt),
        seed=(body.get("metadata") or {}).get("seed"),
        temperature=body.get("temperature"),
        parallel_tool_calls=body.get("parallel_tool_calls") is not False,
        reasoning=_reasoning(body["reasoning"]) if "reasoning" in body else None,
    )


# A budget that is no effort's travels as this emulator's `reasoning.max_tokens`.
_EFFORTS = {tokens: effort for effort, tokens in EFFORT_TOKENS.items()}


def _reasoning(asked: dict[str, Any]) -> Reasoning | None:
    """OpenAI's `reasoning` object asks for reasoning with an `effort` (not `none`) or a
    `summary` (`auto`, `concise`, `detailed`)."""
    effort, summary = asked.get("effort"), asked.get("summary")
    if effort == "none" or not (effort or summary or asked.get("max_tokens")):
        return None
    tokens = asked.get("max_tokens") or effort_tokens(effort)
    return Reasoning(tokens, summary=summary)


def _render_reasoning(reasoning: Reasoning) -> dict[str, Any]:
    """The gateway always asks for a summary: it is the reasoning's text on the way back."""
    effort = _EFFORTS.get(reasoning.tokens)
    budget = {"effort": effort} if effort else {"max_tokens": reasoning.tokens}
    return {**budget, "summary": reasoning.summary or "auto"}


def _format(fmt: dict[str, Any]) -> dict[str, Any] | None:
    if fmt.get("type") == "json_schema":
        return {
            "type": "json_schema",
            "name": fmt.get("name", "output"),
            "schema": fmt.get("schema", {}),
        }
    if fmt.get("type") == "json_object":
        return {"type": "json_object"}
    return None


def _item(item: dict[str, Any]) -> Message:
    kind = item.get("type", "message")
    if kind == "function_call":
        call = ToolCall(item["call_id"], item["name"], item.get("arguments", ""))
        return Message("assistant", tool_calls=(call,))
    if kind == "function_call_output":
        output = item.get("output", "")
        text = output if isinstance(output, str) else json.dumps(output)
        return Message("tool", text, tool_call_id=item["call_id"])
    role = role_of(item["role"])
    text, images = content_text(item.get("content"))
    return Message(role, text, images)


def render_request(request: Request, model: str, stream: bool = False) -> dict[str, Any]:
    system = [m.text for m in request.messages if m.role == "system"]
    body: dict[str, Any] = {"model": model, "input": [], "stream": stream}
    if system:
        body["instructions"] = "\n".join(system)
    for m in request.messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            body["input"].append(
                {"type": "function_call_output", "call_id": m.tool_call_id, "output": m.text}
            )
            continue
        if m.text or m.images or not m.tool_calls:
            kind = "output_text" if m.role == "assistant" else "input_text"
            parts: list[dict[str, Any]] = [{"type": kind, "text": m.text}]
            parts += [{"type": "input_image", "image_url": "data:image/png;base64,"}] * m.images
            body["input"].append({"role": m.role, "content": parts})
        body["input"] += [
            {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
            for c in m.tool_calls
        ]
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
            }
            for t in request.tools
        ]
        choice = request.tool_choice
        body["tool_choice"] = (
            choice
            if choice in ("auto", "none", "required")
            else {"type": "function", "name": choice}
        )
    if request.response_format:
        fmt = request.response_format
        body["text"] = {
            "format": {
                "type": fmt["type"],
                **(
                    {"name": fmt["name"], "schema": fmt["schema"]}
                    if fmt["type"] == "json_schema"
                    else {}
                ),
            }
        }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.seed is not None:
        body["metadata"] = {"seed": request.seed}
    if not request.parallel_tool_calls:
        body["parallel_tool_calls"] = False
    if request.reasoning is not None:
        body["reasoning"] = _render_reasoning(request.reasoning)
    return body


def output_items(completion: Completion, id: str) -> list[dict[str, Any]]:
    """The output items; at `max_tokens` the last is `incomplete`, those before it done."""
    items: list[dict[str, Any]] = []
    if completion.reasoning is not None:
        items.append(_reasoning_item(id, completion.reasoning))
    if completion.text is not None:
        items.append(
            {
                "type": "message",
                "id": f"msg_{id}",
                "status": "completed",
                "role": "assistant",
                "content": [_text_part(completion.text)],
            }
        )
    items += [_call_item(c.id, c.name, c.arguments, "completed") for c in completion.tool_calls]
    if items and completion.finish_reason == "length":
        items[-1]["status"] = "incomplete"
    return items


def _reasoning_item(id: str, summary: str) -> dict[str, Any]:
    """The reasoning's item: its summary is the text, or empty (none asked for)."""
    parts = [_summary_part(summary)] if summary else []
    return {"type": "reasoning", "id": f"rs_{id}", "summary": parts}


def _summary_part(text: str) -> dict[str, Any]:
    return {"type": "summary_text", "text": text}


def _call_item(call_id: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def request_echo(body: dict[str, Any]) -> dict[str, Any]:
    """What a Response object repeats of the request that made it (the SDK's `Response`
    requires `tools`, `tool_choice` and `parallel_tool_calls`), with the API's defaults
    for what was not sent. `store` is false: the emulator keeps no response to fetch."""
    return {
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "metadata": body.get("metadata") or {},
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "service_tier": "default",
        "store": False,
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": [_tool_echo(tool) for tool in body.get("tools") or ()],
        "top_p": body.get("top_p", 1.0),
        "truncation": body.get("truncation", "disabled"),
        "user": body.get("user"),
    }


def _tool_echo(tool: dict[str, Any]) -> dict[str, Any]:
    defaults = {"description": None, "parameters": None, "strict": True}
    return {**defaults, **tool}


def usage(input_tokens: int, output_tokens: int, reasoning: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def render_response(
    completion: Completion,
    *,
    id: str,
    model: str,
    created: int,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    incomplete = completion.finish_reason == "length"
    return {
        "id": id,
        "object": "response",
        "created_at": created,
        "status": "incomplete" if incomplete else "completed",
        "model": model,
        **(extra or {}),
        "output": output_items(completion, id),
        "output_text": completion.text or "",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "error": None,
        "usage": usage(
            completion.input_tokens, completion.output_tokens, completion.reasoning_tokens
        ),
    }


def parse_response(body: dict[str, Any]) -> list[Completion]:
    texts, calls, thoughts = [], [], []
    reasoned = False
    for item in body["output"]:
        if item["type"] == "reasoning":
            reasoned = True
            thoughts += [part["text"] for part in item["summary"]]
        elif item["type"] == "message":
            texts += [p["text"] for p in item["content"] if p["type"] == "output_text"]
        elif item["type"] == "function_call":
            calls.append(ToolCall(item["call_id"], item["name"], item["arguments"]))
    reason = "length" if body["status"] == "incomplete" else ("tool_calls" if calls else "stop")
    usage_ = body["usage"]
    text = "".join(texts) if texts or not calls else None
    done = Completion(text, tuple(calls), reason, usage_["input_tokens"], usage_["output_tokens"])  # type: ignore[arg-type]
    if reasoned:
        done.reasoning = "".join(thoughts)
        done.reasoning_tokens = usage_["output_tokens_details"]["reasoning_tokens"]
    return [done]


def render_events(
    stream: Iterable[Delta],
    *,
    id: str,
    model: str,
    created: int,
    extra: dict[str, Any] | None = None,
    summary: bool = True,
) -> Iterator[dict[str, Any]]:
    """The typed event sequence, each event with a `sequence_number` from 0. Reasoning
    is the first item; without `summary` its text is not sent (`summary: []`)."""
    numbers = iter(range(1_000_000))
    shell = {
        "id": id,
        "object": "response",
        "created_at": created,
        "model": model,
        **(extra or {}),
        "output": [],
        "usage": None,
    }

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "sequence_number": next(numbers), **fields}

    yield event("response.created", response={**shell, "status": "in_progress"})
    yield event("response.in_progress", response={**shell, "status": "in_progress"})
    collected_text: list[str] = []
    calls: list[Announced] = []
    message_open = False
    output_index = -1
    thoughts: list[str] | None = None  # the reasoning, once it has begun
    thinking = False
    for delta in stream:
        if thinking and not isinstance(delta, ReasoningDelta):
            thinking = False
            yield from _close_reasoning(event, id, output_index, thoughts or [], summary)
        if isinstance(delta, ReasoningDelta):
            if thoughts is None:
                thoughts, thinking, output_index = [], True, output_index + 1
                yield from _open_reasoning(event, id, output_index, summary)
            thoughts.append(delta.text)
            if summary:
                yield event(
                    "response.reasoning_summary_text.delta",
                    item_id=f"rs_{id}",
                    output_index=output_index,
                    summary_index=0,
                    delta=delta.text,
                )
        elif isinstance(delta, TextDelta):
            if not message_open:
                message_open, output_index = True, output_index + 1
                yield from _open_message(event, id, output_index)
            collected_text.append(delta.text)
            yield event(
                "response.output_text.delta",
                item_id=f"msg_{id}",
                output_index=output_index,
                content_index=0,
                delta=delta.text,
                logprobs=[],
            )
        elif isinstance(delta, ToolCallStart):
            yield from _close_message(event, id, output_index, message_open, collected_text)
            message_open = False
            if calls:  # each call is done before the next is added, as the API streams them
                yield from _close_call(event, calls[-1], "completed")
            output_index += 1
            calls.append(Announced(delta.id, delta.name, output_index))
            item = _call_item(delta.id, delta.name, "", "in_progress")
            yield event("response.output_item.added", output_index=output_index, item=item)
        elif isinstance(delta, ToolArgumentsDelta):
            call = calls[delta.index]
            call.arguments += delta.fragment
            yield event(
                "response.function_call_arguments.delta",
                item_id=f"fc_{call.id}",
                output_index=call.output_index,
                delta=delta.fragment,
            )
        else:
            status = "incomplete" if delta.reason == "length" else "completed"
            if not calls and not message_open:  # an empty answer is an empty message
                message_open, output_index = True, output_index + 1
                yield from _open_message(event, id, output_index)
            yield from _close_message(event, id, output_index, message_open, collected_text, status)
            if calls:
                yield from _close_call(event, calls[-1], status)
            completion = Completion(
                "".join(collected_text) if collected_text or not calls else None,
                tuple(ToolCall(c.id, c.name, c.arguments) for c in calls),
                delta.reason,
                delta.input_tokens,
                delta.output_tokens,
            )
            if thoughts is not None:
                completion.reasoning = "".join(thoughts) if summary else ""
                completion.reasoning_tokens = delta.reasoning_tokens
            final = render_response(completion, id=id, model=model, created=created, extra=extra)
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
    arguments: str = ""


def _close_call(event: Any, call: Announced, status: str) -> Iterator[dict[str, Any]]:
    yield event(
        "response.function_call_arguments.done",
        item_id=f"fc_{call.id}",
        output_index=call.output_index,
        name=call.name,
        arguments=call.arguments,
    )
    item = _call_item(call.id, call.name, call.arguments, status)
    yield event("response.output_item.done", output_index=call.output_index, item=item)


def _open_reasoning(event: Any, id: str, index: int, summary: bool) -> Iterator[dict[str, Any]]:
    item = _reasoning_item(id, "")
    yield event("response.output_item.added", output_index=index, item=item)
    if summary:
        yield event(
            "response.reasoning_summary_part.added",
            item_id=f"rs_{id}",
            output_index=index,
            summary_index=0,
            part=_summary_part(""),
        )


def _close_reasoning(
    event: Any, id: str, index: int, thoughts: list[str], summary: bool
) -> Iterator[dict[str, Any]]:
    text = "".join(thoughts) if summary else ""
    if summary:
        where = {"item_id": f"rs_{id}", "output_index": index, "summary_index": 0}
        yield event("response.reasoning_summary_text.done", **where, text=text)
        yield event("response.reasoning_summary_part.done", **where, part=_summary_part(text))
    item = _reasoning_item(id, text)
    yield event("response.output_item.done", output_index=index, item=item)


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


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
        part=_text_part(""),
    )


def _close_message(
    event: Any, id: str, index: int, is_open: bool, text: list[str], status: str = "completed"
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
        logprobs=[],
    )
    part = _text_part(full)
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
            yield TextDelta(event["delta"])
        elif kind == "response.reasoning_summary_text.delta":
            yield ReasoningDelta(event["delta"])
        elif kind == "response.output_item.added" and event["item"]["type"] == "function_call":
            item = event["item"]
            calls[item["id"]] = len(calls)
            yield ToolCallStart(calls[item["id"]], item["call_id"], item["name"])
        elif kind == "response.function_call_arguments.delta":
            yield ToolArgumentsDelta(calls[event["item_id"]], event["delta"])
        elif kind in ("response.completed", "response.incomplete"):
            done = parse_response(event["response"])[0]
            yield Finish(
                done.finish_reason, done.input_tokens, done.output_tokens, 0, done.reasoning_tokens
            )
