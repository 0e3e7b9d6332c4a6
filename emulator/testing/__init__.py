"""Testing helpers for client teams: the pytest plugin and its handles."""

from emulator.testing.handles import EmulatorHandle, Tenant

__all__ = ["EmulatorHandle", "Tenant"]
