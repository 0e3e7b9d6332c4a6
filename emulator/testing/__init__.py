"""Testing helpers for client teams: the pytest plugin and its handles."""

from emulator.testing.handles import ControlError, EmulatorHandle, Tenant

__all__ = ["ControlError", "EmulatorHandle", "Tenant"]
