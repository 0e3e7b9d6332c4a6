"""The chat-completions wire format."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from emulator.gateway.canonical import (
    Completion,
    Delta,
    Finish,
    Message,
    Request,
    TextDelta,
    Tool,
    ToolArgumentsDelta,
    ToolCall,
    ToolCallStart,
    role_of,
)


def parse_request(body: dict[str, Any]) -> Request:
    messages = tuple(_message(m) for m in body["messages"])
    choice = body.get("tool_choice", "auto") or "auto"
    if isinstance(choice, dict):
        choice = choice.get("function", {}).get("name", "auto")
    fmt = body.get("response_format") or {}
    stop = body.get("stop") or ()
    return Request(
        messages=messages,
        max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
        tools=tuple(
            Tool(
                name=t["function"]["name"],
                description=t["function"].get("description", ""),
                parameters=t["function"].get("parameters") or {"type": "object", "properties": {}},
            )
            for t in body.get("tools") or ()
        ),
        tool_choice=choice,
        response_format=_format(fmt),
        stop=(stop,) if isinstance(stop, str) else tuple(stop),
        seed=body.get("seed"),
        temperature=body.get("temperature"),
        n=body.get("n") or 1,
    )


def _format(fmt: dict[str, Any]) -> dict[str, Any] | None:
    if fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema", {})
        return {
            "type": "json_schema",
            "name": spec.get("name", "output"),
            "schema": spec.get("schema", {}),
        }
    if fmt.get("type") == "json_object":
        return {"type": "json_object"}
    return None


def _message(raw: dict[str, Any]) -> Message:
    role = role_of(raw["role"])
    content = raw.get("content")
    text, images = content_text(content)
    calls = tuple(
        ToolCall(
            id=c["id"], name=c["function"]["name"], arguments=c["function"].get("arguments", "")
        )
        for c in raw.get("tool_calls") or ()
    )
    return Message(
        role=role, text=text, images=images, tool_calls=calls, tool_call_id=raw.get("tool_call_id")
    )


def content_text(content: Any) -> tuple[str, int]:
    """The text of a content field (a string or parts) and how many images it holds."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, 0
    texts, images = [], 0
    for part in content:
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text"):
            texts.append(part.get("text", ""))
        elif kind in ("image_url", "input_image", "image"):
            images += 1
    return "\n".join(texts), images


def render_request(request: Request, model: str, stream: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": [_render_message(m) for m in request.messages],
        "n": request.n,
        "stream": stream,
    }
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
        body["tool_choice"] = (
            request.tool_choice
            if request.tool_choice in ("auto", "none", "required")
            else {"type": "function", "function": {"name": request.tool_choice}}
        )
    if request.response_format:
        fmt = request.response_format
        body["response_format"] = (
            {"type": "json_schema", "json_schema": {"name": fmt["name"], "schema": fmt["schema"]}}
            if fmt["type"] == "json_schema"
            else {"type": "json_object"}
        )
    if request.stop:
        body["stop"] = list(request.stop)
    for key in ("seed", "temperature"):
        if getattr(request, key) is not None:
            body[key] = getattr(request, key)
    return body


def _render_message(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.text}
    if m.images:
        out["content"] = [{"type": "text", "text": m.text}] + [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,"}}
        ] * m.images
    if m.tool_calls:
        out["tool_calls"] = [_render_call(c) for c in m.tool_calls]
        out["content"] = m.text or None
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    return out


def _render_call(c: ToolCall) -> dict[str, Any]:
    return {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}


def render_response(
    completions: list[Completion], *, id: str, model: str, created: int, extra: dict[str, Any]
) -> dict[str, Any]:
    prompt = completions[0].input_tokens
    output = sum(c.output_tokens for c in completions)
    return {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        **extra,
        "choices": [
            {
                "index": i,
                "message": {
                    "role": "assistant",
                    "content": c.text,
                    "refusal": None,
                    **(
                        {"tool_calls": [_render_call(t) for t in c.tool_calls]}
                        if c.tool_calls
                        else {}
                    ),
                },
                "finish_reason": c.finish_reason,
                "logprobs": None,
            }
            for i, c in enumerate(completions)
        ],
        "usage": usage(prompt, output),
    }


def usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def parse_response(body: dict[str, Any]) -> list[Completion]:
    prompt = body["usage"]["prompt_tokens"]
    choices = body["choices"]
    # The usage is a total over the choices: the first carries the remainder.
    per, extra = divmod(body["usage"]["completion_tokens"], len(choices))
    completions = []
    for index, choice in enumerate(choices):
        message = choice["message"]
        calls = tuple(
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls") or ()
        )
        output = per + (extra if index == 0 else 0)
        completions.append(
            Completion(message.get("content"), calls, choice["finish_reason"], prompt, output)
        )
    return completions


def deltas(completion: Completion, pieces: Iterable[str]) -> Iterator[Delta]:
    """A completion as a provider streams it: text in pieces, then each tool call."""
    for piece in pieces:
        yield TextDelta(piece)
    for index, call in enumerate(completion.tool_calls):
        yield ToolCallStart(index, call.id, call.name)
        for start in range(0, len(call.arguments), 24):
            yield ToolArgumentsDelta(index, call.arguments[start : start + 24])
    yield Finish(completion.finish_reason, completion.input_tokens, completion.output_tokens)


def render_chunks(
    stream: Iterable[Delta], *, id: str, model: str, created: int, extra: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """Chat chunks: the role first, content and tool-call deltas, finish, then usage."""
    head = {
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        **extra,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **head,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    yield chunk({"role": "assistant", "content": ""})
    for delta in stream:
        if isinstance(delta, TextDelta):
            yield chunk({"content": delta.text})
        elif isinstance(delta, ToolCallStart):
            call = {
                "index": delta.index,
                "id": delta.id,
                "type": "function",
                "function": {"name": delta.name, "arguments": ""},
            }
            yield chunk({"tool_calls": [call]})
        elif isinstance(delta, ToolArgumentsDelta):
            yield chunk(
                {"tool_calls": [{"index": delta.index, "function": {"arguments": delta.fragment}}]}
            )
        else:
            yield chunk({}, delta.reason)
            yield {**head, "choices": [], "usage": usage(delta.input_tokens, delta.output_tokens)}


def parse_chunks(chunks: Iterable[dict[str, Any]]) -> Iterator[Delta]:
    reason = "stop"
    started: set[int] = set()
    for chunk in chunks:
        if chunk.get("usage") and not chunk.get("choices"):
            u = chunk["usage"]
            yield Finish(reason, u["prompt_tokens"], u["completion_tokens"])  # type: ignore[arg-type]
            continue
        for choice in chunk.get("choices", []):
            delta = choice.get("delta", {})
            if delta.get("content"):
                yield TextDelta(delta["content"])
            for call in delta.get("tool_calls") or ():
                index = call["index"]
                if index not in started:
                    started.add(index)
                    yield ToolCallStart(index, call["id"], call["function"]["name"])
                if call["function"].get("arguments"):
                    yield ToolArgumentsDelta(index, call["function"]["arguments"])
            if choice.get("finish_reason"):
                reason = choice["finish_reason"]
