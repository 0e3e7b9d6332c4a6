"""Money: integer micros, the ledger, and (later) pricing, holds and limits."""
