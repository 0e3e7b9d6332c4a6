"""The demo dashboard: one static page over the control plane and the API."""
