"""The serve lease: one lock per state file, however its path is written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from emulator.store.lease import ServeLease, served

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no flock on Windows")


def test_a_symlink_to_a_served_file_sees_its_server(tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    state.touch()
    link = tmp_path / "link.db"
    link.symlink_to(state)
    lease = ServeLease(str(state))
    lease.share()
    try:
        assert served(str(link))
        assert not ServeLease(str(link)).alone  # a second server on the link is not alone
    finally:
        lease.release()
    assert not served(str(link))


def test_a_path_under_home_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    lease = ServeLease("~/state.db")
    try:
        assert (tmp_path / "state.db-serve.lock").exists()
        assert served(str(tmp_path / "state.db"))
    finally:
        lease.release()
