"""Money is integer micros (1 USD = 1,000,000 micros); USD appears only as display strings."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from emulator.errors import BillingError

MICROS_PER_USD = 1_000_000
_USD = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def micros_to_usd(micros: int) -> str:
    """`25000000` -> `"25.000000"` (exact; negative amounts keep their sign)."""
    sign = "-" if micros < 0 else ""
    whole, frac = divmod(abs(micros), MICROS_PER_USD)
    return f"{sign}{whole}.{frac:06d}"


def usd_number(micros: int) -> float:
    """USD as a JSON number, where OpenAI- and OpenRouter-shaped answers put one (`cost`,
    `total_cost`): for display; the micros beside or behind it are the exact figure."""
    return micros / MICROS_PER_USD


def usd_to_micros(text: str) -> int:
    """`"10.00"` -> `10000000`; more than six decimals or not a number raises ValueError.
    Plain decimal text only (no exponent, as in `1e3`): the CLI and the HTTP top-up agree."""
    if not isinstance(text, str) or not _USD.fullmatch(text):  # no spaces, as over HTTP
        raise ValueError(f"{text!r} is not an amount in USD such as 10.00")
    try:
        value = Decimal(text)
    except InvalidOperation as exc:
        raise ValueError(f"{text!r} is not an amount in USD such as 10.00") from exc
    micros = value * MICROS_PER_USD
    if micros != micros.to_integral_value():
        raise ValueError(f"{text!r} has more than six decimals (1 micro = 0.000001 USD)")
    return int(micros)


def per_token_usd(micros_per_mtok: int) -> str:
    """A price in micros per million tokens as the per-token USD string SDKs display."""
    value = Decimal(micros_per_mtok) / Decimal(10**12)
    text = format(value.normalize(), "f")
    return "0" if value == 0 else text


def usd_compact(micros: int) -> str:
    """`3613` -> `"0.003613"`, `0` -> `"0"`: a price without trailing zeros."""
    text = micros_to_usd(micros).rstrip("0").rstrip(".")
    return text or "0"


def insufficient_credits(required: int, available: int, advice: str) -> BillingError:
    """402 `insufficient_credits`: what it costs, what is available, what to do."""
    return BillingError(
        f"Insufficient credits: this request may cost up to {micros_to_usd(required)} USD "
        f"({required} micros) and {micros_to_usd(max(available, 0))} USD is available. "
        f"Top up the balance, or {advice}.",
        metadata={"required_micros": required, "available_micros": available},
    )
