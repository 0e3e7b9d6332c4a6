"""Render every error, ours or the framework's, as the envelope of SPEC section 6.

Nothing leaves as a bare 500 or a stack trace: an unexpected exception is
logged with its traceback and answered as 500 `internal_error` in the envelope.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections import Counter
from typing import Any

from litestar import Request, Response
from litestar.exceptions import (
    HTTPException,
    MethodNotAllowedException,
    NotFoundException,
    SerializationException,
    ValidationException,
)
from litestar.serialization import decode_json
from litestar.utils.scope.state import ScopeState
from pydantic import BaseModel

from emulator.errors import (
    ClientClosedRequest,
    EmulatorError,
    IdempotencyKeyMismatch,
    InjectedFault,
    InternalError,
    InvalidRequest,
    MalformedJson,
    MethodNotAllowed,
    NotFound,
    StateUnavailable,
    UnsupportedMediaType,
    ValidationFailed,
    body_too_large,
)
from emulator.not_emulated import not_emulated
from emulator.wire import allow_header

log = logging.getLogger("emulator")
_RESPONSES = "/api/v1/responses"  # web.API_PREFIX's (web imports this module, by bodies)
# The quote answers as the request it quotes would.
_OPENAI_WIRE = (
    "/api/v1/chat/completions",
    f"{_RESPONSES}/",
    "/api/v1/ai-gateway/quote",
    "/api/v1/messages",  # Anthropic's API refuses an invalid request with 400 too
)
_LEFT_MID_BODY = "client disconnected prematurely"  # litestar's words, as a 500
_BY_STATUS: dict[int, type[EmulatorError]] = {
    400: InvalidRequest,
    404: NotFound,
    405: MethodNotAllowed,
    415: UnsupportedMediaType,
    422: ValidationFailed,
}


def render(exc: EmulatorError) -> Response[Any]:
    return Response(
        content=exc.envelope(),
        status_code=exc.status,
        headers=exc.headers,
        media_type="application/json",
    )


def handle_emulator_error(request: Request[Any, Any, Any], exc: EmulatorError) -> Response[Any]:
    return render(translate(request.method, request.url.path, exc))


def handle_http_exception(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    if _is_decode_error(exc):  # the body, if read, tells a lone surrogate from a cut
        raw = ScopeState.from_scope(request.scope).body
        return render(malformed_json(exc, raw if isinstance(raw, bytes) else None))
    return render(translate(request.method, request.url.path, exc))


def _is_decode_error(exc: Exception) -> bool:
    """litestar's 400 for a body its decoder refused: every msgspec DecodeError, not
    only those whose text says "JSON is malformed" (a number out of range, say)."""
    return (
        isinstance(exc, HTTPException)
        and exc.status_code == 400
        and isinstance(exc.__cause__, SerializationException)
    )


def translate(method: str, path: str, exc: Exception) -> EmulatorError:
    """The framework's exceptions (and unexpected ones), said in our vocabulary, with
    the status the OpenAI-compatible routes give."""
    error = _translate(method, path, exc)
    if (
        error.status == 422
        and _openai_wire(path)
        and not isinstance(error, IdempotencyKeyMismatch | InjectedFault)  # asked for as such
    ):
        # OpenAI's API (and OpenRouter's) refuse any invalid request with 400, and the
        # SDKs raise BadRequestError for it, which client code catches; 422 would be
        # UnprocessableEntityError. SPEC section 5 keeps 422 for a reused key's new body.
        return InvalidRequest(
            error.message,
            param=error.param,
            code=error.instance_code,
            headers=error.headers,
            metadata=error.metadata,
        )
    return error


def _openai_wire(path: str) -> bool:
    """Whether `path` is one of the routes of OpenAI's wire (chat, responses and theirs),
    or the quote of a request to them."""
    return path.startswith(_OPENAI_WIRE) or path == _RESPONSES


def _translate(method: str, path: str, exc: Exception) -> EmulatorError:
    if isinstance(exc, EmulatorError):
        return exc
    if isinstance(exc, ValidationException):
        return _validation_error(exc)
    if isinstance(exc, (UnicodeDecodeError, RecursionError)) and _raised_in(exc, decode_json):
        # litestar wraps msgspec's DecodeError (below) but lets these two escape.
        return malformed_json(exc)
    if isinstance(exc, NotFoundException):
        return NotFound(
            f"No route matches {method} {path}.{not_emulated(path)} The routes are listed at "
            "/schema (OpenAPI: /schema/openapi.json); the dashboard is at /_emulator/dashboard."
        )
    if isinstance(exc, MethodNotAllowedException):
        headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
        if "allow" in headers:  # litestar lists a set
            headers["allow"] = allow_header(headers["allow"].split(","))
        return MethodNotAllowed(f"{method} is not allowed on {path}.", headers=headers)
    if isinstance(exc, HTTPException):
        detail = str(exc.detail)
        if exc.status_code == 500 and detail == _LEFT_MID_BODY:
            return ClientClosedRequest()
        if _is_decode_error(exc):
            return malformed_json(exc)
        if exc.status_code == 413:
            return body_too_large()
        cls = _BY_STATUS.get(exc.status_code)
        if cls is not None:
            return cls(detail)
        if exc.status_code < 500:
            return InvalidRequest(detail)
    # Not its subclasses (a constraint failed, a misused cursor): those are our bugs.
    if isinstance(exc, sqlite3.DatabaseError) and is_state_trouble(exc):
        return state_unavailable(method, path, exc)
    log.exception("unexpected error on %s %s", method, path, exc_info=exc)
    return InternalError(
        "The emulator hit an unexpected error; it has been logged. This is a bug in the "
        "emulator: please report it with the X-Request-Id of this answer."
    )


_STATE_TROUBLE = (sqlite3.DatabaseError, sqlite3.OperationalError)


def is_state_trouble(exc: sqlite3.DatabaseError) -> bool:
    """The machine's trouble with the file (locked, full, damaged), not a bug of ours."""
    return type(exc) in _STATE_TROUBLE


