"""Money is integer micros; USD strings are only for display. Properties, not examples."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.billing.money import micros_to_usd, per_token_usd, usd_compact, usd_to_micros

micros = st.integers(min_value=-(10**15), max_value=10**15)


@given(micros)
def test_usd_strings_round_trip_exactly(amount: int) -> None:
    text = micros_to_usd(amount)
    assert usd_to_micros(text) == amount
    assert len(text.split(".")[1]) == 6


@given(st.integers(min_value=0, max_value=10**15))
def test_compact_usd_is_the_same_amount(amount: int) -> None:
    assert usd_to_micros(usd_compact(amount)) == amount


@given(st.integers(min_value=0, max_value=10**12))
def test_per_token_price_is_micros_per_million_tokens_exactly(micros_per_mtok: int) -> None:
    assert Decimal(per_token_usd(micros_per_mtok)) * 10**12 == micros_per_mtok


@pytest.mark.parametrize(
    "text",
    [
        "ten",
        "",
        "1e",
        "1e3",
        "0.0000001",
        "NaN",
        "Infinity",
        "1,00",
        "+5",
        ".5",
        "\u0661\u0660",
        " 5 ",
        "5\n",
    ],
)
def test_bad_usd_amounts_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        usd_to_micros(text)


def test_examples() -> None:
    assert micros_to_usd(25_000_000) == "25.000000"
    assert micros_to_usd(-5) == "-0.000005"
    assert usd_to_micros("10.25") == 10_250_000
    assert per_token_usd(150_000) == "0.00000015"
    assert usd_compact(3613) == "0.003613" and usd_compact(0) == "0"
