"""What the fake providers say: deterministic, plausible, and valid where it must be.

- `emulator/echo` replies with the last user text.
- A message containing `[emulator:tokens=N]` gets an answer of exactly N tokens
  (before `max_tokens`), for tests and benchmarks of long answers.
- With tools: `tool_choice` `required` or a named tool always calls one;
  `auto` calls the first tool when the last message is the user's; after a
  tool result the answer refers to that result. Arguments validate against
  the tool's JSON schema.
- `response_format` `json_schema` gets JSON valid against the schema;
  `json_object` gets a JSON object.
- Otherwise a few sentences about the words of the last user message.
`max_tokens` cuts the answer (finish `length`); a `stop` string ends it.
"""

from __future__ import annotations

import json
import random
import re

from emulator.gateway.canonical import Completion, FinishReason, Message, Request, ToolCall
from emulator.gateway.catalog import ScriptedReply
from emulator.gateway.schema_values import WORDS, value_for
from emulator.gateway.tokens import count_messages, count_text, truncate
from emulator.ids import LazyRng

_TOKENS_DIRECTIVE = re.compile(r"\[emulator:tokens=(\d{1,6})\]")
_STOPWORDS = frozenset(
    [
        "about",
        "above",
        "after",
        "again",
        "also",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "could",
        "does",
        "doing",
        "during",
        "each",
        "from",
        "further",
        "have",
        "having",
        "here",
        "into",
        "itself",
        "just",
        "more",
        "most",
        "once",
        "only",
        "other",
        "over",
        "same",
        "should",
        "some",
        "such",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "under",
        "until",
        "very",
        "what",
        "when",
        "where",
        "which",
        "while",
        "with",
        "would",
        "your",
        "yours",
        "please",
        "tell",
        "explain",
        "write",
        "give",
        "make",
        "know",
        "like",
        "want",
        "need",
    ]
)
OPENERS = (
    "Here is a short answer about {a}.",
    "Good question about {a}.",
    "Let's look at {a} step by step.",
    "In short, {a} comes down to a few ideas.",
)
BODY = (
    "The key idea is that {a} depends on {b}.",
    "In practice, {a} works best when {b} stays simple.",
    "A common mistake is to treat {a} and {b} as the same thing.",
    "Start with {a}, then check how it affects {b}.",
    "Most teams measure {a} before they change {b}.",
    "It helps to write down what you expect from {a} first.",
    "When {b} changes, revisit your assumptions about {a}.",
    "A small example makes {a} much easier to reason about.",
)
CLOSERS = (
    "Let me know if you want more detail on {a}.",
    "I hope this helps with {a}.",
    "That should be enough to get started with {a}.",
)


def generate(
    model: str,
    request: Request,
    family: str,
    lazy: LazyRng,
    replies: tuple[ScriptedReply, ...] = (),
) -> Completion:
    input_tokens = prompt_tokens(request, family)
    calls = _tool_calls(request, lazy)
    if calls:
        arguments = sum(count_text(c.name + c.arguments, family) for c in calls)
        if request.max_tokens is not None and arguments > request.max_tokens:
            return _cut_call(calls[0], family, request.max_tokens, input_tokens)
        return Completion(None, calls, "tool_calls", input_tokens, arguments)
    text = _scripted(model, request, replies) or _text(model, request, family, lazy)
    finish: FinishReason = "stop"
    for stop in request.stop:
        if stop and stop in text:
            text = text[: text.index(stop)]
    if request.max_tokens is None:
        return Completion(text, (), finish, input_tokens, count_text(text, family))
    # Cut at a token's end, the text counts as many tokens as `truncate` says.
    text, output_tokens, cut = truncate(text, family, request.max_tokens)
    return Completion(text, (), "length" if cut else finish, input_tokens, output_tokens)


