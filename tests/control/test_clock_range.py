"""The virtual clock stays within 1970-01-01 .. 9000-01-01: a set or advance beyond
is a 422 before the clock moves, and no timestamp ever fails to format (fuzzer finds)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from litestar.testing import TestClient

from emulator.app import create_app
from emulator.clock import LATEST, Clock, iso
from emulator.settings import Settings
from emulator.testing import EmulatorHandle
from tests.helpers import assert_error, bearer


@pytest.fixture
def control(demo: EmulatorHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{demo.url}/_emulator") as client:
        yield client


@pytest.mark.parametrize(
    "when",
    [
        "9999-12-31T23:59:59.5Z",
        "9999-12-31T23:59:59-14:00",  # year 10000 in UTC
        "9000-01-01T00:00:00.001Z",
        "0001-01-01T00:00:00+14:00",  # year 0 in UTC
        "1969-12-31T23:59:59Z",
    ],
)
def test_setting_outside_the_range_is_422_and_moves_nothing(
    control: httpx.Client, when: str
) -> None:
    before = control.get("/clock").json()
    error = assert_error(control.post("/clock", json={"now": when}), 422, "clock_out_of_range")
    assert error["param"] == "now"
    assert "1970-01-01T00:00:00.000Z" in error["message"]
    assert "9000-01-01T00:00:00.000Z" in error["message"]
    assert control.get("/clock").json() == before
    assert control.get("/health").status_code == 200


def test_the_message_writes_a_four_digit_year(control: httpx.Client) -> None:
    error = assert_error(
        control.post("/clock", json={"now": "0001-01-01T00:00:00Z"}), 422, "clock_out_of_range"
    )
    assert "0001-01-01T00:00:00.000Z" in error["message"]


def test_the_last_instant_is_allowed() -> None:
    with TestClient(
        create_app(Settings(db=":memory:", clock="manual")), base_url="http://127.0.0.1"
    ) as client:
        moved = client.post("/_emulator/clock", json={"now": "9000-01-01T00:00:00Z"})
        assert moved.json()["now"] == "9000-01-01T00:00:00.000Z"
        late = client.post("/_emulator/clock", json={"advance_seconds": 0.5})
        assert assert_error(late, 422, "clock_out_of_range")["param"] == "advance_seconds"
        assert client.get(
            "/api/v1/ai-gateway/balance", headers=bearer("sk-emu-demo-all")
        ).is_success


def test_advancing_in_allowed_steps_stops_at_the_bound() -> None:
    """Each step is within the 100-year limit; the sum is not."""
    century = 100 * 365 * 86400
    with TestClient(
        create_app(Settings(db=":memory:", clock="manual")), base_url="http://127.0.0.1"
    ) as client:
        for _ in range(100):
            answer = client.post("/_emulator/clock", json={"advance_seconds": century})
            if answer.status_code != 200:
                break
            last = answer.json()
        error = assert_error(answer, 422, "clock_out_of_range")
        assert error["param"] == "advance_seconds"
        assert client.get("/_emulator/clock").json() == last
        assert last["epoch_seconds"] <= LATEST
        assert client.get(
            "/api/v1/ai-gateway/balance", headers=bearer("sk-emu-demo-all")
        ).is_success


def test_iso_clamps_rather_than_raises() -> None:
    """A real clock may run past LATEST; a derived instant may be later still."""
    assert iso(1e20).startswith("9999-12-31T23:59:59.")
    assert iso(-1e20) == iso(float("nan")) == "0001-01-01T00:00:00.000Z"
    assert iso(LATEST) == "9000-01-01T00:00:00.000Z"


def test_a_saved_state_past_the_bound_is_clamped_on_restore() -> None:
    clock = Clock("manual", 0.0)
    clock.restore(1e15, 1e15)
    assert clock.now() == LATEST
    real = Clock("real", 0.0)
    real.restore(None, 1e15)
    assert real.now() <= LATEST + 1


@pytest.mark.parametrize(
    ("when", "said"),
    [
        ("2026-02-01T00:00:00+25:00", "got '2026-02-01T00:00:00+25:00'."),  # no Python repr
        ("yesterday", "got 'yesterday'."),
        ("2026-13-01T00:00:00Z", "(month must be in 1..12)."),
    ],
)
def test_a_time_that_is_no_instant_is_422_in_plain_words(
    control: httpx.Client, when: str, said: str
) -> None:
    error = assert_error(control.post("/clock", json={"now": when}), 422, "invalid_request")
    assert error["param"] == "now" and error["message"].endswith(said)
    assert "timedelta" not in error["message"]


def test_backwards_by_less_than_a_millisecond_says_so() -> None:
    from emulator.errors import ValidationFailed

    clock = Clock("manual", 1_700_000_000.0004)
    with pytest.raises(ValidationFailed) as refused:
        clock.set(1_700_000_000.0001)
    assert "by less than a millisecond" in refused.value.message
    with pytest.raises(ValidationFailed) as further:
        clock.set(1_699_999_000.0)
    assert "millisecond" not in further.value.message
