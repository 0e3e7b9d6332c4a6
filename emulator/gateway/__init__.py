"""The model gateway: catalog, pricing, and (later) chat, responses and routing."""
