"""Amaranth gateware: the router and the networks built from it."""
