"""Integer query parameters take an integer as written: digits, maybe after a minus.

litestar (and `DirectRequest.query`) convert query values in msgspec's lax mode,
which takes an integral number in any notation for an `int`: `limit=2.0`,
`limit=1e1`. The real API refuses those, as it refuses `limit=two`, so the
integer parameters of every route are checked as written before they are converted.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from litestar.params import ParameterKwarg

from emulator.error_handlers import validation_error

if TYPE_CHECKING:
    from litestar import Litestar
    from litestar.handlers import BaseRouteHandler

INTEGER_QUERY = "integer_query"  # a handler's `opt` key: its integer parameters' names
_INTEGER = re.compile(r"-?[0-9]+")


def takes_integer(annotation: Any) -> bool:
    """Whether a parameter of this type is an integer (maybe optional, maybe annotated
    with bounds); not a bool."""
    if annotation is int:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return takes_integer(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(takes_integer(arg) for arg in typing.get_args(annotation))
    return False


def mark_integer_parameters(app: Litestar) -> None:
    """Note in each handler's `opt` the query parameters it reads as integers, by the
    names they have in the query."""
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            handler.opt[INTEGER_QUERY] = _integer_parameters(handler)


def _integer_parameters(handler: BaseRouteHandler) -> frozenset[str]:
    names = set()
    for name, field in handler.parsed_fn_signature.parameters.items():
        kwarg = field.kwarg_definition
        if not isinstance(kwarg, ParameterKwarg) or kwarg.header or kwarg.cookie:
            continue
        if takes_integer(field.annotation):
            names.add(kwarg.query or name)
    return frozenset(names)


def check_integers(integers: frozenset[str], query: Iterable[tuple[str, str]]) -> None:
    """Refuse a value of an integer parameter that is not written as an integer."""
    for name, raw in query:
        if name in integers and _INTEGER.fullmatch(raw) is None:
            raise validation_error(
                [{"key": name, "message": "Expected `int`, got `str`", "source": "query"}]
            )
