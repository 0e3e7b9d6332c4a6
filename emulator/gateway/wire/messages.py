"""The messages wire format: a system string, content blocks, `stop_reason` (its
stream's events are `messages_events`')."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from emulator.gateway import native_search
from emulator.gateway.canonical import (
    CacheMark,
    CacheUse,
    Completion,
    FinishReason,
    ForcedTool,
    Message,
    Reasoning,
    Request,
    Tool,
    ToolCall,
    breakpoint_ttls,
    cache_control,
    cache_marks,
    cache_ttl,
    check_breakpoints,
    effort_tokens,
    merged_marks,
)
from emulator.gateway.server_tools import choice_after_server_tools, is_server_tool
from emulator.gateway.sources import as_text
from emulator.gateway.tokens import count_text
from emulator.gateway.web_search import is_search_tool, names_anthropic_tool
from emulator.gateway.wire.image_refs import picture_of, pictures_of

STOP_REASONS: dict[str, str] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
}
FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
}
DEFAULT_MAX_TOKENS = 4096  # the format requires one


def render_request(request: Request, model: str, stream: bool = False) -> dict[str, Any]:
    systems = [m for m in request.messages if m.role == "system"]
    system = "\n".join(m.text for m in systems)
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": [_render(m) for m in request.messages if m.role != "system"],
        "stream": stream,
    }
    marks = _system_marks(systems)
    if marks and system:  # blocks, to carry the breakpoints
        body["system"] = _text_blocks(system, marks)
    elif system:
        body["system"] = system
    if request.tools:
        body["tools"] = [_render_tool(t) for t in request.tools]
        choice = request.tool_choice
        body["tool_choice"] = (
            {"type": "tool", "name": choice.name}
            if isinstance(choice, ForcedTool)
            else {"type": {"required": "any"}.get(choice, choice)}
        )
        if not request.parallel_tool_calls:
            body["tool_choice"]["disable_parallel_tool_use"] = True
    if request.response_format:  # this format's structured output: a schema, no name
        fmt = request.response_format
        body["output_config"] = {"format": {k: v for k, v in fmt.items() if k != "name"}}
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    for key in ("temperature",):
        if getattr(request, key) is not None:
            body[key] = getattr(request, key)
    if request.seed is not None:
        body["metadata"] = {"seed": request.seed}
    if request.reasoning is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": request.reasoning.tokens}
    return body


def _render_tool(tool: Tool) -> dict[str, Any]:
    rendered = {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
    if tool.cache_ttl is not None:
        rendered["cache_control"] = cache_control(tool.cache_ttl)
    return rendered


def _tool(raw: dict[str, Any], index: int) -> Tool:
    control = raw.get("cache_control")
    return Tool(
        raw["name"],
        raw.get("description", ""),
        raw.get("input_schema", {}),
        cache_ttl=cache_ttl(control) if isinstance(control, dict) else None,
        index=index,
    )


def _system_marks(systems: list[Message]) -> tuple[CacheMark, ...]:
    """The system messages' breakpoints, in their texts joined by newlines."""
    marks: list[CacheMark] = []
    start = 0
    for message in systems:
        marks += (CacheMark(start + mark.offset, mark.ttl) for mark in message.cache_marks)
        start += len(message.text) + 1
    return tuple(marks)


def _text_blocks(text: str, marks: tuple[CacheMark, ...]) -> list[dict[str, Any]]:
    """A text as blocks that end at its breakpoints, each carrying its `cache_control`
    (the newline between two parts is the blocks' own join)."""
    blocks: list[dict[str, Any]] = []
    start = 0
    for mark in marks:
        # A block ends where a part did (at a newline, or the end): a breakpoint anywhere
        # else (none before any text) cannot be said as blocks that join back the same.
        if mark.offset <= start or text[mark.offset : mark.offset + 1] not in ("\n", ""):
            continue
        piece = text[start : mark.offset]
        blocks.append({"type": "text", "text": piece, "cache_control": cache_control(mark.ttl)})
        start = mark.offset + 1
    if start < len(text) or (text and not blocks):
        blocks.append({"type": "text", "text": text[start:]})
    return blocks


def _render(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": m.tool_call_id,
            "content": m.text,
        }
        if m.images:  # a screenshot a tool returned, as blocks of the result
            block["content"] = [{"type": "text", "text": m.text}, *_images(m)]
        if m.cache_marks:
            block["cache_control"] = cache_control(m.cache_marks[-1].ttl)
        return {"role": "user", "content": [block]}
    blocks: list[dict[str, Any]] = []
    if m.cache_marks:
        blocks += _text_blocks(m.text, m.cache_marks)
    elif m.text:
        blocks.append({"type": "text", "text": m.text})
    blocks += _images(m)
    blocks += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": tool_input(c.arguments)}
        for c in m.tool_calls
    ]
    if not m.text and m.cache_marks and blocks:  # no text to end at: the last block is marked
        blocks[-1] = {**blocks[-1], "cache_control": cache_control(m.cache_marks[-1].ttl)}
    return {"role": m.role, "content": blocks}


