"""Route compute of a twin-torus card (003 Alg. 1–6, 000 Alg. 1–4) as arithmetic hardware.

For every dimension the hardware compares the destination digit with the node's own digit,
forms ``(d - c) mod k`` and its ring direction (``+`` when ``2·aux <= k``, the positive tie
rule of 003 Alg. 2), picks the lowest differing dimension, and checks whether the wanted port
sits on this card; only the port layout and the VC numbering come from the configuration. The node's
coordinates are an input (``here``), so one module serves every node with the same card
layout: the network top ties ``node_static`` off per node.

Card-local port numbering: the card's n external ports in the order X+, X-, Y+, Y-, … (only
those on this card), then the internal link (index n), then the PE port (index n + 1). On the
plain torus (configuration ``torus``) a node is one card with all 2n external ports, no
internal link, then the PE port.
"""

from amaranth.hdl import Const, Module, Mux, Signal, unsigned
from amaranth.lib import data

from twinnet.model.twin import INTERNAL, PE_PORT, Port, TwinTorusTopology
from twinnet.model.twin_routing import InternalVc, internal_vcs, vc_count
from twinnet.model.widths import index_width

from .config import RouterConfig
from .route_compute import RouteCompute


def coordinate_layout(config: TwinTorusTopology) -> data.StructLayout:
    """A node's coordinates: fields ``o0 … o{n-1}``, digit i wide enough for ``k_i - 1``."""
    return data.StructLayout({f"o{dim}": unsigned(index_width(k))
                              for dim, k in enumerate(config.radices)})


def destination_layout(config: TwinTorusTopology) -> data.StructLayout:
    """A destination PE: the node's coordinates and the PE bit."""
    return data.StructLayout({"node": coordinate_layout(config), "pe": unsigned(1)})


def card_ports(config: TwinTorusTopology, card: int) -> tuple[Port, ...]:
    """Card ``card``'s ports in card-local index order."""
    internal = (INTERNAL,) if config.card_count == 2 else ()
    return config.configuration.ports_of(card) + internal + (PE_PORT,)


def max_vc_count(config: TwinTorusTopology, card: int) -> int:
    return max(vc_count(config, port) for port in card_ports(config, card))


