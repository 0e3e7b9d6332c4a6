"""What a request needs of a route: tool use, image or audio input, image or audio
output, room for its prompt.

As on a real gateway, a route is a candidate only if its model has the
capabilities the request uses (`tools` for tool definitions, unless
`tool_choice` is `none`; `vision` for image parts; catalog `capabilities`; audio
parts need `audio` among its `input_modalities`, and a provider whose format
carries audio: chat or responses, Anthropic's messages has none; `image` or
`audio` output, asked by `modalities` (images on chat and responses, sound on
chat), needs it among its `output_modalities` and a chat provider:
`gateway.image_output`, `gateway.audio_output`), and its provider's context can
hold the prompt and the output asked for (`context_length`; the output counts
when `max_tokens` is set, capped to the route's output limit, as OpenRouter's
"you requested about N tokens (P of text input, M in the output)"). With
`provider.require_parameters`, it must also take every parameter the request
sets: reasoning settings (the `reasoning` capability; without it a model that
cannot reason ignores them, as OpenRouter's providers do), a JSON output format
(the `structured_output` capability; without the preference every model answers
in the format, leniently) and log probabilities (not the messages format). A
prompt too long for every route is cut from the middle when the request asks for
OpenRouter's middle-out compression (`middle_out`). If that leaves no route, the
answer names the need: 503 `no_route_available` for a capability or parameter
(`param` `tools`, `logprobs`, the format's field, or the prompt's field), 400
`context_length_exceeded` for a prompt too long for every route (`param` the
output's field when the prompt alone fits). A request that is clearly short is
not tokenized: one pass over its messages bounds its tokens (about 1 us a
request)."""

from __future__ import annotations

from emulator.errors import InvalidRequest, NoRouteAvailable
from emulator.gateway import audio, middle_out
from emulator.gateway.canonical import Request
from emulator.gateway.catalog import CatalogView
from emulator.gateway.content import prompt_tokens, tools_text
from emulator.gateway.logprobs import FORMATS as LOGPROB_FORMATS
from emulator.gateway.routing import ProviderPrefs, Route
from emulator.gateway.tokens import IMAGE_TOKENS

_MOST_FRAMING = 5  # tokens a message adds in any family (tokens.py)

# capability -> (the request's field that needs it, what it is called in a sentence)
_NEEDS = {
    "tools": ("tools", "tool use"),
    "vision": ("messages", "image input"),
    "reasoning": ("reasoning", "reasoning"),
    "structured_output": ("format", "structured output"),
    "audio": ("messages", "audio input"),
    "image_output": ("modalities", "image output"),
    "audio_output": ("modalities", "audio output"),
}

# endpoint -> (the field of its prompt, the field of its output format)
_FIELDS = {
    "chat.completions": ("messages", "response_format"),
    "responses": ("input", "text.format"),
    "messages": ("messages", "output_config.format"),
}
_OUTPUT_FIELDS = {"responses": "max_output_tokens"}  # else `max_tokens`


def able_routes(
    view: CatalogView,
    routes: list[Route],
    request: Request,
    endpoint: str = "chat.completions",
    prefs: ProviderPrefs | None = None,
    compression: bool | None = False,
) -> tuple[list[Route], Request]:
    """The routes that can serve `request`, sent to `endpoint`, and the request they are
    sent (its prompt cut from the middle when it is too long and `compression` says so:
    see `middle_out.asked`); raises when none of `routes` can."""
    prompt_param = _FIELDS[endpoint][0]
    if prefs is not None and prefs.require_parameters and request.logprobs is not None:
        routes = _taking_logprobs(routes, "include" if prompt_param == "input" else "logprobs")
    # One pass over the messages (this runs on every request): what they need, and an
    # upper bound of their tokens in any family (a token is at least one character).
    needs: set[str] = set()
    most = len(tools_text(request)) if request.tools else 0
    for m in request.messages:
        most += len(m.text) + _MOST_FRAMING
        if m.images:
            needs.add("vision")
            most += IMAGE_TOKENS * m.images
        if m.audio:
            needs.add("audio")
            most += audio.message_tokens(m)
        for call in m.tool_calls:
            most += len(call.name) + len(call.arguments)
    if request.tools and request.tool_choice != "none":
        needs.add("tools")
    if request.images_out is not None:
        needs.add("image_output")
    if request.audio_out is not None:
        needs.add("audio_output")
    if prefs is not None and prefs.require_parameters:
        if request.reasoning is not None:
            needs.add("reasoning")  # else a model that cannot reason ignores it
        if request.response_format is not None:
            needs.add("structured_output")
    if needs:
        routes = _capable(view, routes, request, needs, endpoint)
    if all(most <= _room(r, request) for r in routes):
        return routes, request  # surely fits: no need to count
    fitting = [r for r in routes if prompt_tokens(request, r.wire_format) <= _room(r, request)]
    sent = request
    if not fitting and compression is not False:
        fitting, request = _compressed(routes, request, compression)
    if not fitting:
        raise _too_long(routes, sent, prompt_param, _OUTPUT_FIELDS.get(endpoint, "max_tokens"))
    return fitting, request


def _room(route: Route, request: Request) -> int:
    """The prompt tokens the route's context holds beside the output asked for."""
    return route.context_length - asked_output(request, route.max_output_tokens)


def asked_output(request: Request, output_limit: int) -> int:
    """The output tokens a context must hold beside the prompt: `max_tokens`, capped to
    the model's or provider's `output_limit`."""
    if not request.max_tokens:
        return 0  # none asked: the provider's output stops where the context ends
    return min(request.max_tokens, output_limit)


