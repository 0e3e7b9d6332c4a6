"""Prompt caching, as the providers do it and bill it.

A route caches when the catalog gives it a cache-read price. How depends on
its provider's wire format, as upstream:

- `chat` and `responses` providers (OpenAI, Gemini, DeepSeek) cache by
  themselves: a prompt of at least 1,024 tokens is kept in blocks of 128
  tokens, and a later prompt that begins with the same tokens reads the
  longest kept block boundary (`cached_tokens`, at the read price). Keeping
  is free.
- `messages` providers (Anthropic) cache only at the client's breakpoints
  (`cache_control` on a content part, on a tool definition, or on the request
  for its last message): the prompt up to each breakpoint of at least 1,024
  tokens is kept, and what was not already kept is written
  (`cache_write_tokens`, at the write price; kept an hour with `ttl: "1h"`,
  at twice the prompt price). A later prompt reads the longest kept prefix
  ending at one of its breakpoints or at a message end (or the tools' end)
  before its last breakpoint (so a conversation that moves its breakpoint to
  its newest turn reads the turns before).

The prompt is seen as the provider's tokenizer splits it (`tokens.py`): the
tools' definitions, then each message's framing, its images (by their count:
a message keeps no more of them) and its text and calls. Kept prefixes are
the account's, per provider and model, and live 5 minutes of the virtual
clock (an hour for `ttl: "1h"`), renewed by each read for as long.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from emulator.billing.pricing import CacheBill
from emulator.gateway import audio
from emulator.gateway.canonical import CacheUse, Request, breakpoint_ttls
from emulator.gateway.content import tool_text, tools_text
from emulator.gateway.routing import Route
from emulator.gateway.tokens import IMAGE_TOKENS, count_text, framing, text_tokens
from emulator.store import prompt_cache as kept

if TYPE_CHECKING:
    from emulator.runtime import Runtime

MIN_TOKENS = 1024  # a shorter prefix is never kept
BLOCK_TOKENS = 128  # what the providers that cache by themselves keep in
AUTOMATIC_TTL = 300
HOUR = 3600
EXPLICIT_FORMAT = "messages"  # the format whose providers cache at breakpoints only


@dataclass(slots=True)
class PromptCache:
    """One route's cache, as the account that calls it sees it."""

    rt: Runtime
    account_id: str
    route: Route
    # The first use's answer: a provider asked for `n` answers one at a time reads the
    # prompt once, as one asked for all `n` at once.
    used: tuple[CacheUse | None] | None = None

    def use(self, request: Request, prompt_tokens: int) -> CacheUse | None:
        """Read what the prompt (`prompt_tokens` long, as the provider counted it) finds
        kept and keep what it should: what it read and wrote. None: too short to cache."""
        if self.used is None:
            self.used = (self._use(request, prompt_tokens),)
        return self.used[0]

    def _use(self, request: Request, prompt_tokens: int) -> CacheUse | None:
        if prompt_tokens < MIN_TOKENS:
            return None
        family = self.route.wire_format
        pieces, ends, marks = _layout(request, family)
        if family == EXPLICIT_FORMAT:
            marks = [(at, ttl) for at, ttl in marks if at >= MIN_TOKENS]
            if not marks:
                return None
            last = max(at for at, _ in marks)
            looked = {at for at in ends if MIN_TOKENS <= at <= last} | {at for at, _ in marks}
            keeps = marks
        else:
            looked = set(range(MIN_TOKENS, len(pieces) + 1, BLOCK_TOKENS))
            keeps = [(at, AUTOMATIC_TTL) for at in sorted(looked)]
        digests = _digests(pieces, looked)
        route = (self.route.provider, self.route.model)
        now = self.rt.clock.now()
        with self.rt.store.write() as conn:
            hit = kept.longest_kept(conn, self.account_id, route, list(digests.values()), now)
            read = hit[1] if hit else 0
            if family == EXPLICIT_FORMAT:  # what was read is renewed, not written again:
                keeps = [(at, ttl) for at, ttl in keeps if at > read]  # its ttl stays
            prefixes = [(digests[at], at, ttl) for at, ttl in keeps]
            if hit is not None:  # a read renews the prefix it read, for as long as it was kept
                prefixes.append(hit)
            kept.keep(conn, self.account_id, route, prefixes, now)
        if family != EXPLICIT_FORMAT:
            return CacheUse(read=read)
        return _written(read, keeps)


