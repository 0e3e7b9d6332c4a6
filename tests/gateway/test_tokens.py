"""The tokenizer's invariants, on any text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.gateway.tokens import _PATTERNS, count_text, token_spans, truncate

FAMILIES = ("chat", "responses", "messages")


@pytest.mark.parametrize("family", FAMILIES)
@given(text=st.text(max_size=200), limit=st.integers(min_value=0, max_value=60))
def test_a_cut_text_counts_as_many_tokens_as_truncate_says(
    family: str, text: str, limit: int
) -> None:
    cut, tokens, was_cut = truncate(text, family, limit)
    assert count_text(cut, family) == tokens == min(limit, len(token_spans(text, family)))
    assert was_cut == (len(token_spans(text, family)) > limit)
    assert text.startswith(cut)


@pytest.mark.parametrize("family", FAMILIES)
@given(text=st.text(alphabet=st.characters(max_codepoint=127), max_size=300))
def test_ascii_text_counts_as_the_unicode_rule_says(family: str, text: str) -> None:
    # ASCII text takes a faster pattern: the same tokens, control characters included.
    unicode_rule = _PATTERNS[family]
    assert count_text(text, family) == len(unicode_rule.findall(text))
    assert token_spans(text, family) == [m.span() for m in unicode_rule.finditer(text)]


def test_the_documented_examples() -> None:
    assert [count_text("hello there", f) for f in FAMILIES] == [4, 2, 4]  # runs of 4, 5, 3
    assert count_text("tokenizer, v2!", "chat") == 6  # toke nize r , v2 !
    assert count_text("naïve café", "chat") == count_text("naive cafe", "chat")
