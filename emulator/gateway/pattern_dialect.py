"""JSON Schema patterns are ECMA-262 regular expressions (with the `u` flag, as Ajv and
zod read them), said here in the words of the two engines the emulator uses.

`for_matching` gives the `regex` module's spelling with ECMA's meaning: `\\d`, `\\w`,
`\\b` are ASCII, `\\s` is ECMA's set of spaces, `\\u{1F600}` is one code point, so is a
pair of surrogate escapes, `\\cJ` is a control character, `(?<year>...)` and
`\\k<year>` are a named group and its reference. `\\p{...}` is the `regex` module's own.
`for_parsing` gives Python's `re` spelling, for the generator that builds strings from
its parse tree: `\\p{L}` there is a class of a few characters that have the property.

`[]` and `[^]` are ECMA's empty class and any character, and a lookbehind may have any
width. Python-only syntax (`(?P<name>...)`, inline flags, `\\Z`) keeps working.
Two differences stay: `$` also matches before a final newline, and `.` also matches
`\\r`, U+2028 and U+2029; the emulator never draws those characters.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from functools import lru_cache
from re import _parser  # type: ignore[attr-defined]

import regex

# ECMA-262's WhiteSpace and LineTerminator (Python's `\s` adds \x1c-\x1f and \x85,
# and lacks \ufeff).
_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A)]
_SPACE += [(0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]
_SPACE += [(0xFEFF, 0xFEFF)]
# Characters a `\p{...}` class is built from when they have the property: common ones
# first, so `\p{L}` draws letters a reader expects; the rest of Unicode when none do.
_SAMPLE = string.ascii_letters + string.digits + "_-. @éüñçßøåÉÑαβγΩжЖщ中文字あア한😀🎉👍✨"
_FOUND = 8  # characters taken from the rest of Unicode
# What an escape may read past its letter (`{10FFFF}`, a group's name, a property's):
# the rest of a long pattern, copied at each escape, made rewriting it quadratic.
_LOOKAHEAD = 256
# ECMA's `[]` (matches nothing) and `[^]` (any character, a newline too), which Python
# reads as the start of a class holding `]`.
_NOTHING, _ANYTHING = "(?:(?!))", "(?s:.)"


def _ranges(pairs: list[tuple[int, int]]) -> str:
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in pairs)


def _complement(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, start = [], 0
    for a, b in sorted(pairs):
        if a > start:
            out.append((start, a - 1))
        start = b + 1
    return [*out, (start, 0x10FFFF)]


_DIGITS = [(0x30, 0x39)]
_WORD_CHARS = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
# What `\d`, `\D`, `\w`, `\W`, `\s`, `\S` stand for inside a class, with ECMA's meaning.
_CLASS_ESCAPES = {
    "d": _ranges(_DIGITS),
    "D": _ranges(_complement(_DIGITS)),
    "w": _ranges(_WORD_CHARS),
    "W": _ranges(_complement(_WORD_CHARS)),
    "s": _ranges(_SPACE),
    "S": _ranges(_complement(_SPACE)),
}
# `\b` and `\B`: between an ASCII word character and another character, or not.
_W = f"[{_CLASS_ESCAPES['w']}]"
_BOUNDARIES = {
    "b": f"(?:(?<={_W})(?!{_W})|(?<!{_W})(?={_W}))",
    "B": f"(?:(?<={_W})(?={_W})|(?<!{_W})(?!{_W}))",
}


def for_matching(pattern: str) -> str:
    """`pattern` (ECMA-262) as the `regex` module reads it, with ECMA's meaning (its
    caller, `pattern_search`, keeps the compiled pattern)."""
    return _rewrite(pattern, _matching_escape)


@lru_cache(maxsize=1024)
def for_parsing(pattern: str) -> str:
    """`pattern` (ECMA-262) as Python's `re` parses it; unchanged when it says nothing
    `re` does not (so strings drawn for it stay those of earlier versions). `re.error`
    for a property `regex` does not know."""
    return _rewrite(pattern, _parsing_escape)


def checked(pattern: str) -> object:
    """`pattern` compiled by `re` in its parsing words: JSON Schema's `regex` format.
    Not by `regex`, which expands counted repeats as it compiles (`((a{1000}){1000})
    {1000}` fills memory), where the check comes before the schema's size limits. A
    lookbehind of any width is ECMA's (and `regex` matches it): `re` only parses it."""
    parsing = for_parsing(pattern)
    try:
        return re.compile(parsing)
    except re.error as error:
        if error.msg != "look-behind requires fixed-width pattern":
            raise
    return _parser.parse(parsing)


