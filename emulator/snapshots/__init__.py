"""Snapshots: the whole state saved and restored (SQLite's backup API)."""
