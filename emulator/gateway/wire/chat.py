"""The chat-completions wire format: requests and whole answers (the stream's chunks
are `chat_chunks`', the pieces both write `chat_parts`')."""

from __future__ import annotations

from typing import Any

from emulator.gateway import audio, audio_output, image_output
from emulator.gateway.canonical import (
    AudioClip,
    CacheMark,
    Completion,
    ForcedTool,
    Message,
    Reasoning,
    Request,
    Tool,
    ToolCall,
    allowed_tools,
    breakpoint_ttls,
    cache_marks,
    cache_ttl,
    check_breakpoints,
    effort_tokens,
    merged_marks,
    role_of,
)
from emulator.gateway.files import file_text
from emulator.gateway.logprobs import entries_of
from emulator.gateway.server_tools import choice_after_server_tools
from emulator.gateway.wire.chat_parts import (
    cache_of,
    detail_tokens,
    logprobs_json,
    native_fields,
    reasoning_detail,
    split_total,
    usage,
)
from emulator.gateway.wire.image_refs import picture_of, pictures_of


def parse_request(body: dict[str, Any]) -> Request:
    messages = tuple(_message(m) for m in body["messages"])
    tools = tuple(
        Tool(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            parameters=t["function"].get("parameters") or {"type": "object", "properties": {}},
            index=index,
        )
        for index, t in enumerate(body.get("tools") or ())
        if t.get("type", "function") == "function"  # web search is the gateway's to run
    )
    choice = body.get("tool_choice", "auto") or "auto"
    if isinstance(choice, dict):
        if choice.get("type") == "allowed_tools":
            allowed = choice["allowed_tools"]
            names = [t["function"]["name"] for t in allowed["tools"]]
            where = "tool_choice.allowed_tools.tools"
            tools, choice = allowed_tools(tools, names, allowed["mode"], where)
        else:
            choice = ForcedTool(choice["function"]["name"])
    choice = choice_after_server_tools(choice, tools, body)
    fmt = body.get("response_format") or {}
    stop = body.get("stop") or ()
    request = Request(
        messages=messages,
        max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
        tools=tools,
        tool_choice=choice,
        response_format=_format(fmt),
        stop=(stop,) if isinstance(stop, str) else tuple(stop),
        seed=body.get("seed"),
        temperature=body.get("temperature"),
        n=body.get("n") or 1,
        parallel_tool_calls=body.get("parallel_tool_calls") is not False,
        logprobs=(body.get("top_logprobs") or 0) if body.get("logprobs") else None,
    )
    if not REASONING_FIELDS.isdisjoint(body):  # what the hot path pays for it
        request.reasoning, request.reasoning_unasked = _reasoning(body)
    if "modalities" in body:
        request.images_out = image_output.asked(body)
        request.audio_out = audio_output.asked(body)
    if body.get("cache_control") and messages:  # OpenRouter's: a breakpoint on the last
        last = messages[-1]
        mark = CacheMark(len(last.text), cache_ttl(body["cache_control"]))
        last.cache_marks = merged_marks((*last.cache_marks, mark))
    marked = [m for m in messages if m.cache_marks]
    if marked:
        check_breakpoints(breakpoint_ttls((), marked), "messages")
    return request


# The chat fields that ask for reasoning.
REASONING_FIELDS = frozenset({"reasoning", "include_reasoning", "reasoning_effort"})


def _reasoning(body: dict[str, Any]) -> tuple[Reasoning | None, str]:
    """OpenRouter's `reasoning` object (`effort` or `max_tokens`, `enabled`, `exclude`),
    OpenAI's `reasoning_effort` (the same as `reasoning.effort`), or the older
    `include_reasoning: true` (the default effort); with none asked, what a model
    that reasons unasked does (`Request.reasoning_unasked`)."""
    asked, effort = body.get("reasoning"), body.get("reasoning_effort")
    if asked is None and effort is None:
        on = body.get("include_reasoning")
        if on:
            return Reasoning(effort_tokens(None), asked_by="include_reasoning"), "default"
        return None, "default" if on is None else "hidden"
    by = "reasoning" if asked is not None else "reasoning_effort"
    asked = asked or {}
    if effort is not None:
        asked = {**asked, "effort": effort}
    if asked.get("enabled") is False or asked.get("effort") == "none":
        return None, "off"
    tokens = asked.get("max_tokens") or effort_tokens(asked.get("effort"))
    return Reasoning(tokens, exclude=bool(asked.get("exclude")), asked_by=by), "default"


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
    text, pictures, clips = content_text(content)
    if raw.get("images"):  # an earlier answer's images (OpenRouter's), seen again
        pictures += tuple(part["image_url"]["url"] for part in raw["images"])
    calls = tuple(
        ToolCall(
            id=c["id"], name=c["function"]["name"], arguments=c["function"].get("arguments", "")
        )
        for c in raw.get("tool_calls") or ()
    )
    message = Message(
        role=role,
        text=text,
        images=len(pictures),
        tool_calls=calls,
        tool_call_id=raw.get("tool_call_id"),
    )
    if pictures:
        message.pictures = pictures
    if clips:
        message.audio = clips
    if isinstance(content, list):  # parts may mark where a cached prefix ends
        message.cache_marks = cache_marks(content, TEXT_PARTS)
    return message


# The content parts whose text is the message's, in the chat and responses formats.
TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


