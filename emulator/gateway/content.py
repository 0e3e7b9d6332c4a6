"""What the fake providers say: deterministic, plausible, and valid where it must be.

- `emulator/echo` replies with the last user text.
- A message containing `[emulator:tokens=N]` gets an answer of exactly N tokens
  (before `max_tokens`), for tests and benchmarks of long answers.
- With tools: `tool_choice` `required` or a named tool always calls one;
  `auto` calls one when the last message is the user's: the tool the message
  is about (`tool_pick`), once for each name the user gave (in parallel,
  unless `parallel_tool_calls` is false); after tool results the answer
  refers to each of them (but a handoff's). Arguments validate against the
  tool's JSON schema and take what the user said where it fits
  (`prompt_hints`).
- A scripted reply (fixtures/replies.yaml) whose pattern matches the last user
  message answers with its text, or makes its tool calls (all of them, or
  the first when `parallel_tool_calls` is false) when the request offers
  every tool it names and `tool_choice` allows them; a text reply answers
  where `auto` would call a tool, and gives way only to a call demanded.
- `response_format` `json_schema` gets JSON valid against the schema;
  `json_object` gets a JSON object.
- Small talk ("hi", "thanks", "bye") gets a short reply in kind, and no tool call
  under `auto` (`small_talk`).
- Otherwise a few sentences about the words of the last user message.
- Reasoning, when asked for (`thinking.py`), comes before any of these and
  counts within `max_tokens`; the answer after it is the same as without it.
- Log probabilities, when asked for (`logprobs.py`), are drawn for the text
  once it is cut; the text is the same as without them.
`max_tokens` cuts the answer (finish `length`); a `stop` string ends it.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace

from emulator.gateway import (
    audio_output,
    image_output,
    image_sources,
    json_mode,
    logprobs,
    server_tools,
    small_talk,
    web_search,
)
from emulator.gateway.answer_topics import Topics
from emulator.gateway.canonical import Completion, ForcedTool, Message, Request, Tool, ToolCall
from emulator.gateway.pattern_search import match_budget
from emulator.gateway.prompt_facts import Facts
from emulator.gateway.prompt_hints import names_taken
from emulator.gateway.schema_values import value_for
from emulator.gateway.scripted import RULES_BUDGET_S, ScriptedReply
from emulator.gateway.stops import first_stop
from emulator.gateway.thinking import think
from emulator.gateway.tokens import count_messages, count_text, truncate
from emulator.gateway.tool_pick import likeliest
from emulator.ids import LazyRng, tool_call_id

# The tools of agent handoffs (the Agents SDK's and LangGraph's `transfer_to_<agent>`).
HANDOFF = "transfer_to_"
MAX_CALLS = 8  # parallel calls of a generated answer: one a name the user gave, at most
_TOKENS_DIRECTIVE = re.compile(r"\[emulator:tokens=(\d{1,6})\]")
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
    images, sound = request.images_out, request.audio_out
    if sound is not None and request.max_tokens is not None:  # the sound's tokens count too
        request = request.with_max_tokens(audio_output.text_budget(request.max_tokens))
    if images is not None and not images.text:  # `modalities: ["image"]`: no text
        completion = Completion(None, (), "stop", prompt_tokens(request, family), 0)
    elif request.reasoning is not None:
        completion = _reasoned(model, request, family, lazy, replies)
    else:
        completion = _answer(model, request, family, lazy, replies)
    if images is not None and not completion.tool_calls:
        source = image_sources.last_source(request.messages)  # edited, when there is one
        image_output.attach(completion, images, lazy, source, model)
    if sound is not None and not completion.tool_calls:
        spoken = completion.output_tokens - completion.reasoning_tokens
        audio_output.attach(completion, sound, spoken)
    if request.logprobs is not None:  # drawn apart: asking leaves the answer as it was
        text = completion.text or ""
        rng = lazy.fork(f"logprobs:{text}")  # keyed by the text too: each of `n` its own
        completion.logprobs = logprobs.draw(text, family, rng, request.logprobs)
    return completion


def _answer(
    model: str, request: Request, family: str, lazy: LazyRng, replies: tuple[ScriptedReply, ...]
) -> Completion:
    input_tokens = prompt_tokens(request, family)
    rule = _scripted(model, request, replies)
    if rule is not None and rule.tool_calls:
        calls = _scripted_calls(rule, request, family, lazy)
    elif rule is not None and request.tool_choice in ("auto", "none"):
        calls = ()  # a scripted text, which `auto` lets the model say instead of a call
    else:
        calls = _tool_calls(request, family, lazy)
    if calls:
        return _called(calls, family, request.max_tokens, input_tokens)
    scripted = rule.reply if rule is not None else None
    # `is None`, not `or`: a scripted "" is an empty answer, not a generated one.
    text = scripted if scripted is not None else _text(model, request, family, lazy)
    found = first_stop(text, request.stop) if request.stop else None
    if found is not None:  # it stops there if it writes the whole stop within max_tokens
        start, stop = found
        limit = request.max_tokens
        if limit is None or count_text(text[: start + len(stop)], family) <= limit:
            kept = text[:start]
            output = count_text(kept, family)
            return Completion(kept, (), "stop", input_tokens, output, stop_sequence=stop)
    if request.max_tokens is None:
        return Completion(text, (), "stop", input_tokens, count_text(text, family))
    # Cut at a token's end, the text counts as many tokens as `truncate` says.
    text, output_tokens, cut = truncate(text, family, request.max_tokens)
    return Completion(text, (), "length" if cut else "stop", input_tokens, output_tokens)


def _reasoned(
    model: str, request: Request, family: str, lazy: LazyRng, replies: tuple[ScriptedReply, ...]
) -> Completion:
    """Reasoning first, then the answer in what `max_tokens` leaves: reaching the limit
    while reasoning ends with finish `length` and empty content."""
    assert request.reasoning is not None
    rng = lazy.fork("reasoning")
    topics = Topics(_last_user_text(request.messages)).pair(rng)
    limit = request.max_tokens
    reasoning = think(topics, rng, request.reasoning.tokens, family, enough=limit)
    spent = count_text(reasoning, family)
    if limit is not None and spent >= limit:
        reasoning, spent, _ = truncate(reasoning, family, limit)
        return Completion("", (), "length", prompt_tokens(request, family), spent, reasoning, spent)
    rest = replace(request, reasoning=None, max_tokens=None if limit is None else limit - spent)
    answer = _answer(model, rest, family, lazy, replies)
    answer.output_tokens += spent
    answer.reasoning, answer.reasoning_tokens = reasoning, spent
    return answer


def _last_user_text(messages: tuple[Message, ...]) -> str:
    last_user = next((m for m in reversed(messages) if m.role == "user"), None)
    return last_user.text if last_user else ""


def _called(
    calls: tuple[ToolCall, ...], family: str, max_tokens: int | None, input_tokens: int
) -> Completion:
    """An answer of tool calls: each costs the tokens of its name and arguments."""
    counts = [count_text(c.name + c.arguments, family) for c in calls]
    spent = sum(counts)
    if max_tokens is None or spent <= max_tokens:
        return Completion(None, calls, "tool_calls", input_tokens, spent)
    return _cut_calls(calls, counts, family, max_tokens, input_tokens)


def _cut_calls(
    calls: tuple[ToolCall, ...], counts: list[int], family: str, max_tokens: int, input_tokens: int
) -> Completion:
    """Tool calls that ran out of tokens, as a real model's do: the calls that fit, then
    the name and the start of the arguments (not valid JSON) of the one that did not;
    finish `length`, and exactly `max_tokens` spent."""
    kept: list[ToolCall] = []
    used = 0
    for call, count in zip(calls, counts, strict=True):
        if used + count > max_tokens:
            room = max(max_tokens - used - count_text(call.name, family), 0)
            kept.append(ToolCall(call.id, call.name, truncate(call.arguments, family, room)[0]))
            break
        kept.append(call)
        used += count
    return Completion(None, tuple(kept), "length", input_tokens, max_tokens)


def _scripted(
    model: str, request: Request, replies: tuple[ScriptedReply, ...]
) -> ScriptedReply | None:
    """The first scripted reply for this request: its pattern matches the last user
    message, its `models` the model, and the request allows the tool calls it makes."""
    last = request.messages[-1] if request.messages else None
    if last is None or last.role != "user" or request.response_format:
        return None
    text = last.text.strip()
    with match_budget(RULES_BUDGET_S):  # all rules together: a slow one cannot hold us
        for rule in replies:
            # The cheap check first: a pattern search costs about a microsecond.
            if (not rule.tool_calls or _allows(request, rule)) and rule.answers(model, text):
                return rule
    return None


def _allows(request: Request, rule: ScriptedReply) -> bool:
    """Whether the request offers every tool the rule calls, and `tool_choice` lets it
    call them: not `none`, and a named tool only if the rule calls that tool alone."""
    choice = request.tool_choice
    if choice == "none":
        return False
    named = {name for name, _ in rule.tool_calls}
    if isinstance(choice, ForcedTool) and named != {choice.name}:
        return False
    return named <= {t.name for t in request.tools}


def _scripted_calls(
    rule: ScriptedReply, request: Request, family: str, lazy: LazyRng
) -> tuple[ToolCall, ...]:
    """The rule's calls (the first alone without `parallel_tool_calls`), with ids drawn
    as a generated call's are: the same request gives the same ids."""
    wanted = rule.tool_calls if request.parallel_tool_calls else rule.tool_calls[:1]
    rng = lazy()
    return tuple(
        ToolCall(tool_call_id(rng.getrandbits(64), family), name, arguments)
        for name, arguments in wanted
    )


