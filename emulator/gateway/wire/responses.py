"""The responses wire format: the request and the response (output items:
`responses_items`; stream events: `responses_events`)."""

from __future__ import annotations

import re
from typing import Any

from emulator.gateway import audio, image_output
from emulator.gateway.canonical import (
    EFFORT_TOKENS,
    CacheUse,
    Completion,
    ForcedTool,
    Message,
    Reasoning,
    Request,
    Tool,
    ToolCall,
    allowed_tools,
    effort_tokens,
)
from emulator.gateway.logprobs import entries_of
from emulator.gateway.server_tools import choice_after_server_tools
from emulator.gateway.wire.chat_parts import cache_of
from emulator.gateway.wire.responses_input import input_images, input_messages
from emulator.gateway.wire.responses_items import (
    IMAGE_ITEM,
    SHOWN,
    Shown,
    image_url,
    item_key,
    output_items,
)

# The `include` value that asks for the log probabilities of the answer's tokens.
LOGPROBS = "message.output_text.logprobs"


def parse_request(body: dict[str, Any]) -> Request:
    messages: list[Message] = []
    if body.get("instructions"):
        messages.append(Message("system", body["instructions"]))
    items = body["input"]
    if isinstance(items, str):
        messages.append(Message("user", items))
    else:
        messages += input_messages(items)
    tools = tuple(
        Tool(
            t["name"],
            t.get("description") or "",
            t.get("parameters") or {"type": "object"},
            index=index,
        )
        for index, t in enumerate(body.get("tools") or ())
        if t.get("type", "function") == "function"
    )
    choice = body.get("tool_choice", "auto") or "auto"
    if isinstance(choice, dict):
        if choice.get("type") == "allowed_tools":
            names = [t["name"] for t in choice["tools"]]
            tools, choice = allowed_tools(tools, names, choice["mode"], "tool_choice.tools")
        elif choice.get("type") == "function":
            choice = ForcedTool(choice["name"])
        else:  # OpenAI's image generation tool, forced: the gateway drew, the model writes
            choice = "none"
    choice = choice_after_server_tools(choice, tools, body)
    fmt = (body.get("text") or {}).get("format") or {}
    return Request(
        messages=tuple(messages),
        max_tokens=body.get("max_output_tokens"),
        tools=tools,
        tool_choice=choice,
        response_format=_format(fmt),
        seed=_seed(body.get("metadata")),
        temperature=body.get("temperature"),
        parallel_tool_calls=body.get("parallel_tool_calls") is not False,
        reasoning=_reasoning(body["reasoning"]) if "reasoning" in body else None,
        reasoning_unasked="off" if _effort(body) == "none" else "default",
        logprobs=_logprobs(body),
        images_out=image_output.asked(body),
    )


def _logprobs(body: dict[str, Any]) -> int | None:
    """`include` asks for log probabilities, `top_logprobs` how many alternatives."""
    return (body.get("top_logprobs") or 0) if LOGPROBS in (body.get("include") or ()) else None


# A budget that is no effort's travels as this emulator's `reasoning.max_tokens`.
_EFFORTS = {tokens: effort for effort, tokens in EFFORT_TOKENS.items()}


def _effort(body: dict[str, Any]) -> str | None:
    effort: str | None = (body.get("reasoning") or {}).get("effort")
    return effort


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


def _seed(metadata: Any) -> int | None:
    """The responses format has no `seed`: the emulator reads one from `metadata.seed`,
    a string of digits, as metadata values are strings."""
    seed = metadata.get("seed") if isinstance(metadata, dict) else None
    if isinstance(seed, str) and _SEED.fullmatch(seed):
        return int(seed)
    return None


_SEED = re.compile(r"-?[0-9]{1,20}")  # ASCII digits: every 64-bit seed chat sends


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


def render_request(request: Request, model: str, stream: bool = False) -> dict[str, Any]:
    system = [m.text for m in request.messages if m.role == "system"]
    body: dict[str, Any] = {"model": model, "input": [], "stream": stream}
    if system:
        body["instructions"] = "\n".join(system)
    for m in request.messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            output: str | list[dict[str, Any]] = m.text
            if m.images or m.audio:
                output = [{"type": "input_text", "text": m.text}, *input_images(m)]
                output += [audio.part(c) for c in m.audio]
            body["input"].append(
                {"type": "function_call_output", "call_id": m.tool_call_id, "output": output}
            )
            continue
        if m.text or m.images or m.audio or not m.tool_calls:
            kind = "output_text" if m.role == "assistant" else "input_text"
            parts: list[dict[str, Any]] = [{"type": kind, "text": m.text}]
            parts += input_images(m)
            parts += [audio.part(c) for c in m.audio]
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
            {"type": "function", "name": choice.name} if isinstance(choice, ForcedTool) else choice
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
        body["metadata"] = {"seed": str(request.seed)}  # metadata values are strings
    if not request.parallel_tool_calls:
        body["parallel_tool_calls"] = False
    if request.reasoning is not None:
        body["reasoning"] = _render_reasoning(request.reasoning)
    if request.logprobs is not None:
        body["include"], body["top_logprobs"] = [LOGPROBS], request.logprobs
    if request.images_out is not None:
        body |= image_output.wire_fields(request.images_out)
    return body


