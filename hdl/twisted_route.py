"""Route compute of a twisted-torus router (004) as arithmetic hardware.

From the router's coordinates ``a`` (``node_static``) and the destination's ``b`` (the head
flit) the hardware forms the minimal record of :func:`twinnet.model.twist.routing_record`:

1. ``v = b - a`` per dimension (subtractors); in each twisting dimension J a negative ``v_J``
   gets ``d_J`` added and every dimension K it twists loses ``t_JK`` (the wrap it stands for);
2. for every choice of image ``c_J`` in ``0, 1, -1, 2`` per twisting dimension (4 or 16
   candidates) the record is ``v_J - c_J d_J`` in J and, in every other dimension K, the ring
   offset of ``v_K + sum_J c_J t_JK`` (reduced mod ``d_K``, less ``d_K`` above ``d_K / 2``);
3. the shortest candidate wins, the first on a tie (comparators over the summed magnitudes).

The packet takes the first dimension of the record with hops left, in its direction; on
arrival the PE port the header's ``pe`` field names (with several PEs per router). Every
router recomputes the record, which reproduces the source's dimension-order path
(:mod:`twinnet.model.twisted_network`). The escape scheme sets the VC and bubble
(:mod:`twinnet.hdl.ring_escape`, with ``vcs`` copies of it per link); a dimension's
peripheral link is its dateline.

``malformed``: a destination coordinate ``>= d`` or PE ``>= pe_ports`` (when its field can
hold one).
"""

import functools
import itertools
import operator

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data

from twinnet.model.twist import IMAGES
from twinnet.model.twisted_network import TwistedNetworkConfig, port_label, port_move

from .config import RouterConfig
from .ring_escape import drive_escape, opposite
from .route_compute import RouteCompute

#: The local label of the PE port of a router with one PE.
PE = "PE"


def pe_labels(network: TwistedNetworkConfig) -> tuple[str, ...]:
    """The local labels of a router's PE ports: ``PE`` with one, ``PE0``, ``PE1``, … with
    several."""
    if network.pe_ports == 1:
        return (PE,)
    return tuple(f"{PE}{pe}" for pe in range(network.pe_ports))


def is_pe(label: str) -> bool:
    """Whether a local port label (:func:`pe_labels`) names a PE port."""
    return label.startswith(PE)


def _modulo(value, d: int, multiples: int):
    """``value % d`` for ``0 <= value < multiples * d``. A power of two keeps its low bits;
    any other ``d`` is taken off as often as it fits, every multiple compared at once (the
    comparators in parallel, then one AND-OR), where ``%`` builds a divider's rows in series
    (docs/router.md measures both on 004's 24x12 and 48x12 routers)."""
    if d & (d - 1) == 0:
        return value % d
    width = (d - 1).bit_length()
    at_least = [value >= times * d for times in range(1, multiples)]
    terms = []
    for times in range(multiples):
        this = at_least[times - 1] if times else Const(1, 1)
        if times < len(at_least):
            this = this & ~at_least[times]
        terms.append(Mux(this, (value - times * d)[:width], 0))
    return functools.reduce(operator.or_, terms)


def coordinate_layout(network: TwistedNetworkConfig) -> data.StructLayout:
    """A node's coordinates ``o0 … o{n-1}`` (``o0`` is X), each
    :attr:`TwistedNetworkConfig.digit_widths` bits: the router's own on ``node_static``."""
    return data.StructLayout({f"o{dim}": unsigned(width)
                              for dim, width in enumerate(network.digit_widths)})


def destination_layout(network: TwistedNetworkConfig) -> data.StructLayout:
    """The head flit's route fields: the destination's coordinates (:func:`coordinate_layout`)
    and, with several PEs per router, its ``pe`` (:attr:`TwistedNetworkConfig.pe_width`
    bits)."""
    fields = dict(coordinate_layout(network).members)
    if network.pe_width:
        fields["pe"] = unsigned(network.pe_width)
    return data.StructLayout(fields)


