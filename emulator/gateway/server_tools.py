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
(`said`). The routes show the calls: output items on `/responses`
(`server_tool_items`) and `usage.server_tool_use_details` on chat and responses
(`usage_details`). OpenAI's image generation tool (`image_generation`, on `/responses`)
is run as OpenRouter's, and its tool choice (`{"type": "image_generation"}`) makes the
model call it whatever was said. Anthropic's
web fetch tool on `/messages` reads its URLs the same way, with the provider's own
engine (nothing charged per page); `native_fetch` shows its calls in Anthropic's blocks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, ValidationError

from emulator.bodies import OpenWireModel
from emulator.errors import ValidationFailed
from emulator.gateway import image_tool, web_fetch
from emulator.gateway.canonical import Message, Request
from emulator.gateway.image_tool import (
    IMAGE_GENERATION,
    OPENAI_IMAGE_GENERATION,
    Drawing,
    ImageGenerationConfig,
    OpenAIImageConfig,
)
from emulator.gateway.web_fetch import (
    FETCH_LIMIT,
    FREE_ENGINES,
    WebFetchConfig,
    host_of,
    urls_in,
)
from emulator.gateway.web_search import (
    ANTHROPIC_FETCH_TOOLS,
    before_last_user,
    is_search_tool,
    lets_tools,
    query_of,
)

if TYPE_CHECKING:
    from emulator.gateway.catalog import CatalogView

DATETIME = "openrouter:datetime"
WEB_FETCH = "openrouter:web_fetch"
KINDS = frozenset({DATETIME, WEB_FETCH, IMAGE_GENERATION})
IMAGE_KINDS = (IMAGE_GENERATION, OPENAI_IMAGE_GENERATION)
# Anthropic's web fetch tool, by version (`/messages` only; answered in `native_fetch`).
NATIVE_FETCH_TOOLS = ANTHROPIC_FETCH_TOOLS
NATIVE_FETCH = "web_fetch"  # its calls' kind, and the name it is called by
ServerToolType = Literal[
    "openrouter:datetime", "openrouter:web_fetch", "openrouter:image_generation"
]
_RESULT_LINE = re.compile(r"^The ([a-z_:]+) tool returned: (\{.*\})$", re.M)


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
    OPENAI_IMAGE_GENERATION: OpenAIImageConfig,
}


@dataclass(frozen=True)
class Setting:
    """What the tools read besides the request: the virtual clock's time, the catalog
    (the image models) and where the client reached the emulator (scheme and `Host`),
    for the links to the pictures it serves."""

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
    drawing: Drawing | None = None  # the image tools' picture


def billed_fetches(runs_: tuple[Run, ...]) -> int:
    return sum(run.billed for run in runs_) if runs_ else 0  # none: nearly every request


def tool_micros(runs_: tuple[Run, ...]) -> int:
    """The upstream cost of the calls priced by themselves (the images drawn)."""
    return sum(run.cost_micros for run in runs_) if runs_ else 0


def is_server_tool(tool: Any) -> bool:
    kind = tool.get("type") if isinstance(tool, dict) else None
    return kind in KINDS or kind in NATIVE_FETCH_TOOLS or kind == OPENAI_IMAGE_GENERATION


def called(body: dict[str, Any], messages: tuple[Message, ...]) -> dict[str, OpenWireModel]:
    """The server tools of a body (checked), if the model calls them now: the user has
    just spoken and the tool choice lets it."""
    if not body.get("tools"):  # nearly every request
        return {}
    found = configs(body)
    last_role = messages[-1].role if messages else "user"
    if not found or last_role != "user":
        return {}
    if forces_image(body) and OPENAI_IMAGE_GENERATION in found:  # that call alone
        return {OPENAI_IMAGE_GENERATION: found[OPENAI_IMAGE_GENERATION]}
    if not lets_tools(body):
        return {}
    for kind in IMAGE_KINDS:
        if kind in found and not (
            _only_server_tools_required(body) or image_tool.asks_for_picture(messages)
        ):
            del found[kind]  # nothing to draw: the model does not call it
    return found


def forces_image(body: dict[str, Any]) -> bool:
    """OpenAI's hosted tool choice, `{"type": "image_generation"}` (responses only)."""
    choice = body.get("tool_choice")
    return isinstance(choice, dict) and choice.get("type") == OPENAI_IMAGE_GENERATION


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
        # OpenAI's tool has its settings beside its type, OpenRouter's in `parameters`.
        if kind == OPENAI_IMAGE_GENERATION:
            found[kind] = _config(_CONFIGS[kind], tool, f"tools[{index}]")
        else:
            found[kind] = _config(
                _CONFIGS[kind], tool.get("parameters"), f"tools[{index}].parameters"
            )
        if isinstance(config := found[kind], ImageGenerationConfig):
            config.at(index)
    return found


def _config(model: type[OpenWireModel], given: Any, where: str) -> OpenWireModel:
    try:
        return model.model_validate({} if given is None else given, strict=True)
    except ValidationError as exc:
        first = exc.errors(include_input=False)[0]
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        what = "settings" if where.endswith("]") else "`parameters`"
        raise ValidationFailed(
            f"The server tool's {what} are not valid: {message}.", param=where + field
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
    for kind in IMAGE_KINDS:
        if isinstance(image := found.get(kind), ImageGenerationConfig):
            drawn = image_tool.draw(image, messages, setting.view, setting.origin)
            result, error, cost, drawing = drawn
            runs_.append(Run(kind, result, error, cost_micros=cost, drawing=drawing))
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
    if kind in IMAGE_KINDS:
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
