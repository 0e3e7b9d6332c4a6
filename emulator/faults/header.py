"""`X-Emulator-Fault`: the fault vocabulary in one request header, for clients that
cannot reach the control plane. Items, comma-separated:

    503, 429, 402:budget_exceeded   answer with this status (and code)
    latency=250                     delay the answer by 250 ms
    fail-provider[=name]            fail that provider's routes (every route without a name;
                                    its slug or display name, as routing takes it)
    cut=3                           cut the stream after 3 chunks
    fail-job                        the job (or background response) it creates fails

Accepted only while the emulator allows faults (`--allow-faults`, the default).
"""

from __future__ import annotations

import re

from emulator.errors import InvalidRequest
from emulator.faults.rules import Action, Match
from emulator.gateway.routing import listed

HEADER = "x-emulator-fault"
MAX_LATENCY_MS = 60_000
# ASCII digits only, and few of them: str.isdigit() also accepts "²" (which int()
# refuses) and int() refuses more than about 4300 digits; both used to be 500s.
_NUMBER = re.compile(r"[0-9]{1,9}")
_STATUS = re.compile(r"[45][0-9]{2}")
_CODE = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # an error code as the envelope carries one
_SHOWN = 40  # characters of a bad item quoted back in the error message


def parse(value: str, slugs: dict[str, str]) -> list[tuple[Match, Action]]:
    """The header's items; `slugs`: each provider's slug by its lowercased names."""
    found: list[tuple[Match, Action]] = []
    for raw in value.split(","):
        item = raw.strip()
        if item:
            found.append(_item(item, slugs))
    return found


def _item(item: str, slugs: dict[str, str]) -> tuple[Match, Action]:
    name, _, arg = item.partition("=")
    name = name.strip().lower()
    if name == "latency":
        return Match(), Action(delay_ms=_number(item, arg, MAX_LATENCY_MS))
    if name == "cut":
        return Match(), Action(cut_stream_after=_number(item, arg, 100_000))
    if name == "fail-job" and not arg:
        return Match(), Action(fail_job=True)
    if name == "fail-provider":
        provider = arg.strip()
        if provider in ("", "*"):
            return Match(), Action(fail_route=True)
        if provider.lower() not in slugs:
            raise _bad(f"no provider {_quote(provider)} (providers: {listed(slugs)})")
        return Match(provider=slugs[provider.lower()]), Action(fail_route=True)
    status, _, code = item.partition(":")
    code = code.strip()
    if _STATUS.fullmatch(status) and not arg and (not code or _CODE.fullmatch(code)):
        return Match(), Action(status=int(status), code=code or None)
    raise _bad(f"unknown item {_quote(item)}")


def _number(item: str, arg: str, maximum: int) -> int:
    digits = arg.strip()
    if not _NUMBER.fullmatch(digits) or int(digits) > maximum:
        raise _bad(f"{_quote(item)} needs a whole number from 0 to {maximum}")
    return int(digits)


def _quote(item: str) -> str:
    return repr(item if len(item) <= _SHOWN else item[:_SHOWN] + "...")


def _bad(why: str) -> InvalidRequest:
    return InvalidRequest(
        f"X-Emulator-Fault: {why}. Items: a status such as 503 or 402:budget_exceeded, "
        "latency=<ms>, fail-provider[=<name>], cut=<chunks>, fail-job; comma-separated.",
        param="X-Emulator-Fault",
        code="invalid_fault_header",
    )