def _written(read: int, marks: list[tuple[int, int]]) -> CacheUse:
    """What the breakpoints wrote beyond what was read: each stretch up to a breakpoint
    is kept as long as that breakpoint says (Anthropic bills the hour's writes apart)."""
    written = written_1h = 0
    start = read
    for at, ttl in sorted(marks):
        if at > start:
            written += at - start
            written_1h += (at - start) if ttl >= HOUR else 0
            start = at
    return CacheUse(read=read, written=written, written_1h=written_1h)


def _layout(request: Request, family: str) -> tuple[list[str], list[int], list[tuple[int, int]]]:
    """The prompt's tokens as the provider reads them (as many as `prompt_tokens` counts),
    where each message ends, and where each breakpoint is (token index, ttl)."""
    pieces = text_tokens(tools_text(request), family)
    ends: list[int] = []
    marks: dict[int, int] = {}  # token index -> the longest ttl of a breakpoint there
    if request.tools:  # the tools end a block, as a message does, and may be marked
        ends.append(len(pieces))
        marks.update(_tool_marks(request, family))
    frame = framing(family)
    for message in request.messages:
        pieces += [f"<{message.role}>"] * frame
        # Its images first: a message keeps how many, not where among its parts, and a
        # breakpoint in its text then covers them.
        pieces += ["<image>"] * (IMAGE_TOKENS * message.images)
        for clip in message.audio:  # a clip's tokens are its own: another clip misses
            pieces += [f"<audio:{audio.digest(clip.data)}>"] * audio.tokens(clip.ms)
        start = len(pieces)
        pieces += text_tokens(message.text, family)
        for call in message.tool_calls:
            pieces += text_tokens(call.name, family) + text_tokens(call.arguments, family)
        ends.append(len(pieces))
        for mark in message.cache_marks:  # one at the text's end covers the whole message
            whole = mark.offset >= len(message.text)
            at = ends[-1] if whole else start + count_text(message.text[: mark.offset], family)
            marks[at] = max(marks.get(at, 0), mark.ttl)
    return pieces, ends, sorted(marks.items())


def _tool_marks(request: Request, family: str) -> dict[int, int]:
    """The breakpoints on tool definitions: each ends the prefix of the tools up to it."""
    marks: dict[int, int] = {}
    text = ""
    for tool in request.tools:
        text += tool_text(tool)
        if tool.cache_ttl is not None:
            marks[count_text(text, family)] = tool.cache_ttl
    return marks


def _digests(pieces: list[str], positions: set[int]) -> dict[int, str]:
    """The digest of the prompt's first `n` tokens, for each `n` in `positions`."""
    digest = hashlib.blake2b(digest_size=16)
    found: dict[int, str] = {}
    done = 0
    for at in sorted(positions):
        digest.update("".join(piece + "\x1f" for piece in pieces[done:at]).encode())
        done = at
        found[at] = digest.copy().hexdigest()
    return found


def bill(use: CacheUse | None, route: Route) -> CacheBill | None:
    """A cache use with the route's prices for it, as the charge formula takes it."""
    if use is None or not (use.read or use.written):
        return None
    read = route.cache_read_micros_per_mtok
    return CacheBill(
        use.read, use.written, use.written_1h, 0 if read is None else read, _write_price(route)
    )


def _write_price(route: Route) -> int:
    """A route's cache write price; none given: its prompt price."""
    write = route.cache_write_micros_per_mtok
    return route.prompt_micros_per_mtok if write is None else write


def worst_prompt_price(route: Route, request: Request) -> int:
    """The most a prompt token of this request can cost on this route: its write price
    where the route writes to its cache at the request's breakpoints (an hour's write:
    twice the prompt price), else the prompt price (a read costs no more: fixtures)."""
    price = route.prompt_micros_per_mtok
    if route.cache_read_micros_per_mtok is None or route.wire_format != EXPLICIT_FORMAT:
        return price
    ttls = breakpoint_ttls(request.tools, request.messages)
    if not ttls:
        return price
    hour = 2 * price if max(ttls) >= HOUR else 0
    return max(price, _write_price(route), hour)
