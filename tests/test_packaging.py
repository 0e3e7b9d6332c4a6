"""A built wheel carries the default fixtures inside the package."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_wheel_ships_the_fixtures_and_finds_them(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
    )
    wheel = next(tmp_path.glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for name in ("models.yaml", "providers.yaml", "accounts.yaml", "pricing.yaml", "world.yaml"):
        assert f"emulator/_fixtures/{name}" in names
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    code = (
        "from emulator.settings import default_fixtures_dir as d; "
        "from emulator.store.fixtures import load_fixtures as l; "
        "p = d(); print(p); print(len(l(p).models))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(target)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out[0].startswith(str(target)) and out[0].endswith("_fixtures")
    assert int(out[1]) >= 17
