"""Terminal numbers and the head flit's route fields, both ways, in hardware.

A family numbers its terminals (PEs) by some of its route fields, least significant first
(:meth:`twinnet.families.Family.terminal_digits`): terminal ``t = d0 + r0 * (d1 + r1 * …)``.
:class:`TerminalCodec` turns a number into those fields and back, for whatever must address a
terminal by its number: the traffic harness (:mod:`twinnet.hdl.traffic`) and the AXI4-Stream
interfaces (:mod:`twinnet.hdl.axi_stream`), whose ``tdest`` is a terminal number.
"""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import data

from twinnet.model.widths import index_width


def field(view, path: tuple[str, ...]):
    """The field of ``view`` at ``path`` (``("node", "o2")``: ``view.node.o2``)."""
    for name in path:
        view = getattr(view, name)
    return view


def reciprocal(divisor: int, bound: int) -> tuple[int, int]:
    """``(multiplier, shift)`` such that ``(v * multiplier) >> shift == v // divisor`` for every
    ``0 <= v < bound``: division by a constant as a product (by a constant) and a shift, checked
    here for every such ``v``."""
    values = range(bound)
    for shift in range(max(bound, 2).bit_length() + divisor.bit_length() + 1):
        multiplier = -(-(1 << shift) // divisor)
        if all((v * multiplier) >> shift == v // divisor for v in values):
            return multiplier, shift
    raise AssertionError(f"no reciprocal of {divisor} below {bound}")  # the bound above suffices


class TerminalCodec:
    """The head flit's layout and the route fields that number the terminals.

    Parameters:
        head_layout: the routers' head flit layout (``FlitFormat.head_layout``).
        digits: the route fields that number the terminals, least significant first, as
            ``(path, radix)`` (e.g. ``(("pe",), 2)``, ``(("node", "o2"), 4)``).
        terminals: P.
    """

    def __init__(self, head_layout: data.StructLayout, digits, terminals: int):
        self.head_layout, self.digits, self.terminals = head_layout, list(digits), terminals
        self.route_layout = head_layout["route"].shape
        self.flit_width = head_layout.size
        self.source_width = head_layout["source"].shape.width
        #: Bits of a terminal number.
        self.number_width = index_width(terminals)

    def route_of(self, terminal: int) -> dict:
        """The route-field value (for ``route_layout.const``) of terminal ``terminal``."""
        value: dict = {}
        for path, radix in self.digits:
            terminal, digit = divmod(terminal, radix)
            target = value
            for name in path[:-1]:
                target = target.setdefault(name, {})
            target[path[-1]] = digit
        return value

    def terminal_of(self, route):
        """Hardware: the terminal number of route view ``route`` (a mixed-radix sum)."""
        total, weight = Const(0, 1), 1
        for path, radix in self.digits:
            total = total + field(route, path) * weight
            weight *= radix
        return total[:self.number_width]

    def same_terminal(self, a, b):
        """Hardware: the digits of route views ``a`` and ``b`` are equal."""
        return Cat(*[field(a, path) == field(b, path) for path, _ in self.digits]).all()

    def route_from(self, m: Module, number):
        """Hardware: the route fields of terminal ``number`` (below P; other route fields 0),
        its digits by products with constant reciprocals (:func:`reciprocal`), each product a
        sum of shifted copies (small adders, no divider and no multiplier block)."""
        route = Signal(self.route_layout)
        rest, bound = number, self.terminals
        for path, radix in self.digits:
            multiplier, shift = reciprocal(radix, bound)
            quotient = Signal(index_width(-(-bound // radix) + 1), name=f"quotient_{radix}")
            m.d.comb += quotient.eq(_times(rest, multiplier) >> shift)
            m.d.comb += field(route, path).eq(rest - _times(quotient, radix))
            rest, bound = quotient, -(-bound // radix)
        return route


def _times(value, constant: int):
    """``value * constant`` as a sum of ``value`` shifted to each set bit of ``constant``."""
    total = Const(0, 1)
    for bit in range(constant.bit_length()):
        if constant >> bit & 1:
            total = total + (value << bit)
    return total
