"""The messages wire format: a system string, content blocks, `stop_reason` (its
stream's events are `messages_events`')."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

from emulator.gateway import client_tools
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
from emulator.gateway.tokens import count_text
from emulator.gateway.web_search import is_search_tool, names_anthropic_tool
from emulator.gateway.wire.messages_content import (
    TEXT_BLOCKS,
    arguments_of,
    parse_message,
    render_message,
    system_marks,
    text_blocks,
    tool_input,
)

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
        "messages": [render_message(m) for m in request.messages if m.role != "system"],
        "stream": stream,
    }
    marks = system_marks(systems)
    if marks and system:  # blocks, to carry the breakpoints
        body["system"] = text_blocks(system, marks)
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
    description, schema = client_tools.described(raw)  # Anthropic's client tools' own
    return Tool(
        raw["name"],
        description,
        schema,
        cache_ttl=cache_ttl(control) if isinstance(control, dict) else None,
        index=index,
    )


def parse_request(body: dict[str, Any]) -> Request:
    messages: list[Message] = []
    system = body.get("system")
    if isinstance(system, list):
        text = "\n".join(b["text"] for b in system)
        messages.append(Message("system", text, cache_marks=cache_marks(system, TEXT_BLOCKS)))
    elif isinstance(system, str) and system:
        messages.append(Message("system", system))
    for raw in body["messages"]:
        messages += parse_message(raw)
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


def signature(thinking: str, shown: str | None = None) -> str:
    """A thinking block's signature: opaque to clients, made of the whole thinking's
    digest and a seal over it and the text the block shows (`shown`: all of it by
    default, "" when omitted), so that a block sent back with its text or its
    signature changed is known (`signed`), as Anthropic's API knows it."""
    whole = hashlib.sha256(thinking.encode()).digest()
    said = thinking if shown is None else shown
    return base64.b64encode(whole + _seal(whole, said)).decode()


def signed(shown: str, sig: str) -> bool:
    """Whether `sig` is the signature this emulator gave a block showing `shown`."""
    try:
        raw = base64.b64decode(sig, validate=True)
    except ValueError:
        return False
    return len(raw) == 64 and hmac.compare_digest(raw[32:], _seal(raw[:32], shown))


def _seal(whole: bytes, shown: str) -> bytes:
    return hashlib.sha256(whole + shown.encode()).digest()


def thinking_tokens(thinking: str) -> int:
    """This format's usage has no reasoning count: the thinking's tokens, counted."""
    return count_text(thinking, "messages")


def render_response(
    completion: Completion, *, id: str, model: str, omit_thinking: bool = False
) -> dict[str, Any]:
    """The whole message. `omit_thinking` (`thinking.display: "omitted"`): the thinking
    block keeps its signature, which stands for the whole thinking, but not its text."""
    content: list[dict[str, Any]] = []
    if completion.reasoning is not None:
        thought = completion.reasoning
        shown = "" if omit_thinking else thought
        sig = signature(thought, shown)
        content.append({"type": "thinking", "thinking": shown, "signature": sig})
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
