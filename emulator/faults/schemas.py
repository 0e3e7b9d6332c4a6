"""Bodies of /_emulator/faults (SPEC section 10)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field, StrictBool, StrictInt, model_validator

from emulator.bodies import RequestBody

Name = Annotated[str, Field(min_length=1, max_length=200)]
# An error's type or code, as the envelope carries one (and the fault header takes).
Code = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]


class MatchIn(RequestBody):
    path: Name | None = Field(default=None, description="A glob on the path, e.g. /api/v1/chat/*")
    # The methods the API answers (a HEAD is matched as the GET it is answered as): a
    # rule on another would be accepted and never fire.
    method: Annotated[str, Field(pattern="(?i)^(GET|POST|PUT|PATCH|DELETE)$")] | None = None
    model: Name | None = None
    provider: Name | None = None
    key_id: Name | None = None
    api_key: Name | None = Field(default=None, description="A raw API key; kept only as its hash")
    account_id: Name | None = None

    @model_validator(mode="after")
    def _path_where_faults_act(self) -> MatchIn:
        """A glob no path under /api/ or /media/ can match (`/v1/chat/*`, without `/api`)
        makes a rule accepted and dead: refused, as a provider rule with a status is."""
        if self.path is None:
            return self
        fixed = re.split(r"[*?\[]", self.path, maxsplit=1)[0]  # the part before a wildcard
        if not any(p.startswith(fixed) or fixed.startswith(p) for p in _FAULTED_PATHS):
            raise ValueError(
                f"faults act on paths under {' or '.join(_FAULTED_PATHS)} only: "
                f"{self.path!r} matches none of them (e.g. /api/v1/chat/*)"
            )
        return self


# Where faults act: the API and its media, not the control plane or the docs.
_FAULTED_PATHS = ("/api/", "/media/")


class ActionIn(RequestBody):
    status: Annotated[StrictInt, Field(ge=400, le=599)] | None = None
    type: Code | None = Field(
        default=None, description="The error's type (default: the status's own)"
    )
    code: Code | None = None
    message: Annotated[str, Field(min_length=1, max_length=2000)] | None = None
    retry_after: Annotated[StrictInt, Field(ge=0, le=86_400)] | None = None
    delay_ms: Annotated[StrictInt, Field(ge=0, le=60_000)] = 0
    fail_route: StrictBool = False
    cut_stream_after: Annotated[StrictInt, Field(ge=0, le=100_000)] | None = None
    fail_job: StrictBool = False

    @model_validator(mode="after")
    def _does_something(self) -> ActionIn:
        acts = (
            self.status,
            self.delay_ms or None,
            self.fail_route or None,
            self.cut_stream_after,
            self.fail_job or None,
        )
        if all(a is None for a in acts):
            raise ValueError(
                "the action does nothing: give status, delay_ms, fail_route, cut_stream_after "
                "or fail_job"
            )
        return self


class FaultCreate(RequestBody):
    match: MatchIn | None = None
    action: ActionIn
    times: Annotated[StrictInt, Field(ge=1, le=1_000_000)] | None = Field(
        default=None, description="Fire on the next N matches (default: until removed)"
    )
    probability: Annotated[float, Field(gt=0, le=1)] | None = Field(
        default=None, description="Fire on each match with this probability (seeded: deterministic)"
    )

    @model_validator(mode="after")
    def _provider_known_where_it_acts(self) -> FaultCreate:
        # A request's provider is known only once a route of it is tried: an error or a
        # delay, which act before the handler, would never fire (a rule accepted and dead).
        # A job has no provider route at all: a `fail_job` rule on a provider never fires.
        act = self.action
        if self.match and self.match.provider and (act.status or act.delay_ms or act.fail_job):
            raise ValueError(
                "match.provider is known only once a provider route is tried: with it, use "
                "fail_route or cut_stream_after (status and delay_ms act before routing, "
                "and video jobs have no provider route; fail_route makes the request fall "
                "back or fail with 503)"
            )
        return self