def prompt_tokens(request: Request, family: str) -> int:
    """The prompt's tokens in a tokenizer family: the messages and the tools' definitions."""
    return count_messages(request.messages, family, extra=tools_text(request))


def tools_text(request: Request) -> str:
    """The tools as a prompt reads them: each one's name, description and schema are
    input tokens (a long description, as MCP servers write them, costs what it says)."""
    return "".join(tool_text(t) for t in request.tools)


def tool_text(tool: Tool) -> str:
    """One tool as a prompt reads it."""
    return json.dumps(tool.parameters, sort_keys=True) + tool.name + tool.description


def _tool_calls(request: Request, family: str, lazy: LazyRng) -> tuple[ToolCall, ...]:
    # A response format shapes the answer after the tools, as an agent with an output
    # type expects; it does not stop a call.
    if not request.tools or request.tool_choice == "none":
        return ()
    last_role = request.messages[-1].role if request.messages else None
    choice = request.tool_choice
    named = [t for t in request.tools if isinstance(choice, ForcedTool) and t.name == choice.name]
    if named:
        tool = named[0]
    elif request.tool_choice == "required" or (
        # Small talk ("hi", "thanks") is answered in words, as a real model does.
        request.tool_choice == "auto"
        and last_role == "user"
        and small_talk.kind_of(_last_user_text(request.messages)) is None
    ):
        tool = likeliest(request.tools, _last_user_text(request.messages))
    else:
        return ()
    rng = lazy()
    said = _facts(request.messages)
    calls: list[ToolCall] = []
    while True:
        value = value_for(tool.parameters, rng, said)
        arguments = json.dumps(value, separators=(",", ":"))
        calls.append(ToolCall(tool_call_id(rng.getrandbits(64), family), tool.name, arguments))
        # One call a name the user gave ("weather in Paris and Tokyo": two), in parallel.
        taken = names_taken(value, said.names)
        last = not taken or taken >= len(said.names) or len(calls) == MAX_CALLS
        if last or not request.parallel_tool_calls:
            return tuple(calls)
        said = said.skipping(taken)