def _cut_call(call: ToolCall, family: str, max_tokens: int, input_tokens: int) -> Completion:
    """A tool call that ran out of tokens, as a real model's does: its name, the start
    of its arguments (not valid JSON), finish `length`, and exactly `max_tokens` spent."""
    room = max(max_tokens - count_text(call.name, family), 0)
    arguments = truncate(call.arguments, family, room)[0]
    return Completion(
        None, (ToolCall(call.id, call.name, arguments),), "length", input_tokens, max_tokens
    )


def _scripted(model: str, request: Request, replies: tuple[ScriptedReply, ...]) -> str | None:
    last = request.messages[-1] if request.messages else None
    if last is None or last.role != "user" or request.response_format:
        return None
    return next((r.reply for r in replies if r.answers(model, last.text.strip())), None)


def prompt_tokens(request: Request, family: str) -> int:
    """The prompt's tokens in a tokenizer family: the messages and the tools' definitions."""
    return count_messages(request.messages, family, extra=tools_text(request))


def tools_text(request: Request) -> str:
    return "".join(json.dumps(t.parameters, sort_keys=True) + t.name for t in request.tools)


def _tool_calls(request: Request, lazy: LazyRng) -> tuple[ToolCall, ...]:
    if not request.tools or request.tool_choice == "none" or request.response_format:
        return ()
    last = request.messages[-1]
    named = [t for t in request.tools if t.name == request.tool_choice]
    if named:
        tool = named[0]
    elif request.tool_choice == "required" or (
        request.tool_choice == "auto" and last.role == "user"
    ):
        tool = request.tools[0]
    else:
        return ()
    rng = lazy()
    arguments = json.dumps(value_for(tool.parameters, rng), separators=(",", ":"))
    return (ToolCall(id=f"call_{rng.getrandbits(64):016x}", name=tool.name, arguments=arguments),)


def _text(model: str, request: Request, family: str, lazy: LazyRng) -> str:
    last_user = next((m for m in reversed(request.messages) if m.role == "user"), None)
    prompt = last_user.text if last_user else ""
    fmt = request.response_format or {}
    if fmt.get("type") == "json_schema":
        return json.dumps(value_for(fmt.get("schema") or {}, lazy()))
    if fmt.get("type") == "json_object":
        a, b = _topics(prompt, lazy())
        return json.dumps({"answer": f"{a} depends on {b}", "topic": a, "confidence": 0.8})
    last = request.messages[-1]
    if last.role == "tool":
        return _after_tool(request.messages, last)
    if model == "emulator/echo":
        return prompt
    wanted = _TOKENS_DIRECTIVE.search(prompt)
    if wanted:
        return _exactly(int(wanted.group(1)), family, prompt, lazy())
    rng = lazy()
    return _sentences(prompt, rng, rng.randint(3, 6))


def _after_tool(messages: tuple[Message, ...], result: Message) -> str:
    name = next(
        (c.name for m in messages for c in m.tool_calls if c.id == result.tool_call_id), "the tool"
    )
    snippet = result.text if len(result.text) <= 200 else result.text[:200] + "..."
    return f"According to {name}, the result is: {snippet}. Let me know what you would like next."


def _topics(prompt: str, rng: random.Random) -> tuple[str, str]:
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", prompt)]
    words = [w for w in words if w not in _STOPWORDS] or list(WORDS)
    a = rng.choice(words)
    others = [w for w in words if w != a] or list(WORDS)
    return a, rng.choice(others)


def _sentences(prompt: str, rng: random.Random, count: int) -> str:
    a, b = _topics(prompt, rng)
    parts = [rng.choice(OPENERS).format(a=a)]
    parts += [rng.choice(BODY).format(a=a, b=b) for _ in range(count - 2)]
    parts.append(rng.choice(CLOSERS).format(a=a))
    return " ".join(parts)


def _exactly(tokens: int, family: str, prompt: str, rng: random.Random) -> str:
    text = ""
    while count_text(text, family) < tokens:
        text = (text + " " + _sentences(prompt, rng, 4)).strip()
    return truncate(text, family, tokens)[0]