class TwistedRouteCompute(RouteCompute):
    """Dimension-order routing over the twisted torus's minimal record (module docstring).

    Parameters:
        config: the router's configuration; ``config.port_count`` must be ``len(ports)``.
        in_port: the input port this instance serves.
        network: the :class:`~twinnet.model.twisted_network.TwistedNetworkConfig`.
        ports: the router's port labels in local index order: the network's link ports
            (``X+ X- …``) and its PE ports (:func:`pe_labels`).
    """

    @classmethod
    def check(cls, config: RouterConfig, in_port: int, *, network: TwistedNetworkConfig,
              ports: tuple[str, ...]) -> tuple[str, ...]:
        """The port labels as a tuple, once they fit the network and the configuration."""
        if not isinstance(network, TwistedNetworkConfig):
            raise TypeError(f"network must be a TwistedNetworkConfig, not {network!r}")
        ports, wanted = tuple(ports), (*network.ports, *pe_labels(network))
        if sorted(ports) != sorted(wanted):
            raise ValueError(f"ports must be {', '.join(wanted)} in some order, not {ports}")
        if not isinstance(config, RouterConfig) or config.port_count != len(ports):
            raise ValueError(f"config must be a RouterConfig of {len(ports)} ports")
        return ports

    def __init__(self, config: RouterConfig, in_port: int, *, network: TwistedNetworkConfig,
                 ports: tuple[str, ...]):
        self.network, self.ports = network, self.checked
        super().__init__(config, in_port, header_layout=destination_layout(network),
                         static_layout=coordinate_layout(network))

    def elaborate(self, platform):
        m = Module()
        topology = self.network.topology
        radices, n = topology.radices, topology.n
        here = [self.node_static[f"o{dim}"] for dim in range(n)]
        there = [self.header[f"o{dim}"] for dim in range(n)]
        width = max(radices).bit_length() + 4  # room for every sum below, with a sign
        twists = [(j, k, t % radices[k]) for j, k, t in topology.twists]
        twisting = sorted({j for j, _, _ in twists})

        bad = Const(0, 1)
        for coordinate, d in zip(there, radices):
            if (1 << len(coordinate)) > d:
                bad = bad | (coordinate >= d)
        if self.network.pe_width and (1 << self.network.pe_width) > self.network.pe_ports:
            bad = bad | (self.header.pe >= self.network.pe_ports)
        v = self._difference(m, here, there, width, twists, twisting)
        best = self._shortest(m, v, width, twists, twisting)
        self._move(m, here, best, bad)
        return m

    def _difference(self, m: Module, here, there, width: int, twists, twisting) -> list:
        """1. The difference, twisting dimensions brought into [0, d_J) with their carries."""
        radices, n = self.network.topology.radices, self.network.topology.n
        v = []
        for dim in range(n):
            value = Signal(signed(width), name=f"v{dim}")
            m.d.comb += value.eq(there[dim] - here[dim])
            v.append(value)
        for j in twisting:
            negative = v[j] < 0
            carried = []
            for dim in range(n):
                value = Signal(signed(width), name=f"v{dim}_after_{j}")
                shift = sum((t for jj, k, t in twists if jj == j and k == dim), 0)
                if dim == j:
                    m.d.comb += value.eq(Mux(negative, v[dim] + radices[j], v[dim]))
                elif shift:
                    m.d.comb += value.eq(Mux(negative, v[dim] - shift, v[dim]))
                else:
                    m.d.comb += value.eq(v[dim])
                carried.append(value)
            v = carried
        return v

    def _shortest(self, m: Module, v, width: int, twists, twisting) -> list:
        """2. The candidates and their lengths; 3. the first shortest (its record)."""
        radices, n = self.network.topology.radices, self.network.topology.n
        best, best_length = None, None
        for index, choice in enumerate(itertools.product(IMAGES, repeat=len(twisting))):
            images = dict(zip(twisting, choice))
            record = []
            for dim in range(n):
                entry = Signal(signed(width), name=f"c{index}_r{dim}")
                if dim in images:
                    m.d.comb += entry.eq(v[dim] - images[dim] * radices[dim])
                else:
                    shift = sum(images[j] * t for j, k, t in twists if k == dim)
                    d = radices[dim]
                    # v + shift lies in (-(bound) d, (bound) d): add a multiple of d to make
                    # it non-negative, then reduce.
                    lift = d * (2 + 3 * len(twisting))
                    ring = Signal(unsigned(width), name=f"c{index}_m{dim}")
                    m.d.comb += ring.eq(_modulo((v[dim] + shift + lift).as_unsigned(), d,
                                                2 * lift // d))
                    m.d.comb += entry.eq(Mux(ring > d // 2, ring - d, ring))
                record.append(entry)
            length = Signal(unsigned(width), name=f"c{index}_length")
            m.d.comb += length.eq(sum((abs(entry) for entry in record), Const(0, width)))
            if best is None:
                best, best_length = record, length
                continue
            shorter = length < best_length
            chosen = []
            for dim in range(n):
                entry = Signal(signed(width), name=f"c{index}_best{dim}")
                m.d.comb += entry.eq(Mux(shorter, record[dim], best[dim]))
                chosen.append(entry)
            merged = Signal(unsigned(width), name=f"c{index}_best_length")
            m.d.comb += merged.eq(Mux(shorter, length, best_length))
            best, best_length = chosen, merged
        return best

    def _move(self, m: Module, here, best, bad) -> None:
        """The first dimension with hops left (else the destination's PE port), and the escape
        scheme's VC and bubble flag."""
        network, radices = self.network, self.network.topology.radices
        local = {label: index for index, label in enumerate(self.ports)}
        arrived = Signal()
        m.d.comb += arrived.eq(~Cat(entry != 0 for entry in best).any())
        pes = [local[label] for label in pe_labels(network)]
        m.d.comb += self.out_port.eq(Array(pes)[self.header.pe] if len(pes) > 1 else pes[0])
        straight = Const(0, 1)
        in_label = self.ports[self.port_index]
        for dim in reversed(range(len(radices))):
            if radices[dim] < 2:
                continue
            with m.If(best[dim] != 0):
                m.d.comb += self.out_port.eq(Mux(best[dim] > 0, local[port_label(dim, 1)],
                                                 local[port_label(dim, -1)]))
        # Going straight on: the output facing away from the input.
        if not is_pe(in_label):
            straight = self.out_port == local[opposite(in_label)]
        # The hop that brought the packet here wrapped its dimension: it arrived on the
        # peripheral link (coordinate 0 travelling +, d - 1 travelling -).
        wrapped = Const(0, 1)
        if not is_pe(in_label):
            dim, sign = port_move(opposite(in_label))
            wrapped = here[dim] == (0 if sign > 0 else radices[dim] - 1)
        m.d.comb += self.malformed.eq(bad)
        drive_escape(m, self, network.escape, to_link=~arrived, straight=straight,
                     wrapped=wrapped, vc_count=network.vc_count)
