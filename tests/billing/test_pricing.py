"""The charge formula: examples, edge cases, and properties."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from emulator.billing.pricing import (
    CacheBill,
    Charge,
    Fees,
    MediaBill,
    charge_for,
    prompt_cost_mtok,
    provider_cost,
)

FEES = Fees(platform_fee_percent=5.5, minimum_charge_micros=20)


def test_the_readme_example() -> None:
    charge = charge_for(1000, 500, 150_000, 600_000, FEES)
    assert (charge.provider_cost_micros, charge.platform_fee_micros) == (450, 25)
    assert (charge.charge_micros, charge.margin_micros) == (475, 25)


def test_zero_tokens_pay_the_minimum() -> None:
    charge = charge_for(0, 0, 150_000, 600_000, FEES)
    assert (charge.provider_cost_micros, charge.platform_fee_micros, charge.charge_micros) == (
        0,
        0,
        20,
    )
    assert charge.margin_micros == 20


def test_rounding_is_up_to_the_next_micro() -> None:
    assert provider_cost(1, 0, 1, 0) == 1  # a millionth of a micro is still a micro
    assert provider_cost(3, 0, 333_333, 0) == 1
    assert provider_cost(1_000_000, 0, 1, 0) == 1 and provider_cost(1_000_001, 0, 1, 0) == 2
    assert charge_for(0, 1000, 0, 1_000_000, Fees(5.5, 0)).platform_fee_micros == 55
    assert charge_for(0, 1, 0, 1_000_000, Fees(5.5, 0)).platform_fee_micros == 1  # 0.055 -> 1


def test_the_minimum_applies_only_below_it() -> None:
    assert charge_for(10, 0, 1_000_000, 0, FEES).charge_micros == 20  # 10 + 1 < 20
    assert charge_for(100, 0, 1_000_000, 0, FEES).charge_micros == 106  # 100 + ceil(5.5)


tokens = st.integers(min_value=0, max_value=2_000_000)
prices = st.integers(min_value=0, max_value=100_000_000)


@given(
    tokens, tokens, prices, prices, st.sampled_from([0, 1, 5.5, 12.25, 30]), st.integers(0, 1000)
)
def test_properties(p: int, c: int, pp: int, cp: int, percent: float, minimum: int) -> None:
    fees = Fees(percent, minimum)
    charge = charge_for(p, c, pp, cp, fees)
    exact_cost = (p * pp + c * cp) / 1_000_000
    assert (
        charge.provider_cost_micros >= exact_cost > charge.provider_cost_micros - 1
        or exact_cost == 0
    )
    assert charge.platform_fee_micros * 100 >= charge.provider_cost_micros * percent
    free = pp == cp == 0  # a free route: nothing at all
    assert charge.charge_micros >= minimum or (free and charge == Charge(0, 0, 0, 0))
    assert charge.charge_micros >= charge.provider_cost_micros + charge.platform_fee_micros or (
        charge.charge_micros == minimum or free
    )
    assert charge.margin_micros == charge.charge_micros - charge.provider_cost_micros >= 0
    # More tokens never cost less.
    assert charge_for(p + 1, c, pp, cp, fees).charge_micros >= charge.charge_micros


def test_a_route_priced_at_zero_is_free_whatever_the_minimum() -> None:
    assert charge_for(1000, 500, 0, 0, FEES) == Charge(0, 0, 0, 0)
    assert charge_for(0, 0, 0, 0, FEES).charge_micros == 0
    # A route free for one side only is priced: the minimum still applies.
    assert charge_for(0, 0, 0, 1_000_000, FEES).charge_micros == 20


def test_cached_tokens_are_priced_at_the_caches_prices() -> None:
    fees = Fees(0, 0)
    # 2,000 prompt tokens: 1,000 read at 0.1, 500 written at 1.25 (100 of them for an
    # hour, at twice the prompt price), the other 500 at the prompt price.
    bill = CacheBill(1000, 500, 100, 100_000, 1_250_000)
    cost = 500 * 1_000_000 + 1000 * 100_000 + 400 * 1_250_000 + 100 * 2_000_000
    assert prompt_cost_mtok(2000, 1_000_000, bill) == cost
    charge = charge_for(2000, 0, 1_000_000, 0, fees, bill)
    assert charge.provider_cost_micros == -(-cost // 1_000_000) == 1300
    assert charge_for(2000, 0, 1_000_000, 0, fees).provider_cost_micros == 2000  # no cache


@given(
    prompt=st.integers(0, 10**6),
    read_share=st.floats(0, 1),
    write_share=st.floats(0, 1),
    hour_share=st.floats(0, 1),
    price=st.integers(1, 20_000_000),
)
def test_a_cache_read_never_costs_more_and_writes_at_most_twice(
    prompt: int, read_share: float, write_share: float, hour_share: float, price: int
) -> None:
    read = int(prompt * read_share)
    written = int((prompt - read) * write_share)
    hour = int(written * hour_share)
    write_price = price * 5 // 4
    reads_only = CacheBill(read, 0, 0, price // 10, write_price)
    with_writes = CacheBill(read, written, hour, price // 10, write_price)
    assert prompt_cost_mtok(prompt, price, reads_only) <= prompt * price
    assert prompt_cost_mtok(prompt, price, with_writes) <= prompt * 2 * price  # the hold's bound


def test_the_readme_cache_example() -> None:
    fees = Fees(5.5, 20)
    bill = CacheBill(1500, 0, 0, 100_000, 1_250_000)
    assert charge_for(2000, 10, 1_000_000, 2_000_000, fees, bill) == Charge(670, 37, 707, 37)
    assert charge_for(2000, 10, 1_000_000, 2_000_000, fees).charge_micros == 2132


@given(
    prompt=st.integers(0, 10**6),
    heard_share=st.floats(0, 1),
    prompt_price=st.integers(0, 10**7),
    heard_price=st.integers(0, 10**7),
)
def test_audio_heard_is_priced_apart_within_the_prompt(
    prompt: int, heard_share: float, prompt_price: int, heard_price: int
) -> None:
    """Of the prompt's tokens, the audio's at its price, the rest at the prompt's: exact
    before the one rounding up, and the same as the prompt alone at the same price."""
    heard = int(prompt * heard_share)
    bill = (MediaBill(heard, heard_price, prompt=True),)
    exact = (prompt - heard) * prompt_price + heard * heard_price
    assert provider_cost(prompt, 0, prompt_price, 0, media=bill) == -(-exact // 1_000_000)
    same = (MediaBill(heard, prompt_price, prompt=True),)
    assert provider_cost(prompt, 7, prompt_price, 3, media=same) == provider_cost(
        prompt, 7, prompt_price, 3
    )
