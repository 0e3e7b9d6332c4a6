"""The strings drawn for a JSON schema: formats, patterns, names and words.

`schema_draws` calls `text_for` for every string it draws; the words are shared
with `schema_values` (the smallest values), so they stay one list.
"""

from __future__ import annotations

import math
import random
from typing import Any

from emulator.gateway.pattern_values import string_for_pattern

WORDS = (
    "amber", "harbor", "lantern", "meadow", "orbit", "pepper", "quartz", "river",
    "summit", "timber", "velvet", "willow", "beacon", "canyon", "falcon", "garden",
)  # fmt: skip


_BY_NAME = {
    "name": ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson"),
    "city": ("Lisbon", "Osaka", "Toronto", "Nairobi", "Oslo"),
    "location": ("Lisbon, Portugal", "Osaka, Japan", "Toronto, Canada"),
    "country": ("Portugal", "Japan", "Canada", "Kenya"),
    "unit": ("celsius", "fahrenheit"),
    "email": ("ada@example.com", "grace@example.org"),
    "language": ("en", "fr", "ja"),
}


def text_for(schema: dict[str, Any], rng: random.Random, name: str, strict: bool) -> Any:
    """A string for `schema` (its format, its pattern when `strict`, its length), or a
    name fitting the property's (`name`, `city`, ...), or two words."""
    pattern = schema.get("pattern")
    if strict and isinstance(pattern, str):
        return _patterned(pattern, schema, rng)
    fmt = schema.get("format")
    if fmt == "date-time":
        return f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T09:30:00Z"
    if fmt == "date":
        return f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"
    if fmt == "email":
        return f"{rng.choice(WORDS)}@example.com"
    if fmt in ("uri", "url"):
        return f"https://example.com/{rng.choice(WORDS)}"
    if fmt == "uuid":
        a, b, c, d, e = (rng.getrandbits(bits) for bits in (32, 16, 12, 12, 48))
        return f"{a:08x}-{b:04x}-4{c:03x}-8{d:03x}-{e:012x}"
    if fmt in _MORE_FORMATS:  # values of these formats were words before: never valid ones
        return _MORE_FORMATS[fmt](rng)
    key = next((k for k in _BY_NAME if k in name.lower()), None)
    text = rng.choice(_BY_NAME[key]) if key else _two_words(rng)
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    while len(text) < low:
        text += " " + rng.choice(WORDS)
    return text[:high] if high is not None else text


def _two_words(rng: random.Random) -> str:
    """Two different words ("beacon beacon" reads as a stutter); drawn as two choices,
    so what is drawn after them is the same either way."""
    first, second = rng.choice(WORDS), rng.choice(WORDS)
    if second == first:
        second = WORDS[(WORDS.index(first) + 1) % len(WORDS)]
    return f"{first} {second}"


_MORE_FORMATS = {
    "time": lambda rng: f"{rng.randint(10, 19)}:{rng.randint(10, 59)}:00Z",
    "hostname": lambda rng: f"{rng.choice(WORDS)}.example.com",
    "idn-hostname": lambda rng: f"{rng.choice(WORDS)}.example.com",
    "idn-email": lambda rng: f"{rng.choice(WORDS)}@example.com",
    "ipv4": lambda rng: f"192.0.2.{rng.randint(1, 254)}",
    "ipv6": lambda rng: f"2001:db8::{rng.randint(1, 0xFFFF):x}",
    "uri-reference": lambda rng: f"/{rng.choice(WORDS)}",
    "iri": lambda rng: f"https://example.com/{rng.choice(WORDS)}",
    "iri-reference": lambda rng: f"/{rng.choice(WORDS)}",
    "uri-template": lambda rng: f"https://example.com/{rng.choice(WORDS)}/{{id}}",
    "json-pointer": lambda rng: f"/{rng.choice(WORDS)}",
    "relative-json-pointer": lambda rng: f"0/{rng.choice(WORDS)}",
    "duration": lambda rng: f"P{rng.randint(1, 9)}D",
}


def _patterned(pattern: str, schema: dict[str, Any], rng: random.Random) -> str | None:
    """A string for `pattern` within the length bounds, repeats widened try by try."""
    low, high = schema.get("minLength", 0), schema.get("maxLength", math.inf)
    text = None
    for extra in (3, 3, 0, low, low + 3, 2 * low + 3, low, low + 3, 0, 3):
        text = string_for_pattern(pattern, rng, WORDS, extra)
        if text is None or low <= len(text) <= high:
            break
    return text
