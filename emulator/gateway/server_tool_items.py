"""The server tools' calls as the responses format shows them: output items before the
model's own (`output_items`), and in a stream each added and done right after
`response.in_progress` (`with_items`); an image generation call of OpenAI's tool streams
its own events and partial images between the two, as OpenAI's API does."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

from emulator.gateway import image_tool
from emulator.gateway.image_tool import IMAGE_CALL, IMAGE_GENERATION, OPENAI_IMAGE_GENERATION
from emulator.gateway.server_tools import DATETIME, IMAGE_KINDS, WEB_FETCH, Run
from emulator.gateway.web_search import WebResult, shown_query

OPENAI_SEARCH_CALL = "web_search_call"  # OpenAI's item of its web search tool's call
_ITEM_PREFIXES = {
    "openrouter:web_search": "ws",
    OPENAI_SEARCH_CALL: "ws",
    DATETIME: "dt",
    WEB_FETCH: "wf",
    IMAGE_GENERATION: "ig",
    IMAGE_CALL: "ig",
}
_ENDS = ("response.completed", "response.incomplete", "response.failed")


def output_items(
    response_id: str,
    runs_: tuple[Run, ...],
    query: str,
    found: tuple[WebResult, ...],
    openai_search: bool = False,
) -> list[dict[str, Any]]:
    """The server tools' calls, before the model's own items: the web search tool's
    (`found`, for `query`; OpenAI's `web_search_call` when its tool was OpenAI's), then
    the others'."""
    digest = hashlib.sha256(response_id.encode()).hexdigest()[:24]
    items: list[dict[str, Any]] = []
    if found:
        sources = [{"type": "url", "url": result.url} for result in found]
        action = {"type": "search", "query": shown_query(query), "sources": sources}
        kind = OPENAI_SEARCH_CALL if openai_search else "openrouter:web_search"
        items.append({"type": kind, "status": "completed", "action": action})
    items += (_item(run) for run in runs_)
    for number, item in enumerate(items):
        item["id"] = f"{_ITEM_PREFIXES[item['type']]}_{digest}{number:02d}"
    return items


def _item(run: Run) -> dict[str, Any]:
    item: dict[str, Any] = {"type": run.kind, "status": "completed"}
    if run.kind in IMAGE_KINDS:
        if run.drawing is not None:
            return item | image_tool.item_fields(run.result, run.drawing)
        if run.kind != IMAGE_GENERATION:  # OpenAI's: an error object, and no picture
            failure = {"type": "server_error", "code": "image_model_unavailable"}
            error = failure | {"message": run.error}
            return {"type": IMAGE_CALL, "status": "failed", "result": None, "error": error}
        item["status"] = "failed"
    elif run.kind == DATETIME:
        item |= run.result
    else:
        item |= {k: v for k, v in run.result.items() if k != "http_status"}
        if "http_status" in run.result:
            item["httpStatus"] = run.result["http_status"]
    if run.error is not None:
        item["error"] = run.error
    return item


def with_items(
    events: Iterable[dict[str, Any]], items: list[dict[str, Any]], runs_: tuple[Run, ...]
) -> Iterator[Any]:
    """Responses events with the server tools' items first: each added (in progress) and
    done right after `response.in_progress`, the model's items moved past them, the
    events after renumbered, and the items in the final response's output. `runs_` are
    the calls the items show (OpenAI's image tool's picture, for its partial images)."""
    drawing = next((run.drawing for run in runs_ if run.kind == OPENAI_IMAGE_GENERATION), None)
    shift = 0
    for event in events:
        event = {**event, "sequence_number": event["sequence_number"] + shift}
        if "output_index" in event:
            event["output_index"] += len(items)
        if event["type"] in _ENDS:
            response = event["response"]
            event["response"] = {**response, "output": items + response["output"]}
        yield event
        if event["type"] == "response.in_progress":
            number = event["sequence_number"]
            for index, item in enumerate(items):
                for kind, fields in _item_events(item, drawing):
                    number += 1
                    shift += 1
                    yield {"type": kind, "sequence_number": number, "output_index": index, **fields}


def _item_events(
    item: dict[str, Any], drawing: image_tool.Drawing | None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """An item's events: added (in progress), OpenAI's image generation call's own, done."""
    in_progress = {**item, "status": "in_progress"}
    if item["type"] == IMAGE_CALL:
        in_progress["result"] = None
    yield "response.output_item.added", {"item": in_progress}
    if item["type"] == IMAGE_CALL:
        yield from _image_events(item, drawing if item["status"] == "completed" else None)
    if item["type"] == OPENAI_SEARCH_CALL:  # OpenAI's own events of its search
        for step in ("in_progress", "searching", "completed"):
            yield f"response.web_search_call.{step}", {"item_id": item["id"]}
    yield "response.output_item.done", {"item": item}


def _image_events(
    item: dict[str, Any], drawing: image_tool.Drawing | None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """OpenAI's image generation call's events between its item added and done: in
    progress, generating, each partial image, completed (a failed call: in progress)."""
    where = {"item_id": item["id"]}
    yield "response.image_generation_call.in_progress", where
    if drawing is None:
        return
    yield "response.image_generation_call.generating", where
    settings = {k: item[k] for k in ("background", "output_format", "quality", "size")}
    for index in range(drawing.partials):
        partial = image_tool.base64_of(drawing.picture.partial(index, drawing.partials))
        fields = {"partial_image_index": index, "partial_image_b64": partial, **settings}
        yield "response.image_generation_call.partial_image", where | fields
    yield "response.image_generation_call.completed", where
