"""The one source of identifiers, secrets and randomness.

Everything is derived from the seed (`--seed`) and a sequence number or a
key, so the same state and requests give the same ids on any machine.
Nothing else in the package may call `uuid4()`, `secrets` or `random`.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import random
from collections.abc import Callable

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _digest(*parts: object) -> bytes:
    return hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()


def _base62(data: bytes, length: int) -> str:
    n = int.from_bytes(data, "big")
    out = []
    for _ in range(length):
        n, r = divmod(n, 62)
        out.append(_ALPHABET[r])
    return "".join(out)


def tool_call_id(bits: int, wire_format: str) -> str:
    """A tool call's id, from 64 drawn bits, as the provider's vendor writes it:
    Anthropic's `toolu_01` and 22 letters and digits for the messages format, OpenAI's
    `call_` for the others."""
    if wire_format != "messages":
        return f"call_{bits:016x}"
    return "toolu_01" + _base62(_digest("toolu", bits), 22)


@functools.lru_cache(maxsize=4096)  # a client sends the same few credentials every request
def hash_secret(secret: str) -> str:
    """How API keys and user tokens are stored: never the raw secret."""
    return hashlib.sha256(secret.encode()).hexdigest()


class Ids:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        # A runtime numbers requests from its state (`number_requests`); alone, from 1.
        self._next_request: Callable[[], int] = itertools.count(1).__next__
        self._numbered = False

    def make(self, prefix: str, n: int) -> str:
        """The n-th id of a kind, e.g. `key_3k9x…`."""
        token = hashlib.blake2b(f"{self.seed}:{prefix}:{n}".encode(), digest_size=10)
        return f"{prefix}_{token.hexdigest()}"

    def secret(self, prefix: str, n: int) -> str:
        """The n-th raw secret of a kind (API keys, user tokens)."""
        return prefix + _base62(_digest(self.seed, "secret", prefix, n), 40)

    def request_id(self) -> str:
        return self.make("req", self._next_request())

    def number_requests(self, next_number: Callable[[], int]) -> None:
        """Take request numbers from `next_number` (the state's sequence, in blocks), so
        one state never holds two requests of one id: not after a crash, nor with two
        servers on one file."""
        self._next_request = next_number
        self._numbered = True

    def rng(self, *key: object) -> random.Random:
        """A generator seeded by the run's seed and the request's key."""
        return random.Random(int.from_bytes(_digest(self.seed, *key)[:8], "big"))

    def reset(self) -> None:
        if not self._numbered:  # a state's sequence starts again with the state
            self._next_request = itertools.count(1).__next__


class LazyRng:
    """A generator made on first use (call it for the generator).

    Seeding one costs more than some whole answers: an echo or a scripted reply
    draws nothing, so it never pays for it. The same generator either way.
    `fork(label)` is another generator of the same key under a label: `make(label)`
    (a `make` that takes one); what it draws leaves this one's draws unchanged."""

    __slots__ = ("_make", "_rng")

    def __init__(self, make: Callable[..., random.Random]) -> None:
        self._make = make
        self._rng: random.Random | None = None

    def fork(self, label: str) -> random.Random:
        return self._make(label)

    def __call__(self) -> random.Random:
        rng = self._rng
        if rng is None:
            rng = self._rng = self._make()
        return rng
