"""Real output media: small, valid, playable files served under /media/."""
