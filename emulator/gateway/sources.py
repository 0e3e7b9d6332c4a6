"""The sources a `/messages` request brings for its answer to cite, in a user turn or
a tool's result: Anthropic's `search_result` blocks and its `document` blocks.

The model reads each as text (`as_text`), billed as the prompt's. `citations.enabled`
asks for citations of it (`source_citations`): of search results on all of a
request's or none, and of no source with structured output, as Anthropic's API rules.
A document is read, and cited, when its data is sent: a plain-text source (cited by
characters, a sentence at a time), a content source (cited by text block) or a base64
PDF (its pages' text, `files.pdf_pages`, cited by page a sentence at a time). A URL or
a file id is not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from emulator.errors import ValidationFailed
from emulator.gateway.files import pdf_pages
from emulator.gateway.images import decode_base64

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class SearchResult:
    index: int  # among the request's search results, in the order they come
    where: str  # its place in the request, as errors name it
    cited: bool  # citations enabled
    source: str
    title: str
    texts: tuple[str, ...]  # its content's text blocks

    def citation(self, sentence: str) -> dict[str, Any]:
        """The text block that shares most words with the sentence, cited."""
        block = closest(sentence, self.texts)
        return {
            "type": "search_result_location",
            "source": self.source,
            "title": self.title,
            "cited_text": self.texts[block],
            "search_result_index": self.index,
            "start_block_index": block,
            "end_block_index": block + 1,
        }


@dataclass(frozen=True)
class Document:
    index: int  # among the request's documents
    where: str
    enabled: bool  # citations asked for
    title: str | None
    source: Any  # as sent

    @property
    def cited(self) -> bool:
        """Citations asked for, and a text to cite (a URL or a file has none)."""
        return self.enabled and bool(_document_text(self.source))

    @cached_property
    def _parts(self) -> tuple[tuple[dict[str, Any], str], ...]:
        """Read only when cited, not when the request is checked."""
        return _document_parts(self.source)

    def citation(self, sentence: str) -> dict[str, Any]:
        """The sentence (or block) of it that shares most words with the sentence."""
        at = closest(sentence, tuple(text for _, text in self._parts))
        place, text = self._parts[at]
        cited = {"cited_text": text, "document_index": self.index, "document_title": self.title}
        return {**place, **cited, "file_id": None}


Source = SearchResult | Document


def found(messages: Any) -> list[Source]:
    """The sources of a request's messages, as sent (dicts) or validated (the schema's
    blocks, whose unknown fields are attributes), in the order they come."""
    sources: list[Source] = []
    counts = {"search_result": 0, "document": 0}
    for where, block in _blocks(messages):
        kind = _field(block, "type")
        index, counts[kind] = counts[kind], counts[kind] + 1
        enabled = bool((_field(block, "citations") or {}).get("enabled"))
        if kind == "search_result":
            texts = tuple(_field(part, "text") for part in _field(block, "content"))
            source, title = _field(block, "source"), _field(block, "title")
            sources.append(SearchResult(index, where, enabled, source, title, texts))
        else:
            title, source = _field(block, "title"), _field(block, "source")
            sources.append(Document(index, where, enabled, title, source))
    return sources


def _blocks(messages: Any) -> Iterator[tuple[str, Any]]:
    for m, message in enumerate(messages):
        content = _field(message, "content")
        if not isinstance(content, list):
            continue
        for b, block in enumerate(content):
            kind = _field(block, "type")
            if kind in ("search_result", "document"):
                yield f"messages[{m}].content[{b}]", block
            elif kind == "tool_result" and isinstance(_field(block, "content"), list):
                for p, part in enumerate(_field(block, "content")):
                    if _field(part, "type") in ("search_result", "document"):
                        yield f"messages[{m}].content[{b}].content[{p}]", part


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _document_parts(source: Any) -> tuple[tuple[dict[str, Any], str], ...]:
    """What of a document is cited, each with its place: a plain text's sentences (by
    character), a content source's text blocks, a PDF's sentences (by page)."""
    if not isinstance(source, dict):
        return ()
    if source.get("type") == "content":
        texts = _content_texts(source.get("content"))
        return tuple((_place("content_block", at), text) for at, text in enumerate(texts))
    if source.get("type") == "base64":
        return tuple(
            (_place("page", number), page[start:end])
            for number, page in enumerate(_pdf_pages(source), start=1)
            for start, end in sentence_spans(page)
        )
    text = _document_text(source)
    return tuple(
        (_place("char", start, end), text[start:end]) for start, end in sentence_spans(text)
    )


def _place(unit: str, start: int, end: int | None = None) -> dict[str, Any]:
    """A citation's location: a range of characters, or one block or page."""
    names = {"char": "char_index", "content_block": "block_index", "page": "page_number"}
    return {
        "type": f"{unit}_location",
        f"start_{names[unit]}": start,
        f"end_{names[unit]}": start + 1 if end is None else end,
    }


def _content_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content] if content else []
    if not isinstance(content, list):
        return []
    return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]


def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """A text's sentences as ranges that cover it, each with the space after it."""
    if not text:
        return ()
    starts = [0, *(m.end() for m in _SENTENCE_END.finditer(text) if m.end() < len(text))]
    return tuple(zip(starts, [*starts[1:], len(text)], strict=True))


def closest(sentence: str, texts: tuple[str, ...]) -> int:
    """The text sharing most words with the sentence (the first of the closest)."""
    words = set(_WORD.findall(sentence.lower()))
    shared = [len(words & set(_WORD.findall(text.lower()))) for text in texts]
    return shared.index(max(shared))


def check(sources: list[Source], structured: bool) -> None:
    """No citations with structured output; a search result's citations on all of them
    or none."""
    cited = [s for s in sources if s.cited]
    if not cited:
        return
    if structured:
        raise ValidationFailed(
            "Citations are not supported with structured outputs: turn off `citations` "
            "on the search results and documents, or leave out `output_config.format`.",
            param=f"{cited[0].where}.citations",
        )
    results = [s for s in sources if isinstance(s, SearchResult)]
    on = next((r for r in results if r.cited), None)
    off = next((r for r in results if not r.cited), None)
    if on is not None and off is not None:
        raise ValidationFailed(
            "Citations must be enabled on all of a request's search results or on none: "
            f"`{on.where}` enables them and `{off.where}` does not.",
            param=f"{off.where}.citations",
        )


def as_text(block: dict[str, Any]) -> str:
    """A source as the model reads it: a search result's title, source and text; a
    document's title, context and text (none for a URL or a file)."""
    if block["type"] == "search_result":
        body = "\n".join(part["text"] for part in block["content"])
        return f"{block['title']}\nSource: {block['source']}\n{body}"
    said = (block.get("title"), block.get("context"), _document_text(block.get("source")))
    return "\n".join(part for part in said if part)


def _document_text(source: Any) -> str:
    if not isinstance(source, dict):
        return ""
    if source.get("type") == "text" and isinstance(source.get("data"), str):
        return str(source["data"])
    if source.get("type") == "content":
        return "\n".join(_content_texts(source.get("content")))
    if source.get("type") == "base64":
        return "\n\n".join(page for page in _pdf_pages(source) if page)
    return ""


def _pdf_pages(source: dict[str, Any]) -> tuple[str, ...]:
    """A base64 PDF's pages' text (checked when the request was: readable)."""
    data = decode_base64(source.get("data") or "")
    return pdf_pages(data) if data else ()
