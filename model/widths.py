"""Bit widths of the numbers the model and the hardware share."""


def index_width(count: int) -> int:
    """Bits to number ``count`` things ``0 … count-1``: ``(count - 1).bit_length()``, but at
    least 1, since a field of zero bits is not a port (Yosys writes one as ``[-1:0]``, two
    bits wide) and a lone thing still carries its index 0.

    ``index_width(1) == 1``, ``index_width(2) == 1``, ``index_width(4) == 2``,
    ``index_width(5) == 3``.
    """
    return max(1, (count - 1).bit_length())
