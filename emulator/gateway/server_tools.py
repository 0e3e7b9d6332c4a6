"""OpenRouter's server tools besides web search: `openrouter:datetime`,
`openrouter:web_fetch` and `openrouter:image_generation` (`image_tool`), which the
gateway runs for the model before it answers.

They run as OpenRouter's web search tool does here (`web_search`): when the user has
just spoken and the tool choice lets the model call tools. Datetime reads the virtual
clock, in the tool's `parameters.timezone` (IANA, UTC by default). Web fetch reads each
`http(s)` URL of the user's last message, in order, up to `max_uses` (the URLs past it
fail, as OpenRouter's tool does once its uses are spent). Nothing is fetched: a page is
made up from its URL, deterministically; a host under `.invalid` cannot be reached, and
a URL outside the tool's domain filters is refused. What the tools return joins the
prompt as a system message before the last user message (input tokens, billed as
such), one line a call; a model that writes its own text then says what it read
(`said`). The routes show the calls: output items on `/responses` (`output_items`) and
`usage.server_tool_use_details` on chat and responses (`usage_details`). Anthropic's
web fetch tool on `/messages` reads its URLs the same way, with the provider's own
engine (nothing charged per page); `native_fetch` shows its calls in Anthropic's blocks.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, ValidationError

from emulator.bodies import OpenWireModel
from emulator.errors import ValidationFailed
from emulator.gateway import image_tool, web_fetch
from emulator.gateway.canonical import Message, Request
from emulator.gateway.image_tool import IMAGE_GENERATION, ImageGenerationConfig
from emulator.gateway.web_fetch import (
    FETCH_LIMIT,
    FREE_ENGINES,
    WebFetchConfig,
    host_of,
    urls_in,
)
from emulator.gateway.web_search import (
    ANTHROPIC_FETCH_TOOLS,
    WebResult,
    before_last_user,
    is_search_tool,
    lets_tools,
    query_of,
    shown_query,
)

if TYPE_CHECKING:
    from emulator.gateway.catalog import CatalogView

DATETIME = "openrouter:datetime"
WEB_FETCH = "openrouter:web_fetch"
KINDS = frozenset({DATETIME, WEB_FETCH, IMAGE_GENERATION})
# Anthropic's web fetch tool, by version (`/messages` only; answered in `native_fetch`).
NATIVE_FETCH_TOOLS = ANTHROPIC_FETCH_TOOLS
NATIVE_FETCH = "web_fetch"  # its calls' kind, and the name it is called by
ServerToolType = Literal[
    "openrouter:datetime", "openrouter:web_fetch", "openrouter:image_generation"
]
_RESULT_LINE = re.compile(r"^The ([a-z_:]+) tool returned: (\{.*\})$", re.M)
_ITEM_PREFIXES = {
    "openrouter:web_search": "ws",
    DATETIME: "dt",
    WEB_FETCH: "wf",
    IMAGE_GENERATION: "ig",
}
_ENDS = ("response.completed", "response.incomplete", "response.failed")


def _known_zone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(
            f"{name!r} is not an IANA timezone name (such as 'Europe/Paris')"
        ) from None
    return name


class DatetimeConfig(OpenWireModel):
    timezone: Annotated[str, AfterValidator(_known_zone)] | None = None


_CONFIGS: dict[str, type[OpenWireModel]] = {
    DATETIME: DatetimeConfig,
    WEB_FETCH: WebFetchConfig,
    IMAGE_GENERATION: ImageGenerationConfig,
}


@dataclass(frozen=True)
class Setting:
    """What the tools read besides the request: the virtual clock's time, the catalog
    (the image models) and the origin the emulator's media are served from."""

    now: float
    view: CatalogView
    origin: str


@dataclass(frozen=True)
class Run:
    """One call of a server tool: what it returned to the model (`result`), or why it
    failed (`error`)."""

    kind: str
    result: dict[str, Any]
    error: str | None = None
    code: str | None = None  # the error's, as Anthropic's tool names it
    billed: bool = False  # a page read by an engine that charges for it
    cost_micros: int = 0  # what the call cost upstream besides tokens (an image drawn)


def billed_fetches(runs_: tuple[Run, ...]) -> int:
    return sum(run.billed for run in runs_) if runs_ else 0  # none: nearly every request


def tool_micros(runs_: tuple[Run, ...]) -> int:
    """The upstream cost of the calls priced by themselves (the images drawn)."""
    return sum(run.cost_micros for run in runs_) if runs_ else 0


def is_server_tool(tool: Any) -> bool:
    kind = tool.get("type") if isinstance(tool, dict) else None
    return kind in KINDS or kind in NATIVE_FETCH_TOOLS