def tool_input(arguments: str) -> Any:
    """A call's arguments as this format's `input` object. Arguments that are not JSON
    (a call cut at `max_tokens`, or sent back so by a client) are `{}`: `input` cannot
    carry half an object."""
    try:
        return json.loads(arguments or "{}")
    except (ValueError, RecursionError):
        return {}


def arguments_of(tool_input: Any) -> str:
    """A tool call's arguments from this format's `input` object, written as a JSON
    string as OpenRouter writes them for the other formats: compact, letters unescaped."""
    return json.dumps(tool_input, separators=(",", ":"), ensure_ascii=False)


def parse_request(body: dict[str, Any]) -> Request:
    messages: list[Message] = []
    system = body.get("system")
    if isinstance(system, list):
        text = "\n".join(b["text"] for b in system)
        messages.append(Message("system", text, cache_marks=cache_marks(system, _TEXT)))
    elif isinstance(system, str) and system:
        messages.append(Message("system", system))
    for raw in body["messages"]:
        messages += _parse_message(raw)
    top = body.get("cache_control")
    if isinstance(top, dict) and messages:  # a breakpoint at the end of the last message
        last = messages[-1]
        last.cache_marks = merged_marks(
            (*last.cache_marks, CacheMark(len(last.text), cache_ttl(top)))
        )
    tools = tuple(
        _tool(t, index)
        for index, t in enumerate(body.get("tools", ()))
        if not is_search_tool(t) and not is_server_tool(t)  # the gateway's to run
    )
    ttls = breakpoint_ttls(tools, messages)
    if ttls:  # at most four, an hour's first, as Anthropic's API checks them
        check_breakpoints(ttls, "messages")
    kind = body.get("tool_choice", {}).get("type", "auto")
    choice: str | ForcedTool = {"any": "required"}.get(kind, kind)
    if kind == "tool":
        named = body["tool_choice"]
        # Naming the search or fetch tool is its call, then the answer.
        choice = "auto" if names_anthropic_tool(named, body) else ForcedTool(named["name"])
    choice = choice_after_server_tools(choice, tools, body)
    reasoning, unasked = _reasoning(body.get("thinking"))
    fmt, field = body.get("output_format"), "output_format"
    if fmt is None:
        fmt, field = (body.get("output_config") or {}).get("format"), "output_config.format"
    return Request(
        messages=tuple(messages),
        max_tokens=body["max_tokens"],
        tools=tools,
        tool_choice=choice,
        response_format=_format(fmt),
        format_field=field,
        stop=tuple(body.get("stop_sequences", ())),
        seed=body.get("metadata", {}).get("seed"),
        temperature=body.get("temperature"),
        parallel_tool_calls=not body.get("tool_choice", {}).get("disable_parallel_tool_use"),
        reasoning=reasoning,
        reasoning_unasked=unasked,
    )


def _format(fmt: dict[str, Any] | None) -> dict[str, Any] | None:
    """`output_config.format` (or the older `output_format`) in the canonical shape,
    whose schemas have a name (the other formats send one; this one has none)."""
    if fmt is None:
        return None
    return {"name": "output", **fmt} if fmt.get("type") == "json_schema" else fmt


def _reasoning(thinking: dict[str, Any] | None) -> tuple[Reasoning | None, str]:
    """The reasoning asked for and what a model that reasons unasked does
    (`Request.reasoning_unasked`), as chat's `_reasoning` says them: `enabled` with its
    budget; Anthropic's `adaptive` (the model decides how much): the default effort's
    budget; `disabled` also switches off a model that reasons unasked, as chat's
    `reasoning.enabled: false` does."""
    kind = None if thinking is None else thinking.get("type")
    if kind == "adaptive":
        return Reasoning(effort_tokens(None)), "default"
    if kind == "enabled" and thinking is not None:
        return Reasoning(thinking["budget_tokens"]), "default"
    return None, "off" if kind == "disabled" else "default"


def signature(thinking: str) -> str:
    """A thinking block's signature: opaque to clients, derived from its text."""
    return base64.b64encode(hashlib.sha256(thinking.encode()).digest()).decode()


def thinking_tokens(thinking: str) -> int:
    """This format's usage has no reasoning count: the thinking's tokens, counted."""
    return count_text(thinking, "messages")


def _parse_message(raw: dict[str, Any]) -> list[Message]:
    content = raw["content"]
    if isinstance(content, str):
        return [Message(raw["role"], content)]
    content = [_readable(b) for b in content]
    results = [b for b in content if b["type"] == "tool_result"]
    if results:  # the results, then what the turn says beside them (a user's words)
        said = [b for b in content if b["type"] != "tool_result"]
        return [_tool_result(b) for b in results] + (
            _parse_message({**raw, "content": said}) if said else []
        )
    pictures = tuple(picture_of(b) for b in content if b["type"] == "image")
    return [
        Message(
            role=raw["role"],
            text="\n".join(b["text"] for b in content if b["type"] == "text"),
            images=len(pictures),
            pictures=pictures,
            tool_calls=tuple(
                ToolCall(b["id"], b["name"], arguments_of(b["input"]))
                for b in content
                if b["type"] == "tool_use"
            ),
            cache_marks=cache_marks(content, _TEXT),
        )
    ]