def state_unavailable(method: str, path: str, exc: sqlite3.DatabaseError) -> StateUnavailable:
    """SQLite's refusal of a request's read or write, said with what to do about it."""
    said = str(exc)
    log.error("the state file failed on %s %s: %s", method, path, said)
    if "locked" in said or "busy" in said:
        why, retry = (
            "another program holds a write lock on it; close that program's open transaction",
            True,
        )
    elif "full" in said:
        why, retry = "the disk is full; free some space", False
    else:
        why, retry = (
            "it is damaged; start again with `emulator reset` or `--restore` a snapshot",
            False,
        )
    return StateUnavailable(
        f"The emulator's state file (--db) could not be used ({said}): {why}.",
        headers={"Retry-After": "1"} if retry else {"x-should-retry": "false"},
    )


# A `\uD800`-`\uDBFF` escape not followed by its low half (JSON of a string cut inside
# an emoji, as JavaScript's `slice` makes).
_LONE_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})")


def malformed_json(exc: Exception, raw: bytes | None = None) -> MalformedJson:
    """A body that does not decode as JSON: msgspec's DecodeError (or litestar's wrapping of
    it), a string that is not UTF-8, or nesting deeper than the decoder's recursion limit.
    `raw`, when known, tells a lone surrogate from a body cut short (msgspec says
    "truncated" for both)."""
    lone = _LONE_SURROGATE.search(raw) if raw is not None and b"\\u" in raw else None
    if isinstance(exc, UnicodeDecodeError):
        why = "a string in it is not valid UTF-8"
    elif isinstance(exc, RecursionError):
        why = "it is nested too deeply"
    elif lone is not None:
        escape = lone.group().decode()
        why = (
            f"{escape} is half of a surrogate pair without its other half: a string was "
            "cut inside a character such as an emoji"
        )
    else:
        why = str(exc.detail if isinstance(exc, HTTPException) else exc).split(": ", 1)[-1]
        why = why.split(" - at `", 1)[0]  # msgspec's "Number out of range - at `$[...]`"
    return MalformedJson(
        f"The request body is not valid JSON ({why}). "
        "Send a JSON object with Content-Type: application/json."
    )


def _raised_in(exc: Exception, function: Any) -> bool:
    """Whether the innermost Python frame of `exc` is `function` (not code it called)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code is function.__code__


_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "list", "dict", "none", "null"})


def _is_field(part: str) -> bool:
    """A part of pydantic's location that names a field, a key or an index; the others
    are the union-branch tags it adds: types (`str`, `list[...]`, `constrained-str`) and
    model classes. A key of the client's (`metadata`'s `trace-id`) is a field."""
    if not part or "[" in part or part.startswith("constrained-"):
        return False
    return part.lower() not in _TYPE_TAGS and not _is_model_name(part)


_MODEL_NAMES: set[str] = set()


def _is_model_name(part: str) -> bool:
    """Whether `part` names a pydantic model class. Models are built lazily: a
    capitalized name not seen yet sends for the classes loaded by now."""
    if part not in _MODEL_NAMES and part[0].isupper():
        todo: list[type] = [BaseModel]
        while todo:
            cls = todo.pop()
            _MODEL_NAMES.add(cls.__name__)
            todo.extend(cls.__subclasses__())
    return part in _MODEL_NAMES


def _field_parts(key: str) -> list[str]:
    """`input.constrained-str` -> [input], `tool_choice.NamedTool.name` ->
    [tool_choice, name]: the union-branch tags dropped."""
    return [part for part in key.split(".") if _is_field(part)]


def _last_tag(key: str) -> tuple[list[str], int | None]:
    """The parts of a location, and the index of its last union-branch tag."""
    parts = key.split(".")
    tags = [i for i, part in enumerate(parts) if not _is_field(part)]
    return parts, (tags[-1] if tags else None)


def _branch(key: str) -> str:
    """The union member a problem was found in: its location up to the last tag."""
    parts, tag = _last_tag(key)
    return "" if tag is None else ".".join(parts[: tag + 1])


def _other_branch(a: str, b: str) -> bool:
    """Whether two problems are in different branches of one union: their locations
    first differ at a branch tag."""
    for x, y in zip(a.split("."), b.split("."), strict=False):
        if x != y:
            return not (_is_field(x) and _is_field(y))
    return False


def _problem_field(key: str) -> str:
    """The field a problem counts against: a union's (its branches' problems are one),
    else its own."""
    parts, tag = _last_tag(key)
    return field_path(key if tag is None else ".".join(parts[:tag]))


def _at_union(key: str) -> str | None:
    """For a problem with the value of a union's field itself (its location ends at a
    branch tag), that field's location; else None."""
    parent, _, last = key.rpartition(".")
    return parent if parent and not _is_field(last) else None


