"""The tokenizer's invariants, on any text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.gateway.tokens import count_text, token_spans, truncate

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
