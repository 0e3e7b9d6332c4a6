"""The gateway's own shape of a conversation and of an answer.

Every wire format (chat, responses, messages) is translated to and from
these types, so a client format and a provider format never meet directly.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from emulator.errors import ValidationFailed

Role = Literal["system", "user", "assistant", "tool"]


def role_of(raw: str) -> Role:
    """A wire role as ours: `developer` is a system message."""
    role: Role = "system" if raw in ("developer", "system") else raw  # type: ignore[assignment]
    return role


FinishReason = Literal["stop", "length", "tool_calls"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as every wire format carries it


# How long a prompt-cache breakpoint keeps its prefix, by its `cache_control.ttl`.
CACHE_TTL_SECONDS = {None: 300, "5m": 300, "1h": 3600}


@dataclass(frozen=True, slots=True)
class CacheMark:
    """A prompt-cache breakpoint (`cache_control`): the prefix to keep ends `offset`
    characters into its message's text, and is kept `ttl` seconds."""

    offset: int
    ttl: int = 300


@dataclass(frozen=True, slots=True)
class AudioClip:
    """An `input_audio` part: its base64 `data` (handed on to the provider as sent), its
    `format` and how long it lasts (`gateway.audio`)."""

    format: str
    ms: int
    data: str = field(repr=False)


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class Message:
    role: Role
    text: str = ""
    images: int = 0
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    # Out of the repr, which keys the answer's generator: a breakpoint changes what is
    # billed, not what the model says.
    cache_marks: tuple[CacheMark, ...] = field(default=(), repr=False)
    # Out of the repr too, so that answers without audio keep their bytes; a request's
    # audio keys its answer's generator apart (`audio.key`).
    audio: tuple[AudioClip, ...] = field(default=(), repr=False)
    # The images as sent (a data URL, an http(s) URL, `file:<id>`), for an image model
    # that edits the last one (`gateway.image_sources`); out of the repr as the audio.
    pictures: tuple[str, ...] = field(default=(), repr=False)


def cache_ttl(control: dict[str, Any]) -> int:
    """A breakpoint's lifetime in seconds, from its `cache_control`."""
    return CACHE_TTL_SECONDS.get(control.get("ttl"), CACHE_TTL_SECONDS[None])


def cache_marks(parts: list[dict[str, Any]], text_types: frozenset[str]) -> tuple[CacheMark, ...]:
    """The breakpoints of content parts (`cache_control` on a part): where in the parts'
    text, joined by newlines as every format joins it, each marked part ends."""
    marks: list[CacheMark] = []
    end = -1  # the first text part adds no newline
    for part in parts:
        if part.get("type") in text_types:
            end += 1 + len(part.get("text") or "")
        control = part.get("cache_control")
        if isinstance(control, dict):
            marks.append(CacheMark(max(end, 0), cache_ttl(control)))
    return merged_marks(marks)


def merged_marks(marks: Iterable[CacheMark]) -> tuple[CacheMark, ...]:
    """Breakpoints in text order, one per place (the longest-lived where two meet)."""
    ttls: dict[int, int] = {}
    for mark in marks:
        ttls[mark.offset] = max(ttls.get(mark.offset, 0), mark.ttl)
    return tuple(CacheMark(offset, ttl) for offset, ttl in sorted(ttls.items()))


MAX_BREAKPOINTS = 4  # as Anthropic's API allows


def breakpoint_ttls(tools: Iterable[Tool], messages: Iterable[Message]) -> list[int]:
    """The ttls of a request's breakpoints, in the order the prompt reads them: its
    tools first, then its messages."""
    ttls = [tool.cache_ttl for tool in tools if tool.cache_ttl is not None]
    return ttls + [mark.ttl for message in messages for mark in message.cache_marks]


def check_breakpoints(ttls: list[int], param: str) -> None:
    """A request may mark at most four places to cache (`ttls`: theirs, from
    `breakpoint_ttls`), as the providers allow, and an hour's breakpoints must come
    before the others (a later one keeps what an earlier one does, so it may not be
    kept for less)."""
    if any(later > earlier for earlier, later in itertools.pairwise(ttls)):
        raise ValidationFailed(
            'A `cache_control` with `ttl: "1h"` must come before those of 5 minutes: '
            "order the breakpoints from the longest-lived to the shortest.",
            param=param,
            code="invalid_cache_control",
        )
    marks = len(ttls)
    if marks > MAX_BREAKPOINTS:
        raise ValidationFailed(
            f"A request may carry at most {MAX_BREAKPOINTS} `cache_control` breakpoints "
            f"(this one has {marks}): keep the ones that end the longest prefixes to reuse.",
            param=param,
            code="too_many_cache_breakpoints",
        )


