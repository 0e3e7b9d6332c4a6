"""The citations of a `/messages` request's sources (`sources`: search results and
documents) in its answer, whole and streamed, as Anthropic's API gives them: the
answer's text comes as several text blocks, those that cite carrying `citations`
(`search_result_location`, `char_location`, `content_block_location`, `page_location`,
or a web search's `web_search_result_location`).

Each sentence in turn cites the next source with citations enabled, until the
sentences or the sources run out; the rest of the text is one block without
citations. A sentence cites the part of its source (a search result's text block, a
plain text's sentence, a content source's text block) that shares most words with it.
The blocks' texts join back into the answer's text, so what is billed and streamed as
text is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from emulator.gateway.canonical import Delta, TextDelta
from emulator.gateway.sources import sentence_spans


class Citable(Protocol):
    """What is cited: a request's source (`sources.Source`) or a web search's result
    (`native_search.WebSource`)."""

    @property
    def cited(self) -> bool: ...

    def citation(self, sentence: str) -> dict[str, Any]: ...


def cited_blocks(text: str, sources: Sequence[Citable]) -> list[dict[str, Any]]:
    """The answer's text as text blocks, with the citations described above."""
    citable = [s for s in sources if s.cited]
    if not citable or not text:
        return [{"type": "text", "text": text}] if text else []
    blocks: list[dict[str, Any]] = []
    end = 0
    for (start, end), source in zip(sentence_spans(text), citable, strict=False):
        sentence = text[start:end]
        blocks.append({"type": "text", "text": sentence, "citations": [source.citation(sentence)]})
    if text[end:]:
        blocks.append({"type": "text", "text": text[end:]})
    return blocks


def cite_content(content: list[dict[str, Any]], sources: Sequence[Citable]) -> None:
    """A whole answer's text block becomes its cited blocks."""
    for at, block in enumerate(content):
        if block["type"] == "text":
            content[at : at + 1] = cited_blocks(block["text"], sources)
            return


def cite_stream(
    events: Iterator[dict[str, Any]], deltas: Iterable[Delta], sources: Sequence[Citable]
) -> Iterator[dict[str, Any]]:
    """A stream's events with its text's cited blocks (`cited_events`), when a source
    is cited (`deltas`: all the answer's, whose text the blocks split)."""
    if not any(source.cited for source in sources):
        return events
    text = "".join(d.text for d in deltas if isinstance(d, TextDelta))
    blocks = cited_blocks(text, sources)
    return cited_events(events, blocks) if any("citations" in b for b in blocks) else events


def cited_events(
    events: Iterable[dict[str, Any]], blocks: list[dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """A stream's text block as the `blocks` (`cited_blocks` of its whole text): each
    opens, sends its citations (`citations_delta`) then its text, and closes; the
    blocks after it are renumbered."""
    shift = 0  # blocks added before the ones still to come
    base: int | None = None  # the text's first block, while it streams
    current = taken = 0  # the block being sent, and how much of its text is sent
    for event in events:
        kind = event["type"]
        if kind == "content_block_start" and event["content_block"]["type"] == "text":
            base, current, taken = event["index"], 0, 0
            yield from _opened(base, blocks[0])
        elif base is not None and kind == "content_block_delta":
            piece = event["delta"]["text"]
            while piece:
                more = current + 1 < len(blocks)  # the last block takes what is left
                if more and taken == len(blocks[current]["text"]):
                    yield {"type": "content_block_stop", "index": base + current}
                    current, taken, more = current + 1, 0, current + 2 < len(blocks)
                    yield from _opened(base + current, blocks[current])
                part = piece[: len(blocks[current]["text"]) - taken] if more else piece
                taken, piece = taken + len(part), piece[len(part) :]
                delta = {"type": "text_delta", "text": part}
                yield {"type": "content_block_delta", "index": base + current, "delta": delta}
        elif base is not None and kind == "content_block_stop":
            yield {"type": "content_block_stop", "index": base + current}
            base, shift = None, current
        elif "index" in event:
            yield {**event, "index": event["index"] + shift}
        else:
            yield event


def _opened(index: int, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    opened = {"type": "text", "text": ""}
    yield {"type": "content_block_start", "index": index, "content_block": opened}
    for citation in block.get("citations", ()):
        delta = {"type": "citations_delta", "citation": citation}
        yield {"type": "content_block_delta", "index": index, "delta": delta}