def called(body: dict[str, Any], messages: tuple[Message, ...]) -> dict[str, OpenWireModel]:
    """The server tools of a body (checked), if the model calls them now: the user has
    just spoken and the tool choice lets it."""
    if not body.get("tools"):  # nearly every request
        return {}
    found = configs(body)
    last_role = messages[-1].role if messages else "user"
    if not found or last_role != "user" or not lets_tools(body):
        return {}
    if IMAGE_GENERATION in found and not (
        _only_server_tools_required(body) or image_tool.asks_for_picture(messages)
    ):
        del found[IMAGE_GENERATION]  # nothing to draw: the model does not call it
    return found


def _only_server_tools_required(body: dict[str, Any]) -> bool:
    """A tool must be called (`required`, Anthropic's `any`) and only the gateway's tools
    could be: the model calls them whatever was said."""
    choice = body.get("tool_choice")
    if choice != "required" and not (isinstance(choice, dict) and choice.get("type") == "any"):
        return False
    return all(is_search_tool(t) or is_server_tool(t) for t in body.get("tools") or ())


def choice_after_server_tools(choice: Any, tools: tuple[Any, ...], body: dict[str, Any]) -> Any:
    """A request's tool choice once the gateway has run its server tools: `required`
    with no tool but them was their call, and the model then answers from their results."""
    if choice != "required" or tools:
        return choice
    given = body.get("tools") or ()
    return "auto" if any(is_search_tool(t) or is_server_tool(t) for t in given) else choice


def configs(body: dict[str, Any]) -> dict[str, OpenWireModel]:
    """Each server tool of a body with its checked `parameters` (400 naming the field
    for a bad one); none for a body without tools."""
    found: dict[str, OpenWireModel] = {}
    for index, tool in enumerate(body.get("tools") or ()):
        if not is_server_tool(tool):
            continue
        kind = tool["type"]
        if kind in NATIVE_FETCH_TOOLS:  # its fields are the messages schema's to check
            fields = ("max_uses", "max_content_tokens", "allowed_domains", "blocked_domains")
            given = {name: tool[name] for name in fields if tool.get(name) is not None}
            found[NATIVE_FETCH] = WebFetchConfig(engine="native", **given)
            continue
        if kind in found:
            raise ValidationFailed(
                f"`{kind}` is given twice in `tools`: send it once.", param=f"tools[{index}]"
            )
        found[kind] = _config(_CONFIGS[kind], tool.get("parameters"), index)
        if isinstance(config := found[kind], ImageGenerationConfig):
            config.at(index)
    return found


def _config(model: type[OpenWireModel], given: Any, index: int) -> OpenWireModel:
    where = f"tools[{index}].parameters"
    try:
        return model.model_validate({} if given is None else given, strict=True)
    except ValidationError as exc:
        first = exc.errors(include_input=False)[0]
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise ValidationFailed(
            f"The server tool's `parameters` are not valid: {message}.", param=where + field
        ) from exc


def runs(
    found: dict[str, OpenWireModel], messages: tuple[Message, ...], setting: Setting
) -> tuple[Run, ...]:
    """The calls the model makes when it may call tools now: the time, then each URL,
    then the picture."""
    runs_: list[Run] = []
    if isinstance(datetime_config := found.get(DATETIME), DatetimeConfig):
        runs_.append(_datetime(datetime_config, setting.now))
    for kind in (WEB_FETCH, NATIVE_FETCH):
        if isinstance(fetch := found.get(kind), WebFetchConfig):
            runs_ += _fetches(kind, fetch, messages)
    if isinstance(image := found.get(IMAGE_GENERATION), ImageGenerationConfig):
        result, error, cost = image_tool.draw(image, messages, setting.view, setting.origin)
        runs_.append(Run(IMAGE_GENERATION, result, error, cost_micros=cost))
    return tuple(runs_)


def _fetches(kind: str, fetch: WebFetchConfig, messages: tuple[Message, ...]) -> list[Run]:
    uses = min(fetch.max_uses or FETCH_LIMIT, FETCH_LIMIT)
    runs_ = []
    for number, url in enumerate(urls_in(query_of(messages))[:FETCH_LIMIT]):
        if number >= uses:
            spent = f"The web fetch tool's {uses} uses are spent (`max_uses`)."
            runs_.append(Run(kind, {"url": url}, spent, "max_uses_exceeded"))
        else:
            result, error, code = web_fetch.fetch(url, fetch)
            billed = error is None and fetch.engine not in FREE_ENGINES
            runs_.append(Run(kind, result, error, code, billed))
    return runs_


