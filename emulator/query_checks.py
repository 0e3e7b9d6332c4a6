"""Query parameters as written: an integer is digits, and each parameter comes once.

litestar (and `DirectRequest.query`) convert query values in msgspec's lax mode,
which takes an integral number in any notation for an `int`: `limit=2.0`,
`limit=1e1`. The real API refuses those, as it refuses `limit=two`, so the
integer parameters of every route are checked as written before they are converted.
A parameter sent twice (`limit=5&limit=50`) would quietly take one of its values;
none of the routes' parameters is a list, so that is refused too, naming it.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from litestar.params import ParameterKwarg

from emulator.error_handlers import validation_error
from emulator.errors import ValidationFailed

if TYPE_CHECKING:
    from litestar import Litestar
    from litestar.handlers import BaseRouteHandler

QUERY_RULES = "query_rules"  # a handler's `opt` key: its `QueryRules`
CONTROL_PREFIX = "/_emulator"
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


@dataclass(frozen=True, slots=True)
class QueryRules:
    """A route's query parameters, by the names they have in the query."""

    names: frozenset[str]
    integers: frozenset[str]  # of `names`
    closed: bool = False  # the control plane's: a name it does not take is refused


def mark_query_parameters(app: Litestar) -> None:
    """Note in each handler's `opt` the query parameters it reads."""
    for route in app.routes:
        closed = route.path.startswith(CONTROL_PREFIX)
        for handler in getattr(route, "route_handlers", ()):
            handler.opt[QUERY_RULES] = _rules(handler, closed)


def _rules(handler: BaseRouteHandler, closed: bool) -> QueryRules:
    names, integers = set(), set()
    for name, field in handler.parsed_fn_signature.parameters.items():
        kwarg = field.kwarg_definition
        if not isinstance(kwarg, ParameterKwarg) or kwarg.header or kwarg.cookie:
            continue
        names.add(kwarg.query or name)
        if takes_integer(field.annotation):
            integers.add(kwarg.query or name)
    return QueryRules(frozenset(names), frozenset(integers), closed)


def check_query(rules: QueryRules, query: Iterable[tuple[str, str]]) -> None:
    """Refuse a value of an integer parameter that is not written as an integer, and a
    parameter of the route's sent more than once. Others are ignored, as the real API
    ignores them, but on the control plane: a test's misspelt filter (`acount_id`)
    would have listed everything."""
    seen: set[str] = set()
    for name, raw in query:
        if name not in rules.names:
            if rules.closed:
                takes = ", ".join(f"`{n}`" for n in sorted(rules.names)) or "none"
                raise ValidationFailed(
                    f"Unknown query parameter `{name}`: this route takes {takes}.",
                    param=name,
                )
            continue
        if name in rules.integers and _INTEGER.fullmatch(raw) is None:
            raise validation_error(
                [{"key": name, "message": "Expected `int`, got `str`", "source": "query"}]
            )
        if name in seen:
            raise ValidationFailed(
                f"Invalid query parameter `{name}`: sent more than once; it takes one value.",
                param=name,
            )
        seen.add(name)
