"""OpenRouter's Auto Router: `model: "openrouter/auto"` lets the gateway pick the model.

Upstream a meta-model (NotDiamond) reads the prompt. Here the pick is a plain function
of the request, so the same prompt always gets the same model and tests can rely on
it: among the models the router may use that can serve the request (its tools, images,
structured output, and a context that holds the prompt), the one the last user
message's digest points at. The router may use every text model of the catalog
except the emulator's own test models, premium ones, free variants and models that draw
or speak (unless the request asks for pictures or sound), or those the
`{"id": "auto-router", "allowed_models": [...]}` plugin names (`*` wildcards, as
`"anthropic/*"`; premium ones only for an account approved for them, free variants
only for a pattern that ends in `:free`). The
answer's `model` says which was picked, and it is billed at that model's prices.
"""

from __future__ import annotations

import fnmatch
import hashlib
from typing import Any

from emulator.errors import NoRouteAvailable
from emulator.gateway.canonical import Request
from emulator.gateway.catalog import CatalogView
from emulator.gateway.content import prompt_tokens
from emulator.gateway.requirements import asked_output

AUTO = "openrouter/auto"
PLUGIN = "auto-router"


def allowed_patterns(body: dict[str, Any]) -> tuple[str, ...] | None:
    """The `allowed_models` of the body's auto-router plugin, if it names any."""
    for plugin in body.get("plugins") or ():
        if plugin.get("id") == PLUGIN and plugin.get("enabled", True):
            allowed = plugin.get("allowed_models")
            return tuple(allowed) if allowed else None
    return None


def resolve(
    view: CatalogView, model: str, request: Request, allowed: tuple[str, ...] | None, premium: bool
) -> str:
    """`model`, or the router's pick when it is `openrouter/auto` (requests, quotes and
    token counts alike)."""
    return choose(view, request, allowed, premium) if model == AUTO else model


def choose(
    view: CatalogView, request: Request, allowed: tuple[str, ...] | None, premium: bool
) -> str:
    """The model the router picks for `request`; 503 `no_route_available` when none it
    may use can serve it. `premium`: the caller's account may use premium models (else
    the router leaves them out, even when `allowed` names them)."""
    pool = [
        m
        for m in view.models
        if _may_use(m, allowed)
        and (premium or not m["premium"])
        and (allowed is not None or _makes_only_what_is_asked(m, request))
    ]
    tokens = prompt_tokens(request, "chat")  # once: each model's context is checked against it
    able = [m for m in pool if _can_serve(m, request, tokens)]
    if not able:
        which = "the models allowed_models names" if allowed else "the models it routes to"
        raise NoRouteAvailable(
            f"The auto router found none of {which} able to serve this request (its "
            "tools, images, audio, image or audio output, structured output or prompt "
            "length). Name a model, or allow others.",
            param="model",
        )
    last = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
    digest = hashlib.sha256(last.encode()).digest()
    return str(able[int.from_bytes(digest[:8], "big") % len(able)]["id"])


def _may_use(model: dict[str, Any], allowed: tuple[str, ...] | None) -> bool:
    if model["modality"] != "text":
        return False
    free = model["id"].endswith(":free")
    if allowed is not None:  # a free variant only when a pattern names free ones
        return any(
            fnmatch.fnmatchcase(model["id"], pattern) and (not free or pattern.endswith(":free"))
            for pattern in allowed
        )
    return not model["premium"] and not free and not model["id"].startswith("emulator/")


def _makes_only_what_is_asked(model: dict[str, Any], request: Request) -> bool:
    """A model that draws or speaks is left to requests asking for pictures or sound
    (a router sends a plain question to a plain model, not to an image model at its
    prices), unless `allowed_models` names it."""
    made = set(model["architecture"]["output_modalities"]) - {"text"}
    if request.images_out is not None:
        made.discard("image")
    if request.audio_out is not None:
        made.discard("audio")
    return not made


def _can_serve(model: dict[str, Any], request: Request, tokens: int) -> bool:
    capable = model["capabilities"]
    if request.tools and request.tool_choice != "none" and not capable.get("tools"):
        return False
    if any(m.images for m in request.messages) and not capable.get("vision"):
        return False
    heard = any(m.audio for m in request.messages)
    if heard and "audio" not in model["architecture"]["input_modalities"]:
        return False
    made = model["architecture"]["output_modalities"]
    if request.images_out is not None and "image" not in made:
        return False
    if request.audio_out is not None and "audio" not in made:
        return False
    if request.response_format and not capable.get("structured_output"):
        return False
    output = asked_output(request, model["max_output_tokens"])
    return bool(tokens + output <= model["context_length"])
