"""Adder trees shared by the routers and the network top."""

from amaranth.hdl import Cat


def sum_tree(values, width: int | None = None):
    """Sum with a balanced tree of adders, so that depth grows with log2 of the count; each
    partial sum truncated to ``width`` bits if given."""
    values = list(values)
    while len(values) > 1:
        sums = [a + b for a, b in zip(values[::2], values[1::2])]
        values = [total[:width] if width else total for total in sums] + \
            ([values[-1]] if len(values) % 2 else [])
    return values[0] if values else Cat()
