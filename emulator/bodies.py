"""The base of every JSON request body the emulator defines."""

from __future__ import annotations

import unicodedata
from typing import Annotated, TypeVar

import msgspec
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from emulator.error_handlers import malformed_json, validation_error
from emulator.errors import InvalidRequest

# A media URL a body names: http or https, a host, no whitespace (a URL with a space
# is not one; it would be fetched by no provider). http stays: local test servers.
HTTP_URL = r"^https?://[^\s/?#]+[^\s]*$"
MAX_URL_CHARS = 2000
HttpUrl = Annotated[str, Field(pattern=HTTP_URL, max_length=MAX_URL_CHARS)]


# Characters that show nothing without being spaces or format characters: Unicode's
# default-ignorable fillers and joiners, variation selectors, the Braille blank.
_BLANKS = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0"
    + "".join(map(chr, range(0x180B, 0x1810)))
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)


def _visible(text: str) -> bool:
    """Whether `text` holds a character one can see: not only spaces, format characters
    (a zero-width space, a joiner) or other blanks (a Hangul filler, the Braille blank)."""
    return any(
        not c.isspace() and c not in _BLANKS and unicodedata.category(c) != "Cf" for c in text
    )


def _display_name(value: str) -> str:
    # Names are shown in lists, dashboards and `emulator keys list`: no NUL, newline
    # or other control character (emoji joiners and other format characters stay).
    if not _visible(value):
        raise ValueError("the name must not be blank")
    if any(unicodedata.category(c) == "Cc" for c in value):
        raise ValueError("the name must not hold control characters (NUL, newline, tab)")
    return value.strip()


def says_something(value: str) -> str:
    """A prompt's check, for any text a model or a voice is given."""
    if not _visible(value):
        raise ValueError("the prompt must say something, not only spaces")
    return value


# A name shown back (a key's, a tenant's), and a prompt a model is given.
DisplayName = Annotated[str, Field(min_length=1, max_length=100), AfterValidator(_display_name)]
Prompt = Annotated[str, Field(min_length=1, max_length=2500), AfterValidator(says_something)]


class WireModel(BaseModel):
    """Every model of ours: its validator is built on first use, not at import, which
    keeps dozens of models out of the cold start."""

    model_config = ConfigDict(defer_build=True)


class OpenWireModel(WireModel):
    """A body as a real API takes (or gives) it: fields it does not name are kept, since
    official SDKs send fields the emulator does not act on and answers carry more."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class RequestBody(WireModel):
    """Unknown fields are refused (422 naming the field), so typos do not pass silently.

    Subclasses are documented in the OpenAPI document by pydantic's own JSON schema,
    which keeps every constraint (see `emulator.openapi.finish`).
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)


def build_all_models() -> None:
    """Build every deferred validator now. For servers in a thread (tests, the pytest
    plugin), where a test thread and the server thread could otherwise build the same
    model at once; `emulator serve` uses them from one event loop and builds lazily."""
    pending: list[type[BaseModel]] = [WireModel]
    while pending:
        model = pending.pop()
        pending += model.__subclasses__()
        if not model.__pydantic_complete__:
            model.model_rebuild(force=True)


Body = TypeVar("Body", bound=BaseModel)


def parse_body(raw: bytes, model: type[Body]) -> Body:
    """A JSON body validated strictly against `model`, with the same errors as a litestar
    route's `data` (routes served directly, outside litestar, use this)."""
    if not raw:
        raise InvalidRequest("The request body is missing: send a JSON object.")
    try:
        data = msgspec.json.decode(raw)
    # msgspec raises the last two for a string that is not UTF-8 and for deep nesting.
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise malformed_json(exc, raw) from exc
    return validate(data, model)


def validate(data: object, model: type[Body]) -> Body:
    """Decoded JSON validated strictly against `model`, with a route's errors."""
    try:
        return model.model_validate(data, strict=True)
    except ValidationError as exc:
        problems = [
            {"key": ".".join(str(part) for part in e["loc"]), "message": e["msg"].split(" - ")[0]}
            for e in exc.errors(include_input=False)
        ]
        raise validation_error(problems) from exc