def content_text(content: Any) -> tuple[str, tuple[str, ...], tuple[AudioClip, ...]]:
    """The text of a content field (a string or parts), its images (`picture_of` each)
    and its audio."""
    if content is None:
        return "", (), ()
    if isinstance(content, str):
        return content, (), ()
    texts, images, clips = [], [], []
    for part in content:
        kind = part.get("type")
        if kind in TEXT_PARTS:
            texts.append(part.get("text", ""))
        elif kind in ("file", "input_file"):  # a file's text, where it is read
            fields = (part.get("file") or {}) if kind == "file" else part
            said = file_text(fields.get("file_data"))
            texts += [said] if said else []
        elif kind in ("image_url", "input_image", "image"):
            images.append(picture_of(part))
        elif kind == "input_audio":
            sent = part["input_audio"]
            clips.append(audio.clip(sent["data"], sent["format"]))
    return "\n".join(texts), tuple(images), tuple(clips)


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
        choice = request.tool_choice
        body["tool_choice"] = (
            {"type": "function", "function": {"name": choice.name}}
            if isinstance(choice, ForcedTool)
            else choice
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
    if not request.parallel_tool_calls:
        body["parallel_tool_calls"] = False
    if request.reasoning is not None:  # the gateway wants it back: never `exclude`
        body["reasoning"] = {"max_tokens": request.reasoning.tokens}
    if request.logprobs is not None:
        body["logprobs"], body["top_logprobs"] = True, request.logprobs
    for key in ("seed", "temperature"):
        if getattr(request, key) is not None:
            body[key] = getattr(request, key)
    if request.images_out is not None:
        body |= image_output.wire_fields(request.images_out)
    if request.audio_out is not None:
        body |= audio_output.wire_fields(request.audio_out)
    return body


def _render_message(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.text}
    if m.images or m.audio:
        out["content"] = [{"type": "text", "text": m.text}]
        out["content"] += [{"type": "image_url", "image_url": {"url": p}} for p in pictures_of(m)]
        out["content"] += [audio.part(c) for c in m.audio]
    if m.tool_calls:
        out["tool_calls"] = [_render_call(c) for c in m.tool_calls]
        out["content"] = m.text or None
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    return out


def _render_call(c: ToolCall) -> dict[str, Any]:
    return {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}


def render_response(
    completions: list[Completion],
    *,
    id: str,
    model: str,
    created: int,
    extra: dict[str, Any],
    native: str | None = None,
    reasoning_style: str = "chat",
) -> dict[str, Any]:
    """A chat completion. `native`: the serving provider's format, whose words for the
    finish reasons the gateway's answer carries (`native_finish_reason`, as
    OpenRouter's); a provider's own answer has none. `reasoning_style`: the serving
    provider's format, whose vendor's shape `reasoning_details` take."""
    prompt = completions[0].input_tokens
    output = sum(c.output_tokens for c in completions)
    body = {
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
                **native_fields(native, c.finish_reason, c.stop_sequence),
                "logprobs": None if c.logprobs is None else logprobs_json(c.logprobs),
            }
            for i, c in enumerate(completions)
        ],
        "usage": usage(prompt, output, cache=completions[0].cache),
    }
    if completions[0].reasoning_tokens:  # the one look an answer without reasoning pays
        _add_reasoning(body, completions, reasoning_style)
    if completions[0].image_tokens:  # the one look an answer without images pays
        _add_images(body, completions)
    return body


def _add_images(body: dict[str, Any], completions: list[Completion]) -> None:
    """OpenRouter's `message.images` (after the message's other fields), and their
    tokens in usage."""
    for choice, c in zip(body["choices"], completions, strict=True):
        choice["message"]["images"] = [image_output.part(url) for url in c.images]
    images = sum(c.image_tokens for c in completions)
    body["usage"]["completion_tokens_details"]["image_tokens"] = images


def _add_reasoning(body: dict[str, Any], completions: list[Completion], style: str) -> None:
    """OpenRouter's `message.reasoning` and `reasoning_details` after `refusal` (not
    when excluded), and the reasoning's tokens in usage (excluded or not: they were
    written)."""
    for choice, c in zip(body["choices"], completions, strict=True):
        if c.reasoning is not None:
            message = choice["message"]
            head = {k: message[k] for k in ("role", "content", "refusal")}
            details = [reasoning_detail(c.reasoning, signature=True, style=style)]
            choice["message"] = {
                **head,
                "reasoning": c.reasoning,
                "reasoning_details": details,
                **message,
            }
    details = body["usage"]["completion_tokens_details"]
    details["reasoning_tokens"] = sum(c.reasoning_tokens for c in completions)


def parse_response(body: dict[str, Any]) -> list[Completion]:
    prompt = body["usage"]["prompt_tokens"]
    cache = cache_of(body["usage"].get("prompt_tokens_details"))
    choices = body["choices"]
    completions = []
    for index, choice in enumerate(choices):
        message = choice["message"]
        calls = tuple(
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls") or ()
        )
        output = split_total(body["usage"]["completion_tokens"], len(choices), index)
        reason = choice["finish_reason"]
        completion = Completion(message.get("content"), calls, reason, prompt, output)
        completion.cache = cache
        if choice.get("logprobs") is not None:
            completion.logprobs = entries_of(choice["logprobs"].get("content") or ())
        if "reasoning" in message:
            completion.reasoning = message["reasoning"]
            reasoning = detail_tokens(body["usage"], "reasoning_tokens")
            completion.reasoning_tokens = split_total(reasoning, len(choices), index)
        if message.get("images"):
            completion.images = tuple(i["image_url"]["url"] for i in message["images"])
            completion.image_tokens = split_total(
                detail_tokens(body["usage"], "image_tokens"), len(choices), index
            )
        completions.append(completion)
    return completions
