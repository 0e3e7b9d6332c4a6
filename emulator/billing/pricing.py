"""The charge formula, written once (SPEC section 5).

    provider_cost = ceil(prompt_tokens * prompt_price + completion_tokens * completion_price)
                    (prices in micros per million tokens, so divided by 1,000,000)
    platform_fee  = ceil(provider_cost * platform_fee_percent / 100)
    charge        = max(minimum_charge_micros, provider_cost + platform_fee)
    margin        = charge - provider_cost

Prompt tokens the provider read from its prompt cache, or wrote to it, are
priced at the route's cache-read and cache-write prices instead of its prompt
price (`CacheBill`); the prompt tokens above still count all of them:

    prompt part = (prompt - read - written) * prompt_price + read * cache_read_price
                  + written * cache_write_price   (written for an hour: at twice the prompt price)

Output tokens of generated images (`gateway.image_output`) and audio
(`gateway.audio_output`), which the completion tokens count, are priced at the
route's image and audio output prices instead of its completion price, and the
prompt tokens of audio heard (`gateway.audio`) at its audio input price instead
of its prompt price (`MediaBill`).

Web search results (`gateway.web_search`) are an upstream cost too: each adds
`web_search_micros_per_result` to the provider cost, before the fee; so does each
page the web fetch tool read (`gateway.server_tools`), `web_fetch_micros_per_fetch`,
and each image the image generation tool drew (`gateway.image_tool`), at the image
model's price (`tool_micros`).

A route priced at zero for both prompt and completion (a `:free` variant) is
free: its charge is 0 (or its web search's and fetches', with the fee), the minimum charge
is for priced routes.

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
    web_search_micros_per_result: int = 4000  # OpenRouter's $4 per 1,000 results
    web_fetch_micros_per_fetch: int = 1000  # Exa's $1 per 1,000 pages, OpenRouter's default
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


@dataclass(frozen=True, slots=True)
class CacheBill:
    """Of the prompt's tokens, those read from the provider's cache and those written to
    it (`written_1h`: of `written`, kept an hour), with the route's prices for them."""

    read: int
    written: int
    written_1h: int
    read_per_mtok: int
    write_per_mtok: int


@dataclass(frozen=True, slots=True)
class MediaBill:
    """Of the completion's tokens, those of generated images or audio, with their price
    (`prompt`: of the prompt's, those of audio heard)."""

    tokens: int
    per_mtok: int
    prompt: bool = False


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def prompt_cost_mtok(prompt_tokens: int, prompt_per_mtok: int, cache: CacheBill | None) -> int:
    """The prompt's cost in micros times a million (exact): each token at its price."""
    if cache is None:
        return prompt_tokens * prompt_per_mtok
    plain = prompt_tokens - cache.read - cache.written
    written_5m = cache.written - cache.written_1h
    return (
        plain * prompt_per_mtok
        + cache.read * cache.read_per_mtok
        + written_5m * cache.write_per_mtok
        + cache.written_1h * 2 * prompt_per_mtok
    )


def provider_cost(
    prompt_tokens: int,
    completion_tokens: int,
    prompt_per_mtok: int,
    completion_per_mtok: int,
    cache: CacheBill | None = None,
    media: tuple[MediaBill, ...] = (),
) -> int:
    if cache is None:  # nearly every request
        prompt_part = prompt_tokens * prompt_per_mtok
    else:
        prompt_part = prompt_cost_mtok(prompt_tokens, prompt_per_mtok, cache)
    if not media:  # nearly every request
        output_part = completion_tokens * completion_per_mtok
    else:
        prompt_part += heard_cost_mtok(prompt_per_mtok, media)
        output_part = completion_cost_mtok(completion_tokens, completion_per_mtok, media)
    return _ceil_div(prompt_part + output_part, MTOK)


def completion_cost_mtok(
    completion_tokens: int, completion_per_mtok: int, media: tuple[MediaBill, ...]
) -> int:
    """The output's cost in micros times a million (exact): its images' and audio's
    tokens, which it counts, at their prices."""
    cost = completion_tokens * completion_per_mtok
    for bill in media:
        if not bill.prompt:
            cost += bill.tokens * (bill.per_mtok - completion_per_mtok)
    return cost


def heard_cost_mtok(prompt_per_mtok: int, media: tuple[MediaBill, ...]) -> int:
    """What the prompt's audio adds to its cost at the prompt price (micros times a
    million, exact; negative if audio is the cheaper)."""
    return sum(b.tokens * (b.per_mtok - prompt_per_mtok) for b in media if b.prompt)


def charge_for(
    prompt_tokens: int,
    completion_tokens: int,
    prompt_per_mtok: int,
    completion_per_mtok: int,
    fees: Fees,
    cache: CacheBill | None = None,
    search_results: int = 0,
    web_fetches: int = 0,
    media: tuple[MediaBill, ...] = (),
    tool_micros: int = 0,
) -> Charge:
    free = not prompt_per_mtok and not completion_per_mtok  # a `:free` route
    if free:
        cost = 0
    else:
        cost = provider_cost(
            prompt_tokens, completion_tokens, prompt_per_mtok, completion_per_mtok, cache, media
        )
    if search_results or web_fetches or tool_micros:
        cost += search_results * fees.web_search_micros_per_result
        cost += web_fetches * fees.web_fetch_micros_per_fetch + tool_micros
    elif free:
        return Charge(0, 0, 0, 0)
    numerator, denominator = fees.fee_ratio
    fee = _ceil_div(cost * numerator, denominator)
    charge = cost + fee if free else max(fees.minimum_charge_micros, cost + fee)
    return Charge(cost, fee, charge, charge - cost)