def cache_control(ttl: int) -> dict[str, Any]:
    """A breakpoint kept `ttl` seconds, as the formats that carry it write it."""
    control: dict[str, Any] = {"type": "ephemeral"}
    if ttl != CACHE_TTL_SECONDS[None]:
        control["ttl"] = "1h"
    return control


# Tokens of reasoning per effort, as chat (OpenRouter) and responses (OpenAI) name them.
EFFORT_TOKENS = {"minimal": 10, "low": 20, "medium": 60, "high": 150, "xhigh": 300, "max": 600}
DEFAULT_EFFORT = "medium"


def effort_tokens(effort: str | None) -> int:
    """An effort's budget of reasoning tokens; none given (or unknown): the default's."""
    return EFFORT_TOKENS.get(effort or DEFAULT_EFFORT, EFFORT_TOKENS[DEFAULT_EFFORT])


@dataclass(frozen=True)
class Reasoning:
    """Thinking asked for: `tokens` of it, before the answer and within `max_tokens`.
    `exclude` (chat): billed, not returned; `summary` (responses): which summary the
    client asked for (none: the reasoning item's `summary` is empty)."""

    tokens: int
    exclude: bool = False
    summary: str | None = None
    # The request's field that asked for it (an error about it names that field).
    asked_by: str = field(default="reasoning", compare=False)


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One token of an answer's text with its log probability, and the `top` most likely
    tokens at its place (the token itself first), as (token, logprob) pairs."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    # A prompt-cache breakpoint after this tool (`cache_control` on its definition, in
    # the messages format): how long it keeps the prefix. Out of the repr and of
    # comparisons: it changes what is billed, not the tool.
    cache_ttl: int | None = field(default=None, repr=False, compare=False)
    # Its place in the body's `tools`, which errors name: server tools (web search) and
    # an `allowed_tools` choice leave others out, so it is not its place in `tools` here.
    index: int | None = field(default=None, repr=False, compare=False)


def allowed_tools(
    tools: tuple[Tool, ...], names: list[str], mode: str, where: str
) -> tuple[tuple[Tool, ...], str]:
    """`tool_choice: {"type": "allowed_tools", ...}`: the model may call only the tools
    named (`auto`: or none of them; `required`: one of them). As the tools and the
    choice to give a model: those named, and the mode. A name not among `tools` is
    refused, as OpenAI refuses it (`where`: the list of names, for `param`)."""
    known = {tool.name for tool in tools}
    for index, name in enumerate(names):
        if name not in known:
            raise ValidationFailed(
                f"tool_choice allows tool {name!r}, which is not among `tools`.",
                param=f"{where}[{index}]",
            )
    wanted = set(names)
    return tuple(tool for tool in tools if tool.name in wanted), mode


@dataclass(frozen=True, slots=True)
class ForcedTool:
    """A `tool_choice` that names a tool: the model must call that one. Not the name
    alone, so that a tool named `auto`, `none` or `required` can be forced too."""

    name: str

    def __repr__(self) -> str:
        return repr(self.name)  # a Request's repr keys its answer: the same as before


@dataclass(frozen=True, slots=True)
class ImageOutput:
    """Images asked of the answer (OpenRouter's `modalities` with `image`): their
    `image_config`, and whether text comes too (`text` among the modalities)."""

    aspect_ratio: str | None = None  # none asked: an edit's shape, else 1:1
    image_size: str = "1K"
    text: bool = True


