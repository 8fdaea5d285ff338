"""One-hot helpers shared by the router's stages."""

from amaranth.hdl import Cat, Const, Mux, Value

from twinnet.model.widths import index_width


def lowest(value, width: int):
    """One-hot of the lowest set bit of ``value`` (zero when none). A prefix OR in LUTs rather
    than ``value & -value``: a carry chain would stop the synthesiser from merging the
    priority logic with the requests in front of it."""
    return Cat(value[i] & ~value[:i].any() if i else value[0] for i in range(width))


def first_after(requests, above, width: int):
    """One-hot of the requester of ``requests`` that comes first from a round-robin pointer:
    the lowest one of ``above`` (bit i: requester i is strictly after the last one served)
    if any, else the lowest of all."""
    masked = requests & above
    return Mux(masked.any(), lowest(masked, width), lowest(requests, width))


def after(onehot, width: int):
    """The round-robin pointer that puts the requesters strictly after the one-hot
    ``onehot`` first (the ``above`` of :func:`first_after`)."""
    return Cat(onehot[:i].any() for i in range(width))


def encode(onehot, width: int):
    """Index of the set bit of a one-hot ``onehot`` (zero when none)."""
    bits = index_width(width)
    return Cat(Cat(onehot[i] for i in range(width) if i >> k & 1).any() if width > (1 << k)
               else Const(0, 1) for k in range(bits))


def select(onehot, values, width: int):
    """The value of ``values`` whose bit is set in ``onehot``: an AND-OR, zero when no bit is
    set. ``values`` are values (or views) of ``width`` bits."""
    bits = Const(0, width)
    for index, value in enumerate(values):
        bits = bits | Mux(onehot[index], Value.cast(value), 0)
    return bits