def _too_long(
    routes: list[Route], request: Request, prompt_param: str, output_param: str
) -> InvalidRequest:
    roomiest = max(routes, key=lambda r: _room(r, request))
    tokens = prompt_tokens(request, roomiest.wire_format)
    output = asked_output(request, roomiest.max_output_tokens)
    where = (
        f"the longest context of its routes is {roomiest.context_length:,} "
        f"({roomiest.model!r} on {roomiest.provider!r})"
    )
    if tokens > roomiest.context_length or not output:
        return InvalidRequest(
            f"This request's prompt is {tokens:,} tokens and {where}. Shorten the "
            "messages, or choose a model with a longer `context_length`.",
            param=prompt_param,
            code="context_length_exceeded",
        )
    return InvalidRequest(
        f"This request asks for about {tokens + output:,} tokens ({tokens:,} of prompt, "
        f"{output:,} of output: `{output_param}`) and {where}. Lower `{output_param}`, "
        "shorten the messages, or use middle-out compression "
        '(`transforms: ["middle-out"]`).',
        param=output_param,
        code="context_length_exceeded",
    )


def _compressed(
    routes: list[Route], request: Request, mode: bool | None
) -> tuple[list[Route], Request]:
    """OpenRouter's choice of route to compress for: the first whose context holds at
    least half the prompt, else the longest; then the routes the shorter prompt fits."""
    tokens = {id(r): prompt_tokens(request, r.wire_format) for r in routes}
    roomy = [r for r in routes if 2 * r.context_length >= tokens[id(r)]]
    target = roomy[0] if roomy else max(routes, key=lambda r: r.context_length)
    if not middle_out.applies(mode, target.context_length):
        return [], request
    shorter = middle_out.compress(request, target.wire_format, _room(target, request))
    fitting = [r for r in routes if prompt_tokens(shorter, r.wire_format) <= _room(r, request)]
    return fitting, shorter


def _taking_logprobs(routes: list[Route], param: str) -> list[Route]:
    able = [r for r in routes if r.wire_format in LOGPROB_FORMATS]
    if not able:
        raise NoRouteAvailable(
            f"No route for {routes[0].model!r} gives log probabilities (`{param}`), and "
            "provider.require_parameters asks for routes that take every parameter sent. "
            "Choose a model with `logprobs` in its `supported_parameters` (GET "
            "/api/v1/models), or drop require_parameters to be answered without them.",
            param=param,
        )
    return able


def _capable(
    view: CatalogView, routes: list[Route], request: Request, needs: set[str], endpoint: str
) -> list[Route]:
    able = [r for r in routes if needs <= _capabilities(view, r.model)]
    if able and "audio" in needs:
        able = [r for r in able if r.wire_format in AUDIO_FORMATS]
        if not able:
            raise _no_audio_format(routes[0].model, _FIELDS[endpoint][0])
    for made in ("image", "audio"):
        if able and f"{made}_output" in needs:
            able = [r for r in able if r.wire_format in MEDIA_OUTPUT_FORMATS]
            if not able:
                raise _no_media_format(routes[0].model, made)
    if not able:
        missing = sorted(needs - _capabilities(view, routes[0].model))[0]
        param, what = _NEEDS[missing]
        prompt_param, format_param = _FIELDS[endpoint]
        format_param = request.format_field or format_param
        param = {"messages": prompt_param, "format": format_param}.get(param, param)
        if missing == "reasoning" and request.reasoning is not None:
            param = request.reasoning.asked_by  # the field the client sent
        where = {
            "audio": '`architecture.input_modalities` in GET /api/v1/models has "audio"',
            "image_output": '`architecture.output_modalities` in GET /api/v1/models has "image"',
            "audio_output": '`architecture.output_modalities` in GET /api/v1/models has "audio"',
        }.get(missing, f'`capabilities` in GET /api/v1/models has "{missing}": true')
        raise NoRouteAvailable(
            f"No route for {routes[0].model!r} supports {what} (`{param}`). Choose a model "
            f"whose {where}, or send the request without it.",
            param=param,
        )
    return able


# The provider formats that carry audio parts (Anthropic's messages format has none).
AUDIO_FORMATS = frozenset({"chat", "responses"})


def _no_audio_format(model: str, param: str) -> NoRouteAvailable:
    return NoRouteAvailable(
        f"No route left for {model!r} carries audio input (`{param}`): the providers "
        "allowed speak Anthropic's messages format, which has no audio. Allow a provider "
        "of the chat or responses format (`provider.only`, `provider.ignore`), or send the "
        "request without audio.",
        param=param,
    )


# The provider formats that carry generated images and sound (`gateway.image_output`,
# `gateway.audio_output`).
MEDIA_OUTPUT_FORMATS = frozenset({"chat"})


def _no_media_format(model: str, made: str) -> NoRouteAvailable:
    what = {"image": "images", "audio": "audio"}[made]
    return NoRouteAvailable(
        f"No route left for {model!r} returns {what} (`modalities`): the providers "
        f"allowed speak a format without generated {what}. Allow a provider of the chat "
        "format (`provider.only`, `provider.ignore`), or ask for text alone.",
        param="modalities",
    )


def _capabilities(view: CatalogView, model: str) -> set[str]:
    entry = view.by_id[model]
    able = {name for name, on in entry["capabilities"].items() if on}
    architecture = entry["architecture"]
    if "audio" in architecture["input_modalities"]:
        able.add("audio")
    for made in architecture["output_modalities"]:
        if made != "text":
            able.add(f"{made}_output")
    return able