# An escape's rewriting: (the escape's letter, what follows it, inside a class) ->
# (the text it becomes, how many characters of what follows it took), or None to copy it.
_Escape = Callable[[str, str, bool], tuple[str, int] | None]


def _rewrite(pattern: str, escape: _Escape) -> str:
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            letter, rest = pattern[i + 1], pattern[i + 2 : i + 2 + _LOOKAHEAD]
            done = _common_escape(letter, rest, in_class) or escape(letter, rest, in_class)
            text, used = done if done is not None else (pattern[i : i + 2], 0)
            out.append(text)
            i += 2 + used
            continue
        if in_class:
            in_class = char != "]"
        elif pattern.startswith(("[]", "[^]"), i):  # ECMA's empty and any-character classes
            empty = pattern.startswith("[]", i)
            out.append(_NOTHING if empty else _ANYTHING)
            i += 2 if empty else 3
            continue
        elif char == "[":
            # Python's reading, which takes `]` first in a class as itself.
            start = i + 1 + pattern.startswith("^", i + 1)
            start += pattern.startswith("]", start)
            out.append(pattern[i:start])
            i, in_class = start, True
            continue
        elif pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
            out.append("(?P<")  # a named group, in the spelling both engines read
            i += 3
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _common_escape(letter: str, rest: str, in_class: bool) -> tuple[str, int] | None:
    """The escapes both engines need said otherwise: `\\u{...}` and surrogate pairs,
    `\\cX`, `\\k<name>`."""
    if letter == "u":
        if (m := regex.match(r"\{([0-9A-Fa-f]{1,6})\}", rest)) and int(m[1], 16) <= 0x10FFFF:
            return f"\\U{int(m[1], 16):08x}", m.end()
        pair = regex.match(r"(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})", rest, regex.I)
        if pair:
            high, low = int(pair[1], 16), int(pair[2], 16)
            return f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08x}", pair.end()
    if letter == "c" and rest[:1].isascii() and rest[:1].isalpha():
        return f"\\x{ord(rest[0]) % 32:02x}", 1
    if letter == "k" and not in_class and (m := regex.match(r"<(\w+)>", rest)):
        return f"(?P={m[1]})", m.end()
    return None


def _matching_escape(letter: str, rest: str, in_class: bool) -> tuple[str, int] | None:
    if letter in _CLASS_ESCAPES:
        inside = _CLASS_ESCAPES[letter]
        return (inside, 0) if in_class else (f"[{inside}]", 0)
    if letter in _BOUNDARIES and not in_class:  # inside a class, `\b` is a backspace
        return _BOUNDARIES[letter], 0
    return None


def _parsing_escape(letter: str, rest: str, in_class: bool) -> tuple[str, int] | None:
    if letter not in "pP" or not (m := regex.match(r"\{[^{}]*\}", rest)):
        return None
    chars = _having(f"\\{letter}{m[0]}")
    inside = "".join(f"\\U{ord(c):08x}" for c in chars)
    if in_class:
        return inside, m.end()
    return (f"[{inside}]" if inside else "(?!)"), m.end()


@lru_cache(maxsize=256)
def _having(prop: str) -> str:
    """Characters `prop` (`\\p{...}` or `\\P{...}`) matches: those of the sample, else a
    few from the rest of Unicode; `re.error` when it is not a property `regex` knows."""
    try:
        compiled = regex.compile(prop)
    except regex.error as exc:
        raise re.error(f"{exc} in {prop}") from exc
    found = "".join(c for c in _SAMPLE if compiled.fullmatch(c))
    if not found:
        matches = compiled.finditer(_every_char())
        found = "".join(m[0] for _, m in zip(range(_FOUND), matches, strict=False))
    return found


@lru_cache(maxsize=1)
def _every_char() -> str:
    """Every code point but the surrogates (some 4 MB, built once, in 0.15 s)."""
    return "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
