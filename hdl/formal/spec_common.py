"""What the route-compute specifications share: :class:`ExpectedRoute`, what a specification says
for one input, and the modular arithmetic they are written with.

The arithmetic avoids dividers: a ``mod`` by a side that is not a power of two would cost the
prover minutes, so it is a conditional subtraction of operands known to lie in a small range.
"""

from amaranth.hdl import Mux, Signal, signed


class ExpectedRoute:
    """What a specification says for one input: ``port``, ``mask``, ``bubble``,
    ``malformed`` (Amaranth values; ``mask`` and ``bubble`` None when it leaves them open),
    ``assumptions`` on the inputs (what a network guarantees, e.g. a node's coordinates are
    in range) and, for adaptive routing, ``grades``: ``(grade_1, grade_2)``, one value of a
    bit per output port each, and ``adaptive_vcs``, the mask of the VCs adaptive moves may
    take (None for a deterministic route compute).

    A specification that allows several ports (a relation, e.g. DT's pseudo-random ties)
    gives ``port`` None and ``allowed`` instead: a bit, set when the port the route compute
    took is one it allows; its ``mask`` and ``bubble`` may then depend on that port.

    A routing that broadcasts gives ``copies`` (:class:`ExpectedCopies`); the rest then
    speaks of the headers that are not broadcasts."""

    def __init__(self, port, mask, bubble, malformed, assumptions=(), *, allowed=None,
                 grades=None, adaptive_vcs=None, copies=None):
        self.port, self.mask, self.bubble, self.malformed = port, mask, bubble, malformed
        self.assumptions, self.allowed = list(assumptions), allowed
        self.grades, self.adaptive_vcs = grades, adaptive_vcs
        self.copies = copies


class ExpectedCopies:
    """What a specification says of broadcasts for one input: ``broadcast`` (the header is
    one), and for a broadcast its ``malformed``, ``targets`` (bit o: a copy leaves through
    output o), ``enter`` (bit o: that copy enters a ring) and ``header_out`` (the route fields
    the copies carry on). Amaranth values; for a header that is not a broadcast the
    :class:`ExpectedRoute` holds."""

    def __init__(self, broadcast, malformed, targets, enter, header_out):
        self.broadcast, self.malformed = broadcast, malformed
        self.targets, self.enter, self.header_out = targets, enter, header_out


def ahead(b, a, side: int):
    """``(b - a) mod side`` for ``a``, ``b`` in ``[0, side)``, signed (a conditional
    subtraction, not a divider)."""
    return Mux(b >= a, b - a, b + side - a).as_signed()


def ring(b, a, side: int):
    """The signed ring offset from ``a`` to ``b`` on a ring of ``side``: ``(b - a) mod side``,
    less ``side`` above half of it (an offset of exactly half goes +)."""
    forward = ahead(b, a, side)
    return Mux(forward * 2 > side, forward - side, forward)


def named(m, value, name: str, shape):
    """A signal of ``m`` driven by ``value``: an intermediate value used more than once is
    converted once (Amaranth writes an expression out again at every use)."""
    wire = Signal(shape, name=name)
    m.d.comb += wire.eq(value)
    return wire


def reduce(m, value, side: int, terms: int, name: str, width: int):
    """``value mod side`` for a ``value`` in ``[0, terms * side)``: ``terms - 1`` conditional
    subtractions, each result a signal of ``m``."""
    for step in range(terms - 1):
        value = named(m, Mux(value >= side, value - side, value), f"{name}_r{step}",
                      signed(width))
    return value