def _datetime(config: DatetimeConfig, now: float) -> Run:
    zone = config.timezone or "UTC"
    moment = datetime.fromtimestamp(now, ZoneInfo(zone))
    stamp = moment.isoformat(timespec="milliseconds")
    return Run(DATETIME, {"datetime": stamp.replace("+00:00", "Z"), "timezone": zone})


def inject(request: Request, runs_: tuple[Run, ...]) -> Request:
    """The request with what the tools returned as a system message before its last
    user message: one line a call, as the model reads it."""
    if not runs_:
        return request
    lines = [
        f"The {run.kind} tool returned: "
        + json.dumps(run.result if run.error is None else {**run.result, "error": run.error})
        for run in runs_
    ]
    return before_last_user(request, "\n".join(lines))


def said(messages: tuple[Message, ...]) -> str:
    """What a model that writes its own text adds after reading the tools' results in
    its prompt: the time it was told, and what each page it read is ("" for none)."""
    sentences = []
    for message in messages:
        if message.role != "system" or " tool returned: {" not in message.text:
            continue
        for match in _RESULT_LINE.finditer(message.text):
            try:
                result = json.loads(match[2])
            except ValueError:  # a client's own system text that looks like ours
                continue
            if isinstance(result, dict):
                sentences.append(_sentence(match[1], result))
    return "".join(s for s in sentences if s)


def _sentence(kind: str, result: dict[str, Any]) -> str:
    if kind == IMAGE_GENERATION:
        return image_tool.sentence(result, result.get("error"))
    if "error" in result:
        return f" I could not read {result.get('url')}."
    if kind == DATETIME and isinstance(result.get("datetime"), str):
        try:
            moment = datetime.fromisoformat(result["datetime"])
        except ValueError:
            return ""
        when = f"{moment:%A, %B} {moment.day}, {moment:%Y, %H:%M}"
        return f" It is {when} ({result.get('timezone')})."
    if kind in (WEB_FETCH, NATIVE_FETCH) and isinstance(result.get("url"), str):
        host = host_of(result["url"]) or result["url"]
        return f" From [{host}]({result['url']}): {result.get('title')}."
    return ""


def output_items(
    response_id: str, runs_: tuple[Run, ...], query: str, found: tuple[WebResult, ...]
) -> list[dict[str, Any]]:
    """The server tools' calls as the responses format shows them, before the model's
    own items: the web search tool's (`found`, for `query`), then the others'."""
    digest = hashlib.sha256(response_id.encode()).hexdigest()[:24]
    items: list[dict[str, Any]] = []
    if found:
        sources = [{"type": "url", "url": result.url} for result in found]
        action = {"type": "search", "query": shown_query(query), "sources": sources}
        items.append({"type": "openrouter:web_search", "status": "completed", "action": action})
    for run in runs_:
        item: dict[str, Any] = {"type": run.kind, "status": "completed"}
        if run.kind == DATETIME:
            item |= run.result
        elif run.kind == IMAGE_GENERATION:
            item |= {"status": "failed"} if run.error else image_tool.item_fields(run.result)
        else:
            item |= {k: v for k, v in run.result.items() if k != "http_status"}
            if "http_status" in run.result:
                item["httpStatus"] = run.result["http_status"]
        if run.error is not None:
            item["error"] = run.error
        items.append(item)
    for number, item in enumerate(items):
        item["id"] = f"{_ITEM_PREFIXES[item['type']]}_{digest}{number:02d}"
    return items


def with_items(events: Iterable[dict[str, Any]], items: list[dict[str, Any]]) -> Iterator[Any]:
    """Responses events with the server tools' items first: each added (in progress) and
    done right after `response.in_progress`, the model's items moved past them, the
    events after renumbered, and the items in the final response's output."""
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
                for kind, shown in (("added", {**item, "status": "in_progress"}), ("done", item)):
                    number += 1
                    yield {
                        "type": f"response.output_item.{kind}",
                        "sequence_number": number,
                        "output_index": index,
                        "item": shown,
                    }
            shift += 2 * len(items)


def usage_details(runs_: tuple[Run, ...], searched: bool) -> dict[str, Any] | None:
    """OpenRouter's `usage.server_tool_use_details`: the server tool calls the model
    asked for and those that gave a result (a search by the web search tool is one)."""
    if not runs_ and not searched:
        return None
    asked = len(runs_) + searched
    details = {"tool_calls_requested": asked}
    details["tool_calls_executed"] = asked - sum(run.error is not None for run in runs_)
    if searched:
        details["web_search_requests"] = 1
    return details
