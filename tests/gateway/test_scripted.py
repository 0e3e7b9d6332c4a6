"""The size of a scripted reply's pattern, measured before `regex` compiles it: `regex`
spells out each required repeat, and they multiply along the nesting."""

from __future__ import annotations

import time

import pytest
import regex

from emulator.gateway.scripted import MOST_REQUIRED_REPEATS, compiled, required_repeats


@pytest.mark.parametrize(
    ("pattern", "repeats"),
    [
        ("hello", 5),
        (r"\d{3}-\d{4}", 8),
        ("(ab){3}c", 7),
        ("(?:a{10}){10}", 110),  # the group's `:` counts too: an upper bound
        (r"\p{L}{3}", 3),
        (r"\{5}", 3),  # an escaped brace is a character, not a count
        ("[]{}]{4}", 4),  # a class is one item, braces in it too
        ("a{2,99999}", 2),  # only the required repeats are spelled out
        ("a*b+c?", 3),
    ],
)
def test_required_repeats_count_what_regex_spells_out(pattern: str, repeats: int) -> None:
    assert required_repeats(pattern) == repeats


@pytest.mark.parametrize(
    "pattern", ["a{99999999}", "(a{1000}){1000}", "((a{100}){100}){100}", "[a-z]{10001}"]
)
def test_a_pattern_too_large_to_compile_is_refused_at_once(pattern: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ValueError, match="required repeats come to 10,001 or more"):
        compiled(pattern)
    assert time.perf_counter() - start < 0.1


def test_the_largest_pattern_allowed_compiles_quickly() -> None:
    start = time.perf_counter()
    pattern = compiled(f"a{{{MOST_REQUIRED_REPEATS}}}")
    assert time.perf_counter() - start < 1
    assert pattern.fullmatch("A" * MOST_REQUIRED_REPEATS)  # case-blind, as rules are
    with pytest.raises(ValueError, match="not a regular expression"):
        compiled("(")
    assert isinstance(compiled("^ping$"), regex.Pattern)
