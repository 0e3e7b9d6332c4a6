"""The charge formula, written once (SPEC section 5).

    provider_cost = ceil(prompt_tokens * prompt_price + completion_tokens * completion_price)
                    (prices in micros per million tokens, so divided by 1,000,000)
    platform_fee  = ceil(provider_cost * platform_fee_percent / 100)
    charge        = max(minimum_charge_micros, provider_cost + platform_fee)
    margin        = charge - provider_cost

A route priced at zero for both prompt and completion (a `:free` variant) is
free: its charge is 0, the minimum charge is for priced routes.

Worked example (also in the README): 1,000 prompt and 500 completion tokens on
a provider at 150,000 / 600,000 micros per million tokens, with a 5.5 % fee
and a 20-micro minimum: provider cost = ceil(150 + 300) = 450; fee =
ceil(24.75) = 25; charge = max(20, 475) = 475; margin = 25.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

MTOK = 1_000_000


@dataclass(frozen=True)
class Fees:
    platform_fee_percent: float
    minimum_charge_micros: int
    # The fee as an exact fraction, via the decimal text of the percent: 5.5 is
    # exactly 55/1000, never 5.4999...; integers from then on.
    fee_ratio: tuple[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ratio = (Decimal(str(self.platform_fee_percent)) / 100).as_integer_ratio()
        object.__setattr__(self, "fee_ratio", ratio)


@dataclass(slots=True)  # hot: not frozen (a frozen init is ~8x slower)
class Charge:
    provider_cost_micros: int
    platform_fee_micros: int
    charge_micros: int
    margin_micros: int


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def provider_cost(
    prompt_tokens: int, completion_tokens: int, prompt_per_mtok: int, completion_per_mtok: int
) -> int:
    return _ceil_div(
        prompt_tokens * prompt_per_mtok + completion_tokens * completion_per_mtok, MTOK
    )


def charge_for(
    prompt_tokens: int,
    completion_tokens: int,
    prompt_per_mtok: int,
    completion_per_mtok: int,
    fees: Fees,
) -> Charge:
    if not prompt_per_mtok and not completion_per_mtok:  # a free route
        return Charge(0, 0, 0, 0)
    cost = provider_cost(prompt_tokens, completion_tokens, prompt_per_mtok, completion_per_mtok)
    numerator, denominator = fees.fee_ratio
    fee = _ceil_div(cost * numerator, denominator)
    charge = max(fees.minimum_charge_micros, cost + fee)
    return Charge(cost, fee, charge, charge - cost)