def request_echo(body: dict[str, Any]) -> dict[str, Any]:
    """What a Response object repeats of the request that made it (the SDK's `Response`
    requires `tools`, `tool_choice` and `parallel_tool_calls`), with the API's defaults
    for what was not sent. `store`: whether its output items were kept (`stored_items`)."""
    return {
        "background": body.get("background") is True,
        # OpenRouter's responses object requires these two (nullable) as well.
        "frequency_penalty": body.get("frequency_penalty"),
        "presence_penalty": body.get("presence_penalty"),
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": body.get("max_tool_calls"),
        "metadata": body.get("metadata") or {},
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "service_tier": "default",
        "store": body.get("store") is not False,
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": [_tool_echo(tool) for tool in body.get("tools") or ()],
        "top_p": body.get("top_p", 1.0),
        "prompt_cache_key": body.get("prompt_cache_key"),
        "safety_identifier": body.get("safety_identifier"),
        "top_logprobs": body.get("top_logprobs", 0),
        "truncation": body.get("truncation", "disabled"),
        "user": body.get("user"),
    }


def _tool_echo(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool as the response lists it: a function's defaults filled in; the built-in
    search tools with OpenAI's default context size, never a function's fields."""
    if tool.get("type") == "function":
        return {"description": None, "parameters": None, "strict": True, **tool}
    if tool.get("type") in ("web_search", "web_search_preview"):
        return {"search_context_size": "medium", **tool}
    if tool.get("type") == "image_generation":
        return IMAGE_TOOL_DEFAULTS | tool
    return tool


# OpenAI's image generation tool as a response lists it: its defaults filled in.
IMAGE_TOOL_DEFAULTS = {
    "type": "image_generation",
    "background": "auto",
    "moderation": "auto",
    "output_compression": 100,
    "output_format": "png",
    "partial_images": 0,
    "quality": "auto",
    "size": "auto",
}


def usage(
    input_tokens: int,
    output_tokens: int,
    reasoning: int = 0,
    cache: CacheUse | None = None,
    images: int = 0,
) -> dict[str, Any]:
    """`input_tokens` counts the cached tokens too (`cache`: those read and written);
    `images`: the generated images' tokens of `output_tokens`, said only when there are
    some (as chat's `completion_tokens_details.image_tokens`)."""
    read, written = (cache.read, cache.written) if cache is not None else (0, 0)
    details = {"reasoning_tokens": reasoning} | ({"image_tokens": images} if images else {})
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": read, "cache_write_tokens": written},
        "output_tokens": output_tokens,
        "output_tokens_details": details,
        "total_tokens": input_tokens + output_tokens,
    }


def render_response(
    completion: Completion,
    *,
    id: str,
    model: str,
    created: int,
    extra: dict[str, Any] | None = None,
    shown: Shown = SHOWN,
) -> dict[str, Any]:
    incomplete = completion.finish_reason == "length"
    return {
        "id": id,
        "object": "response",
        "created_at": created,
        "completed_at": None if incomplete else created,  # answered at once
        "status": "incomplete" if incomplete else "completed",
        "model": model,
        **(extra or {}),
        "output": output_items(completion, item_key(id), shown),
        "output_text": completion.text or "",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "error": None,
        "usage": usage(
            completion.input_tokens,
            completion.output_tokens,
            completion.reasoning_tokens,
            completion.cache,
            completion.image_tokens,
        ),
    }


def parse_response(body: dict[str, Any]) -> list[Completion]:
    texts, calls, thoughts, entries, images = [], [], [], [], []
    reasoned = False
    for item in body["output"]:
        if item["type"] == "reasoning":
            reasoned = True
            thoughts += [part["text"] for part in item["summary"]]
        elif item["type"] == "message":
            parts = [p for p in item["content"] if p["type"] == "output_text"]
            texts += [p["text"] for p in parts]
            entries += [logprob for p in parts for logprob in p.get("logprobs") or ()]
        elif item["type"] == "function_call":
            calls.append(ToolCall(item["call_id"], item["name"], item["arguments"]))
        elif item["type"] == IMAGE_ITEM:
            images.append(image_url(item))
    reason = "length" if body["status"] == "incomplete" else ("tool_calls" if calls else "stop")
    usage_ = body["usage"]
    text = "".join(texts) if texts or not (calls or images) else None
    done = Completion(text, tuple(calls), reason, usage_["input_tokens"], usage_["output_tokens"])  # type: ignore[arg-type]
    done.cache = cache_of(usage_.get("input_tokens_details"))
    if reasoned:
        done.reasoning = "".join(thoughts)
        done.reasoning_tokens = usage_["output_tokens_details"]["reasoning_tokens"]
    if entries:  # an answer without any says nothing of whether they were asked for
        done.logprobs = entries_of(entries)
    if images:
        done.images = tuple(images)
        done.image_tokens = usage_["output_tokens_details"].get("image_tokens", 0)
    return [done]
