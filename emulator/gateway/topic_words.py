"""The words a prompt is about: its words of four letters or more, lower-cased, less
the common ones and the instructions (`summarize`); of a URL, only its path's (a page's
scheme and host say little about what is asked). The generated answers, the emulated
web search and the fetched pages draw on them."""

from __future__ import annotations

import re

STOPWORDS = frozenset(
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
        "compare",
        "describe",
        "summarize",
        "summarise",
        "show",
        "help",
    ]
)

_WORD = re.compile(r"[A-Za-z][A-Za-z-]{3,}")
_URL_START = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s]*")


def topic_words(text: str) -> list[str]:
    text = _URL_START.sub(" ", text)
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOPWORDS]
