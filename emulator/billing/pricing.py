"""The charge formula, written once (SPEC section 5).

    provider_cost = ceil(prompt_tokens * prompt_price + completion_tokens * completion_price)
                    (prices in micros per million tokens, so divided by 1,000,000)
    platform_fee  = ceil(provider_cost * platform_fee_percent / 100)
    charge        = max(minimum_charge_micros, provider_cost + platform_fee)
    margin        = charge - provider_cost

Worked example (also in the README): 1,000 prompt and 500 completion tokens on
a provider at 150,000 / 600,000 micros per million tokens, with a 5.5 % fee
and a 20-micro minimum: provider cost = ceil(150 + 300) = 450; fee =
ceil(24.75) = 25; charge = max(20, 475) = 475; margin = 25.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

MTOK = 1_000_000


@dataclass(frozen=True)
class Fees:
    platform_fee_percent: float
    minimum_charge_micros: int

    @property
    def fee_ratio(self) -> Decimal:
        # Via the decimal text of the percent: 5.5 is exactly 55/1000, never 5.4999...
        return Decimal(str(self.platform_fee_percent)) / 100


@dataclass(frozen=True)
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
    cost = provider_cost(prompt_tokens, completion_tokens, prompt_per_mtok, completion_per_mtok)
    fee_exact = Decimal(cost) * fees.fee_ratio
    fee = int(fee_exact.to_integral_value(rounding="ROUND_CEILING"))
    charge = max(fees.minimum_charge_micros, cost + fee)
    return Charge(cost, fee, charge, charge - cost)
