"""Fault injection: rules that make the world misbehave on purpose (SPEC section 4)."""
