"""Malformed `X-Emulator-Fault` values get the header's 400, never a 500 (fuzzer finds).

Raw Latin-1 bytes reach the server as they are: "\\xb2" is '²', which
str.isdigit() accepts but int() refuses."""

from __future__ import annotations

import pytest

from emulator.testing import Tenant
from tests.helpers import assert_error

BAD = [
    b"latency=\xb2",
    b"cut=\xb2",
    b"5\xb2\xb2",
    b"latency=" + b"9" * 5000,  # past int()'s digit limit
    b"cut=" + b"1" * 5000,
    b"5" * 5000,
    b"latency=60001",
    b"cut=100001",
    b"600",
    b"0503",
    b"503,latency=\xb9",
    b"503:\xff",  # a code is echoed in the error: ASCII words only
    b"503:" + b"x" * 100,
]


@pytest.mark.parametrize("value", BAD, ids=lambda v: repr(v[:16]))
def test_a_malformed_value_is_a_400_naming_the_header(tenant: Tenant, value: bytes) -> None:
    with tenant.client(headers={"X-Emulator-Fault": value}) as client:
        error = assert_error(client.get("/ai-gateway/balance"), 400, "invalid_fault_header")
    assert error["param"] == "X-Emulator-Fault"
    assert len(error["message"]) < 400  # a 5000-digit item is not echoed whole


def test_values_at_the_limits_still_work(tenant: Tenant) -> None:
    for value in ["latency=0", "latency= 1", "cut=100000", "latency=000000005"]:
        with tenant.client(headers={"X-Emulator-Fault": value}) as client:
            assert client.get("/ai-gateway/balance").status_code == 200, value
    with tenant.client(headers={"X-Emulator-Fault": "599"}) as client:
        assert client.get("/ai-gateway/balance").status_code == 599
    with tenant.client(headers={"X-Emulator-Fault": "402:budget_exceeded"}) as client:
        assert_error(client.get("/ai-gateway/balance"), 402, "budget_exceeded")