# pydantic names the model class a union branch or field expected: "a valid dictionary
# or instance of NamedToolChoice". The client sent JSON: it is an object.
_MODEL_TYPE = re.compile(r"a valid dictionary( or instance of \w+)?")
_SHOULD_BE = "Input should be "


def _readable(message: str) -> str:
    message = _MODEL_TYPE.sub("an object", message.removeprefix("Value error, "))
    return _EXPECTED.sub(_plain_type, message)


# msgspec's words for a query parameter's type ("Expected `int | null`, got `str`"),
# said plainly: a parameter left out is always fine, so `null` is not what was meant,
# and every query value is sent as text.
_EXPECTED = re.compile(r"Expected `([a-z]+)(?: \| null)?`(?:, got `str`)?")
_TYPE_WORDS = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "text"}


def _plain_type(found: re.Match[str]) -> str:
    return "Expected " + _TYPE_WORDS.get(found.group(1), f"`{found.group(1)}`")


def _either(messages: list[str]) -> str:
    """One sentence for a value that no branch of its union takes: "Input should be a
    valid string, or a valid list"."""
    wanted: list[str] = []
    for message in messages:
        if not message.startswith(_SHOULD_BE):
            return messages[-1]
        if (want := message.removeprefix(_SHOULD_BE)) not in wanted:
            wanted.append(want)
    return _SHOULD_BE + ", or ".join(wanted)


def field_path(key: str) -> str:
    """The field as `param` names it, indexes in brackets as the real API does:
    `messages.0.content.list[...].1.type` -> `messages[0].content[1].type`."""
    path = ""
    for part in _field_parts(key):
        path += f"[{part}]" if part.isdigit() else f".{part}" if path else part
    return path or key


def _depth(problem: dict[str, Any]) -> int:
    key = problem.get("key")
    return len(_field_parts(str(key))) if key else 0


def _validation_error(exc: ValidationException) -> EmulatorError:
    problems: list[dict[str, Any]] = list(exc.extra or []) if isinstance(exc.extra, list) else []
    if not problems:
        return ValidationFailed(str(exc.detail))
    return validation_error(problems)


def validation_error(problems: list[dict[str, Any]]) -> EmulatorError:
    """The most specific of litestar's problems (`key`, `message`, `source`), as our
    400/422: the deepest field, so that of a union (`content`: a string or parts) the
    branch that got furthest is reported, not "should be a valid string"; of branches
    as deep, the one with the fewest problems (`tool_choice: {"type": "function"}`
    lacks `function`, rather than being a wrong `allowed_tools` choice). A value that
    no branch takes at all gets one sentence naming every branch."""
    keys = [str(p.get("key") or "") for p in problems]
    per_branch = Counter(_branch(key) for key in keys)
    # Of equally good ones, the last: a union's branches come in order (`str` first).
    best = max(
        reversed(range(len(problems))),
        key=lambda i: (_depth(problems[i]), -per_branch[_branch(keys[i])]),
    )
    first, first_key = problems[best], keys[best]
    source = first.get("source")
    message = _readable(str(first.get("message", "is not valid")))
    if first_key == "data" and source == "body":
        return InvalidRequest("The request body is missing: send a JSON object.")
    if not first_key:
        if "an object" in message:
            return InvalidRequest("The request body must be a JSON object.")
        return ValidationFailed(f"{message}.")
    key = field_path(first_key)
    union = _at_union(first_key)
    if union is not None:  # every branch refused the value itself
        here = [
            _readable(str(p.get("message", "")))
            for p, k in zip(problems, keys, strict=True)
            if _at_union(k) == union
        ]
        message = _either(here) if len(here) > 1 else message
    where = "query parameter" if source == "query" else "field"
    # Not counted: the union's other branches, and problems at this field or above it.
    reported = _field_parts(first_key)
    others = len(  # fields, not problems: a union's branches all fail at one field
        {
            _problem_field(k)
            for k in keys
            if not _other_branch(k, first_key)
            and (parts := _field_parts(k)) != reported[: len(parts)]
        }
        - {_problem_field(first_key)}
    )
    more = f" ({others} more problem(s) in this request)" if others else ""
    return ValidationFailed(f"Invalid {where} `{key}`: {message}.{more}", param=str(key))