def _facts(messages: tuple[Message, ...]) -> Facts:
    """What the last user message says, for values drawn for a schema (its names, when
    it gives none, the user's earlier ones). Prose fields get what the tools said when
    the conversation ends in their results (an agent's summary of its calls), else two
    sentences about the message."""
    users = [m.text for m in messages if m.role == "user"]
    prompt = users[-1] if users else ""
    results = _results_said(messages)

    def prose(rng: random.Random) -> str:
        if results:
            return results
        a, b = Topics(prompt).pair(rng)
        return " ".join(body.format(a=a, b=b) for body in rng.sample(BODY, 2))

    return Facts(prompt, prose, earlier=tuple(reversed(users[:-1])))


def _text(model: str, request: Request, family: str, lazy: LazyRng) -> str:
    prompt = _last_user_text(request.messages)
    fmt = request.response_format or {}
    if fmt.get("type") == "json_schema":
        return json.dumps(value_for(fmt.get("schema") or {}, lazy(), _facts(request.messages)))
    if fmt.get("type") == "json_object":  # the shape the prompt shows, else our own
        if (shaped := json_mode.shape(request.messages)) is not None:
            return json.dumps(value_for(shaped, lazy(), _facts(request.messages)))
        a, b = Topics(prompt).pair(lazy())
        return json.dumps({"answer": f"{a} depends on {b}", "topic": a, "confidence": 0.8})
    wanted = _TOKENS_DIRECTIVE.search(prompt)
    tokens = int(wanted.group(1)) if wanted else None
    if tokens is not None and request.max_tokens is not None:
        tokens = min(tokens, request.max_tokens + 1)  # one more than the limit: enough to cut
    # (No messages at all: a system prompt alone, which the provider took as its own.)
    said = _results_said(request.messages)
    if said:  # the directive holds too
        said += " Let me know what you would like next."
        return said if tokens is None else _exactly(tokens, family, prompt, lazy(), said)
    if model == "emulator/echo":
        return prompt
    if tokens is not None:
        return _exactly(tokens, family, prompt, lazy())
    if (kind := small_talk.kind_of(prompt)) is not None:
        return small_talk.reply(kind, lazy())
    rng = lazy()
    text = _sentences(Topics(prompt), rng, rng.randint(3, 6))
    sources = web_search.cited(request.messages)  # search results in the prompt
    if sources:
        text += web_search.sources_sentence(sources)
    return text + server_tools.said(request.messages)  # the other tools' results


