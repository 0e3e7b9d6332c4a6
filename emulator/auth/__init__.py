"""Who is calling: bearer parsing, API keys and user tokens, scopes, the admin token."""
