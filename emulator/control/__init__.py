"""The control plane, /_emulator/*: health, reset, tenants, top-ups, the clock."""