def _results_said(messages: tuple[Message, ...]) -> str:
    """What the tool results that end the conversation say (several after parallel
    calls): a sentence about each, in order; "" when there are none, or only
    handoffs."""
    results: list[Message] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        results.insert(0, message)
    return " ".join(s for result in results if (s := _about_result(messages, result)))


def _about_result(messages: tuple[Message, ...], result: Message) -> str:
    name = next(
        (c.name for m in messages for c in m.tool_calls if c.id == result.tool_call_id), "the tool"
    )
    if name.startswith(HANDOFF):  # the agent handed to answers the user, as unasked
        return ""
    snippet = result.text if len(result.text) <= 200 else result.text[:200] + "..."
    end = "" if snippet.endswith((".", "!", "?")) else "."  # not "sunny.."
    return f"According to {name}, the result is: {snippet}{end}"


def _sentences(topics: Topics, rng: random.Random, count: int) -> str:
    a, b = topics.pair(rng)
    parts = [rng.choice(OPENERS).format(a=a)]
    # Drawn without putting back: a sentence said twice in one answer reads as a machine's.
    parts += [body.format(a=a, b=b) for body in rng.sample(BODY, count - 2)]
    parts.append(rng.choice(CLOSERS).format(a=a))
    return " ".join(parts)


def _exactly(tokens: int, family: str, prompt: str, rng: random.Random, start: str = "") -> str:
    """`tokens` tokens of text, from `start` on (cut if it alone is longer)."""
    # Counted a paragraph at a time (a space ends every token), not the whole text
    # again each time: that was quadratic in `tokens`.
    paragraphs: list[str] = [start] if start else []
    spent = count_text(start, family) if start else 0
    topics = Topics(prompt)
    while spent < tokens:
        paragraphs.append(_sentences(topics, rng, 4))
        spent += count_text(paragraphs[-1], family)
    return truncate(" ".join(paragraphs), family, tokens)[0]
