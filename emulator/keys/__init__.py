"""API key management: /api/v1/keys (user token)."""