class TwinRouteCompute(RouteCompute):
    """Twin DOR for packets entering card ``card`` through card-local input port ``in_port``.

    Implements :class:`twinnet.hdl.route_compute.RouteCompute`:

    - ``header`` is a :func:`destination_layout` (node digits ``o0 …`` and the PE bit);
    - ``node_static`` is a :func:`coordinate_layout`: this node's coordinates, tied off per node;
    - ``out_port`` is the card-local port (see the module docstring), ``vc_mask`` has exactly
      the one bit of the VC chosen as in 003 §6.3.1 / §6.3.2, ``bubble`` marks a move that
      enters a ring;
    - ``malformed`` is set when a destination digit is ``>= k_i``, or the PE bit is 1 on the
      plain torus (one PE per node); the router drops the packet.

    Build instances through the router with ``functools.partial(TwinRouteCompute, twin=…,
    card=…)``; ``in_port`` is fixed at elaboration (one instance per input port).
    """

    def __init__(self, config: RouterConfig, in_port: int, *, twin: TwinTorusTopology,
                 card: int):
        ports = self.checked
        self.twin, self.card, self.ports = twin, card, ports
        self.in_port_name = ports[in_port]
        self._vc = Signal(range(max(2, max_vc_count(twin, card))))
        super().__init__(config, in_port, header_layout=destination_layout(twin),
                         static_layout=coordinate_layout(twin))

    @classmethod
    def check(cls, config: RouterConfig, in_port: int, *, twin: TwinTorusTopology, card: int):
        """The card's ports, once the parameters are known to fit together."""
        if card not in range(twin.card_count):
            allowed = "0 or 1" if twin.card_count == 2 else "0 (the plain torus has one card)"
            raise ValueError(f"card must be {allowed}, not {card!r}")
        ports = card_ports(twin, card)
        if config.port_count != len(ports):
            raise ValueError(f"a card of an n={twin.n} twin torus has {len(ports)} ports, "
                             f"not {config.port_count}")
        if not 0 <= in_port < len(ports):
            raise ValueError(f"in_port must be from 0 to {len(ports) - 1}, not {in_port}")
        return ports

    def elaborate(self, platform):
        m = Module()
        config, here, node = self.twin, self.node_static, self.header.node
        digits_here = [here[f"o{dim}"] for dim in range(config.n)]
        digits_dest = [node[f"o{dim}"] for dim in range(config.n)]

        m.d.comb += self.malformed.eq(Const(0, 1))
        if config.card_count == 1:
            with m.If(self.header.pe != 0):
                m.d.comb += self.malformed.eq(1)
        for d, k in zip(digits_dest, config.radices):
            if (1 << len(d)) > k:
                with m.If(d >= k):
                    m.d.comb += self.malformed.eq(1)

        with m.If(self.malformed):
            self._drive(m, self.ports.index(PE_PORT), 0, False)
        for dim, (c, d, k) in enumerate(zip(digits_here, digits_dest, config.radices)):
            width = index_width(k) + 2
            # aux = (d - c) mod k without a divider: add k when the difference is negative.
            aux = Mux(d >= c, d - c, d + k - c).as_unsigned()[:width]
            plus = (aux << 1) <= k  # aux <= k/2: the shorter (or tied) way is +
            up = d > c  # 003 Alg. 4: VC "up" when the destination digit is above ours
            with m.Elif(c != d):
                with m.If(plus):
                    self._toward(m, Port.external(dim, +1), up)
                with m.Else():
                    self._toward(m, Port.external(dim, -1), up)
        with m.Elif(self.header.pe == self.card):
            self._drive(m, self.ports.index(PE_PORT), 0, False)
        if config.card_count == 2:  # on the plain torus a PE bit of 1 is malformed (above)
            with m.Else():
                self._internal(m, InternalVc(3), up=None, bubble=False)
        m.d.comb += self.vc_mask.eq(1 << self._vc)
        return m

    def _drive(self, m, port: int, vc, bubble: bool) -> None:
        m.d.comb += [self.out_port.eq(port), self._vc.eq(vc), self.bubble.eq(bubble)]

    def _toward(self, m, wanted: Port, up) -> None:
        """Drive the outputs for a packet whose DOR port is ``wanted``."""
        mode, split = self.twin.mode, self.twin.configuration.split_dims
        if self.twin.configuration.card_of(wanted) == self.card:
            vc = Mux(up, 0, 1) if mode == "vc" else 0
            self._drive(m, self.ports.index(wanted), vc, self._enters_ring(wanted))
        elif wanted.dim not in split:
            self._internal(m, InternalVc(1), up=None, bubble=False)
        else:
            self._internal(m, InternalVc(2, wanted.dim, "up" if mode == "vc" else None),
                           up=up if mode == "vc" else None, bubble=self._enters_ring(wanted))

    def _internal(self, m, wanted_vc: InternalVc, *, up, bubble: bool) -> None:
        """Drive the internal link on VC ``wanted_vc``; with ``up`` given, the up/low pair of a
        split dimension (low is numbered right after up)."""
        if self.twin.mode == "none":
            self._drive(m, self.ports.index(INTERNAL), 0, False)
            return
        base = internal_vcs(self.twin).index(wanted_vc)
        vc = base if up is None else Mux(up, base, base + 1)
        self._drive(m, self.ports.index(INTERNAL), vc, bubble)

    def _enters_ring(self, wanted: Port) -> bool:
        """Bubble mode: leaving toward ``wanted`` enters its ring unless the packet arrived on a
        port of the same dimension, or over the internal link toward a split dimension."""
        if self.twin.mode != "bubble":
            return False
        arrival = self.in_port_name
        if arrival.is_external and arrival.dim == wanted.dim:
            return False
        return not (arrival == INTERNAL and wanted.dim in self.twin.configuration.split_dims)