_TEXT = frozenset({"text"})


def _readable(block: dict[str, Any]) -> dict[str, Any]:
    """A search result or a document is read as the text of it (`sources.as_text`), its
    breakpoint kept; a document with no text read (a URL, a file id) stays as it is. So
    are a web search's blocks sent back (`native_search.read_back`)."""
    kind = block.get("type")
    said = as_text(block) if kind in ("search_result", "document") else ""
    if kind in native_search.BLOCKS:  # a web search sent back (Anthropic's tool)
        said = native_search.read_back(block)
    if not said:
        return block
    text = {"type": "text", "text": said}
    return text | ({"cache_control": block["cache_control"]} if "cache_control" in block else {})


def _images(m: Message) -> list[dict[str, Any]]:
    """A message's images as image blocks: each as sent (`Message.pictures`), else empty."""
    return [{"type": "image", "source": _source(p)} for p in pictures_of(m)]


def _source(picture: str) -> dict[str, Any]:
    if picture.startswith("data:"):
        media_type, _, data = picture[5:].partition(";base64,")
        return {"type": "base64", "media_type": media_type, "data": data}
    if picture.startswith("file:"):
        return {"type": "file", "file_id": picture[5:]}
    return {"type": "url", "url": picture}


def _tool_result(block: dict[str, Any]) -> Message:
    content = block.get("content") or ""  # optional: a result may say nothing
    if isinstance(content, list):
        content = [_readable(b) for b in content]
    text = _block_text(content)
    message = Message("tool", text, tool_call_id=block["tool_use_id"])
    if isinstance(content, list):  # its own blocks may mark where a prefix ends
        message.cache_marks = cache_marks(content, _TEXT)
        message.pictures = tuple(picture_of(b) for b in content if b.get("type") == "image")
        message.images = len(message.pictures)
    control = block.get("cache_control")
    if control:  # a breakpoint at the result's end
        mark = CacheMark(len(text), cache_ttl(control))
        message.cache_marks = merged_marks((*message.cache_marks, mark))
    return message


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text") or "" for b in content if b.get("type") == "text")


def render_response(
    completion: Completion, *, id: str, model: str, omit_thinking: bool = False
) -> dict[str, Any]:
    """The whole message. `omit_thinking` (`thinking.display: "omitted"`): the thinking
    block keeps its signature, which stands for the whole thinking, but not its text."""
    content: list[dict[str, Any]] = []
    if completion.reasoning is not None:
        thought = completion.reasoning
        shown = "" if omit_thinking else thought
        content.append({"type": "thinking", "thinking": shown, "signature": signature(thought)})
    if completion.text:  # no empty text block, as the stream opens none
        content.append({"type": "text", "text": completion.text})
    content += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": tool_input(c.arguments)}
        for c in completion.tool_calls
    ]
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason_of(completion.finish_reason, completion.stop_sequence),
        "stop_sequence": completion.stop_sequence,
        "usage": usage_of(completion.input_tokens, completion.output_tokens, completion.cache),
    }


def stop_reason_of(reason: FinishReason, stop_sequence: str | None) -> str:
    return "stop_sequence" if stop_sequence is not None else STOP_REASONS[reason]


def usage_of(prompt: int, output: int, cache: CacheUse | None) -> dict[str, Any]:
    """This format's `input_tokens` are those neither read from the cache nor written
    to it; the cache's come apart (the hour's writes apart again)."""
    cache = cache or CacheUse()
    return {
        "input_tokens": prompt - cache.read - cache.written,
        "cache_creation_input_tokens": cache.written,
        "cache_read_input_tokens": cache.read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache.written - cache.written_1h,
            "ephemeral_1h_input_tokens": cache.written_1h,
        },
        "output_tokens": output,
    }


def prompt_of(usage: dict[str, Any]) -> tuple[int, CacheUse | None]:
    """The prompt's tokens (the cache's included, as the other formats count them) and
    the cache's use, from this format's usage."""
    read = usage.get("cache_read_input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    hour = (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0
    cache = CacheUse(read, written, hour) if read or written else None
    return usage["input_tokens"] + read + written, cache


def parse_response(body: dict[str, Any]) -> list[Completion]:
    texts = [b["text"] for b in body["content"] if b["type"] == "text"]
    calls = tuple(
        ToolCall(b["id"], b["name"], arguments_of(b["input"]))
        for b in body["content"]
        if b["type"] == "tool_use"
    )
    usage = body["usage"]
    text = "".join(texts) if texts or not calls else None
    prompt, cache = prompt_of(usage)
    done = Completion(text, calls, FINISH[body["stop_reason"]], prompt, usage["output_tokens"])
    done.cache, done.stop_sequence = cache, body.get("stop_sequence")
    thoughts = [b["thinking"] for b in body["content"] if b["type"] == "thinking"]
    if thoughts:
        done.reasoning = "".join(thoughts)
        done.reasoning_tokens = thinking_tokens(done.reasoning)
    return [done]
