"""The made-up log probabilities: tokens that join to the text, one per output token,
alternatives in order; cut and split with the text as the gateway cuts and streams it."""

from __future__ import annotations

import math
import random

from hypothesis import given
from hypothesis import strategies as st

from emulator.gateway import logprobs
from emulator.gateway.canonical import Completion, Finish, TextDelta, TokenLogprob
from emulator.gateway.providers import stream_pieces
from emulator.gateway.stops import cut_completion, cut_deltas
from emulator.gateway.tokens import count_text

FAMILIES = st.sampled_from(["chat", "responses", "messages"])
TEXTS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80)
SENTENCE = "Start with rivers, then check how it affects lakes.  Ça va? 42 ok "


@given(TEXTS, FAMILIES)
def test_the_tokens_join_to_the_text_one_per_output_token(text: str, family: str) -> None:
    tokens = logprobs.token_texts(text, family)
    assert "".join(tokens) == text
    count = count_text(text, family)
    assert len(tokens) == (count if count or not text else 1)  # only spaces: one token
    assert all(tokens)


@given(TEXTS, FAMILIES, st.integers(0, 20), st.integers(0, 2**32))
def test_each_entry_lists_its_alternatives_in_order(
    text: str, family: str, top: int, seed: int
) -> None:
    entries = logprobs.draw(text, family, random.Random(seed), top)
    assert "".join(e.token for e in entries) == text
    for entry in entries:
        assert entry.logprob <= 0
        assert len(entry.top) == top
        if top:
            assert entry.top[0] == (entry.token, entry.logprob)  # the token written leads
            ranked = [logprob for _, logprob in entry.top]
            assert ranked == sorted(ranked, reverse=True)
            assert len({token for token, _ in entry.top}) == top  # distinct
            assert sum(math.exp(logprob) for logprob in ranked) < 1.0 + 1e-6
    assert entries == logprobs.draw(text, family, random.Random(seed), top)  # repeatable


@given(st.integers(0, len(SENTENCE)))
def test_a_cut_keeps_the_tokens_of_what_is_kept(length: int) -> None:
    entries = logprobs.draw(SENTENCE, "chat", random.Random(1), 2)
    kept = logprobs.cut(entries, length)
    assert "".join(e.token for e in kept) == SENTENCE[:length]


@given(TEXTS, FAMILIES)
def test_a_streamed_piece_carries_the_entries_of_its_tokens(text: str, family: str) -> None:
    entries = logprobs.draw(text, family, random.Random(7), 1)
    pieces = stream_pieces(text, family)
    split = logprobs.split(entries, pieces)
    assert len(split) == len(pieces)
    for piece, own in zip(pieces, split, strict=True):
        assert "".join(e.token for e in own) == piece
    assert tuple(e for own in split for e in own) == entries


def test_the_wire_form_reads_back_as_it_was() -> None:
    entry = TokenLogprob(" café", -0.25, ((" café", -0.25), (" tea", -2.5)))
    wire = logprobs.entry_json(entry)
    assert wire == {
        "token": " café",
        "logprob": -0.25,
        "bytes": list(" café".encode()),
        "top_logprobs": [
            {"token": " café", "logprob": -0.25, "bytes": list(" café".encode())},
            {"token": " tea", "logprob": -2.5, "bytes": list(b" tea")},
        ],
    }
    assert logprobs.entry_of(wire) == entry
    bare = logprobs.entry_json(entry, with_bytes=False)  # as the responses stream sends it
    assert "bytes" not in bare and "bytes" not in bare["top_logprobs"][0]
    assert logprobs.entry_of(bare) == entry


def test_the_gateways_stop_cuts_the_entries_with_the_text() -> None:
    text = "Tea came first. Then coffee."
    entries = logprobs.draw(text, "responses", random.Random(3), 0)
    whole = Completion(text, (), "stop", 4, count_text(text, "responses"), logprobs=entries)
    cut = cut_completion(whole, ("irst",), "responses")
    assert cut.text == "Tea came f"
    assert cut.logprobs is not None
    assert "".join(e.token for e in cut.logprobs) == "Tea came f"
    pieces = stream_pieces(text, "responses")
    deltas = [
        TextDelta(piece, 0, own)
        for piece, own in zip(pieces, logprobs.split(entries, pieces), strict=True)
    ]
    streamed = cut_deltas([*deltas, Finish("stop", 4, 9)], ("irst",), "responses")
    texts = [d for d in streamed if isinstance(d, TextDelta)]
    assert "".join(d.text for d in texts) == "Tea came f"
    for delta in texts:
        assert delta.logprobs is not None
        assert "".join(e.token for e in delta.logprobs) == delta.text
