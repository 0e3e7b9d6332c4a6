"""The web search results an answer cites (`web_search`), as annotations: chat's
`message.annotations` (OpenRouter's `url_citation` with `url_citation: {...}`) and the
responses format's `output_text` annotations (OpenAI's flat `url_citation`), whole and
streamed. A result is cited when the answer's text holds its markdown link. Chat's
annotations end with the PDFs the request's `file` parts were parsed into
(`files.parsed_files`), as OpenRouter hands them back."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from emulator.gateway.canonical import Completion, Delta, TextDelta
from emulator.gateway.web_search import WebResult

Found = tuple[WebResult, ...]
Files = Sequence[dict[str, Any]]  # the files a chat request's PDFs were parsed into


def _cited(text: str, found: Found) -> list[tuple[int, int, WebResult]]:
    """Each result whose link the text holds, where the link is (`end`: just past it)."""
    spans = []
    for result in found:
        link = f"[{result.domain}]({result.url})"
        start = text.find(link)
        if start >= 0:
            spans.append((start, start + len(link), result))
    return sorted(spans, key=lambda span: span[0])


def chat_citations(text: str, found: Found) -> list[dict[str, Any]]:
    return [
        {
            "type": "url_citation",
            "url_citation": {
                "url": result.url,
                "title": result.title,
                "content": result.content,
                "start_index": start,
                "end_index": end,
            },
        }
        for start, end, result in _cited(text, found)
    ]


def responses_citations(text: str, found: Found) -> list[dict[str, Any]]:
    return [
        {
            "type": "url_citation",
            "start_index": start,
            "end_index": end,
            "url": result.url,
            "title": result.title,
        }
        for start, end, result in _cited(text, found)
    ]


def annotate_chat(
    answer: dict[str, Any], completions: list[Completion], found: Found, files: Files = ()
) -> None:
    """A whole chat answer's messages gain their `annotations` (the files parsed last)."""
    for choice, completion in zip(answer["choices"], completions, strict=True):
        cited = chat_citations(completion.text or "", found)
        choice["message"]["annotations"] = cited + list(files)


def annotated_chunks(
    chunks: Iterable[dict[str, Any]], deltas: list[Delta], found: Found, files: Files = ()
) -> Iterator[dict[str, Any]]:
    """Chat chunks with, before each choice's finish, a chunk of its `annotations`."""
    texts: dict[int, list[str]] = {}
    for delta in deltas:
        if isinstance(delta, TextDelta):
            texts.setdefault(delta.choice, []).append(delta.text)
    for chunk in chunks:
        for choice in chunk["choices"]:
            if choice["finish_reason"] is not None:
                cited = chat_citations("".join(texts.get(choice["index"], ())), found)
                cited += files
                piece = {**choice, "delta": {"annotations": cited}, "finish_reason": None}
                if "native_finish_reason" in piece:
                    piece["native_finish_reason"] = None
                yield {**chunk, "choices": [piece]}
        yield chunk


def annotate_output(output: list[dict[str, Any]], found: Found) -> None:
    """A response's message items: each `output_text` part gains its annotations."""
    for item in output:
        if item.get("type") == "message":
            for part in item["content"]:
                if part.get("type") == "output_text":
                    part["annotations"] = responses_citations(part["text"], found)


def annotated_events(events: Iterable[dict[str, Any]], found: Found) -> Iterator[dict[str, Any]]:
    """Responses events with OpenAI's `response.output_text.annotation.added` before
    each `output_text.done` (the events after renumbered), and the annotations in the
    parts, items and response that the later events carry."""
    shift = 0
    for event in events:
        event = {**event, "sequence_number": event["sequence_number"] + shift}
        kind = event["type"]
        if kind == "response.output_text.done":
            for index, annotation in enumerate(responses_citations(event["text"], found)):
                yield {
                    "type": "response.output_text.annotation.added",
                    "sequence_number": event["sequence_number"],
                    "item_id": event["item_id"],
                    "output_index": event["output_index"],
                    "content_index": event["content_index"],
                    "annotation_index": index,
                    "annotation": annotation,
                }
                shift += 1
                event["sequence_number"] += 1
        elif kind == "response.content_part.done" and event["part"].get("type") == "output_text":
            part = event["part"]
            event["part"] = {**part, "annotations": responses_citations(part["text"], found)}
        elif kind == "response.output_item.done":
            annotate_output([event["item"]], found)
        elif kind in ("response.completed", "response.incomplete"):
            annotate_output(event["response"]["output"], found)
        yield event
