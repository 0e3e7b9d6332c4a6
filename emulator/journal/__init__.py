"""The request journal: what clients sent and what they got, for tests to verify."""