@dataclass(frozen=True, slots=True)
class AudioOutput:
    """Sound asked of the answer (`modalities` with `audio`): its `audio` settings, the
    voice's name (or a custom voice's id) and the format (`gateway.audio_output`)."""

    voice: str
    format: str


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class Request:
    messages: tuple[Message, ...]
    max_tokens: int | None = None
    tools: tuple[Tool, ...] = ()
    tool_choice: str | ForcedTool = "auto"  # auto, none, required, or a tool to call
    response_format: dict[str, Any] | None = None  # {"type": "json_object"|"json_schema", ...}
    stop: tuple[str, ...] = ()
    seed: int | None = None
    temperature: float | None = None
    n: int = 1
    # Out of the repr, which keys the answer's generator: it changes how many
    # scripted calls are made, not what anything else says.
    parallel_tool_calls: bool = field(default=True, repr=False)
    # Out of the repr too: the answer says the same with or without reasoning (the
    # reasoning's own generator is keyed apart), and answers without it are unchanged.
    reasoning: Reasoning | None = field(default=None, repr=False)
    # With `reasoning` None, what a model that reasons unasked (`Route.default_reasoning`)
    # does: `default`, its own way; `off`, none (the client turned it off); `hidden`,
    # billed and not returned (`include_reasoning: false`).
    reasoning_unasked: str = field(default="default", repr=False)
    # Log probabilities asked for: how many of the most likely tokens each token lists
    # (0 to 20); None: not asked. Out of the repr: asking does not change the answer.
    logprobs: int | None = field(default=None, repr=False)
    # The field that carried `response_format` when its format has two (Anthropic's
    # `output_config.format` and the older `output_format`): errors name the one sent.
    format_field: str | None = field(default=None, repr=False, compare=False)
    # Images asked of the answer (`gateway.image_output`). Out of the repr: the text
    # says the same with or without them (the image is drawn from a generator apart).
    images_out: ImageOutput | None = field(default=None, repr=False)
    # Sound asked of the answer (`gateway.audio_output`); out of the repr as images are.
    audio_out: AudioOutput | None = field(default=None, repr=False)

    def with_max_tokens(self, max_tokens: int | None) -> Request:
        """A copy with another `max_tokens` (`dataclasses.replace` costs ~3x this)."""
        return Request(
            self.messages,
            max_tokens,
            self.tools,
            self.tool_choice,
            self.response_format,
            self.stop,
            self.seed,
            self.temperature,
            self.n,
            self.parallel_tool_calls,
            self.reasoning,
            self.reasoning_unasked,
            self.logprobs,
            self.format_field,
            self.images_out,
            self.audio_out,
        )


@dataclass(frozen=True, slots=True)
class CacheUse:
    """Of a prompt's tokens, those the provider read from its prompt cache and those it
    wrote to it (`written_1h`: of `written`, for an hour)."""

    read: int = 0
    written: int = 0
    written_1h: int = 0


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class Completion:
    text: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: FinishReason
    input_tokens: int
    output_tokens: int  # the reasoning's tokens included
    reasoning: str | None = None  # None: no reasoning was asked for
    reasoning_tokens: int = 0
    # The text's tokens, when log probabilities were asked for and the provider's
    # format carries them (their tokens join to `text`); None otherwise.
    logprobs: tuple[TokenLogprob, ...] | None = None
    cache: CacheUse | None = None  # of `input_tokens`: read from or written to its cache
    stop_sequence: str | None = None  # the one of `Request.stop` that ended the text
    images: tuple[str, ...] = ()  # generated images, as data URLs (`gateway.image_output`)
    image_tokens: int = 0  # of `output_tokens`: the images'
    audio_out: AudioOutput | None = None  # the text is the transcript of this sound
    audio_tokens: int = 0  # of `output_tokens`: the sound's


# Stream pieces, in the order a provider sends them. `choice` is the index of the
# answer among `n` (chat streams carry several; the other formats one).
@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the reasoning, streamed before the answer."""

    text: str
    choice: int = 0


@dataclass(frozen=True)
class TextDelta:
    text: str
    choice: int = 0
    logprobs: tuple[TokenLogprob, ...] | None = None  # the piece's tokens, when asked for


@dataclass(frozen=True)
class ToolCallStart:
    index: int
    id: str
    name: str
    choice: int = 0


@dataclass(frozen=True)
class ToolArgumentsDelta:
    index: int
    fragment: str
    choice: int = 0


@dataclass(frozen=True)
class ImageDelta:
    """A generated image (a data URL), streamed whole after the answer's text."""

    url: str
    choice: int = 0


@dataclass(frozen=True)
class AudioDelta:
    """A piece of an answer's sound (`gateway.audio_output`): its transcript's text,
    base64 data, or its end (`ends`)."""

    choice: int = 0
    id: str | None = None  # on the first piece and the end
    transcript: str = ""
    data: str = ""
    ends: bool = False


@dataclass(frozen=True)
class Finish:
    """The end of one choice; its output tokens (over all choices: their sum)."""

    reason: FinishReason
    input_tokens: int
    output_tokens: int
    choice: int = 0
    reasoning_tokens: int = 0  # of `output_tokens`
    cache: CacheUse | None = None  # of `input_tokens`, as in `Completion`
    stop_sequence: str | None = None  # as in `Completion`
    image_tokens: int = 0  # of `output_tokens`, as in `Completion`
    audio_tokens: int = 0  # of `output_tokens`, as in `Completion`


Delta = (
    ReasoningDelta
    | TextDelta
    | ToolCallStart
    | ToolArgumentsDelta
    | ImageDelta
    | AudioDelta
    | Finish
)
