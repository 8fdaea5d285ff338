"""A king-family network as built in RTL: one of the six square networks of 002 (M, DM, KM,
T, DT, KT), its deterministic routing, its escape scheme and its router sizes.

Routing (002 §3): ``dor`` on M and T (x, then y), ``diagonal`` on DM and DT (the diagonal-mesh
record; on DT 002 Alg. 1's shortest wrap-around image, ties to the first image), ``knaive`` on
KM and KT (002 §3.3.1). Every router recomputes the record from its own coordinates and takes
its first port in vector order (:func:`twinnet.model.king.routing_port`): the path is minimal
and its ports never go back in vector order, so it enters each ring at most once.

Deadlock (the ``escape`` scheme, tori only; a mesh's paths are acyclic on one VC):

- ``bubble``: one VC per link; a packet enters a ring (injected, or turning) only when the
  buffer downstream holds two whole packets (003 §6.3.2, the bubble of 002's ABR). Each ring
  keeps a free packet buffer, and the rings are entered in vector order: deadlock-free;
- ``dateline``: two VCs per link; a packet moves to VC 1 after crossing its ring's dateline
  (the hop that wraps x, or y on the y rings) and back to VC 0 on a turn;
- ``none``: one VC, no bubble: the rings close cycles and the network can deadlock (kept to
  show it).

``pe_ports`` PEs per router (002 Table 2's parallel injection, so that a king torus can be
offered more than one flit per node and cycle): terminal ``t = p + pe_ports * (x + side * y)``
is PE ``p`` of router ``(x, y)``.
"""

from dataclasses import dataclass

from . import checks
from .deadlock import ChannelDependencyGraph
from .king import KINDS, KingConfig, routing_path, scheme_channels
from .sizes import RouterSizes, sizes_from_dict

#: Routing → the kinds it applies to.
ROUTINGS = {"dor": ("M", "T"), "diagonal": ("DM", "DT"), "knaive": ("KM", "KT")}
#: Escape schemes of the RTL (tori; a mesh takes ``none``).
ESCAPES = ("bubble", "dateline", "none")
#: Largest side: 32 × 32 = 1,024 routers, the largest network of the papers.
MAX_SIDE = 32
#: Most PEs per router (a king router then has 16 ports).
MAX_PE_PORTS = 8
#: Keys a king description may hold.
KING_KEYS = ("topology", "kind", "side", "routing", "escape", "pe_ports", "flit_width",
             "packet_length", "buffer_depth")
#: The scheme of :func:`twinnet.model.king.scheme_channels` each escape checks with.
_SCHEMES = {"bubble": "bubble", "dateline": "dateline", "none": "plain"}


def default_routing(kind: str) -> str:
    return next(routing for routing, kinds in ROUTINGS.items() if kind in kinds)


@dataclass(frozen=True)
class KingNetworkConfig(RouterSizes):
    """A king-family network: ``topology`` (a :class:`KingConfig`), ``routing`` (a key of
    :data:`ROUTINGS` that applies to the kind), ``escape`` (:data:`ESCAPES`; ``none`` on a
    mesh), ``pe_ports`` (PEs per router) and the router sizes, as for a twin torus:
    ``buffer_depth`` ``None`` is two packets."""

    topology: KingConfig
    routing: str
    escape: str
    pe_ports: int = 1
    flit_width: int = 32
    packet_length: int = 4
    buffer_depth: int | None = None

    def __post_init__(self):
        if not isinstance(self.topology, KingConfig):
            raise TypeError(f"topology must be a KingConfig, not {self.topology!r}")
        checks.check_choice("routing", self.routing, tuple(ROUTINGS))
        if self.topology.kind not in ROUTINGS[self.routing]:
            kinds = " and ".join(ROUTINGS[self.routing])
            raise ValueError(f"routing {self.routing} applies to {kinds} only, not "
                             f"{self.topology.kind}")
        checks.check_choice("escape", self.escape, ESCAPES)
        if not self.topology.wrap and self.escape != "none":
            raise ValueError(f"escape {self.escape} applies to tori (T, DT, KT); a mesh "
                             f"({self.topology.kind}) has no ring and takes 'none'")
        checks.check_int("pe_ports", self.pe_ports, minimum=1, maximum=MAX_PE_PORTS)
        self.check_sizes()

    @property
    def vc_count(self) -> int:
        """VCs per link: two with the dateline, else one."""
        return 2 if self.escape == "dateline" else 1

    @property
    def coordinate_width(self) -> int:
        """Bits of one destination coordinate: ``0 … side-1`` (a value ``>= side`` that fits
        is malformed)."""
        return max(1, (self.topology.side - 1).bit_length())

    @property
    def pe_width(self) -> int:
        """Bits of the destination's PE field (none with one PE per router)."""
        return (self.pe_ports - 1).bit_length()

    @property
    def terminal_count(self) -> int:
        return self.pe_ports * self.topology.node_count

    @property
    def source_width(self) -> int:
        return max(1, (self.terminal_count - 1).bit_length())

    @property
    def header_width(self) -> int:
        return 2 * self.coordinate_width + self.pe_width + self.source_width

    @property
    def name(self) -> str:
        """``king_kt8_knaive_bubble``, plus ``_p`` and the PEs per router when more than one
        and ``_w``/``_l``/``_d`` for non-default sizes as for a twin torus."""
        suffix = (f"_p{self.pe_ports}" if self.pe_ports > 1 else "") + self.size_suffix
        return f"king_{self.topology.name.lower()}_{self.routing}_{self.escape}{suffix}"

    def to_dict(self) -> dict:
        return {"topology": "king", "kind": self.topology.kind, "side": self.topology.side,
                "routing": self.routing, "escape": self.escape, "pe_ports": self.pe_ports,
                "flit_width": self.flit_width, "packet_length": self.packet_length,
                "buffer_depth": self.buffer_depth}

    def node_of(self, terminal: int) -> tuple[int, int]:
        """The router of terminal ``terminal``."""
        node, side = terminal // self.pe_ports, self.topology.side
        return node % side, node // side

    def pe_of(self, terminal: int) -> int:
        """Which of its router's PEs terminal ``terminal`` is."""
        return terminal % self.pe_ports


def king_network_from_dict(values: dict, labels: dict | str = "configuration"
                           ) -> KingNetworkConfig:
    """Build a :class:`KingNetworkConfig` from plain values (the keys of :data:`KING_KEYS`;
    :meth:`KingNetworkConfig.to_dict` writes them). ``kind`` defaults to KT, ``side`` to 8,
    ``routing`` to the kind's (dor, diagonal or knaive), ``escape`` to bubble on a torus and
    none on a mesh, ``pe_ports`` to 1. ``labels`` names each key in messages, as for
    :func:`twinnet.model.network.twin_network_from_dict`. Raises ``TypeError``/``ValueError``
    naming the label, the value and what is allowed, before anything is built."""
    names = checks.labels_of(values, labels)
    unknown = sorted(set(values) - set(KING_KEYS))
    if unknown:
        raise ValueError(f"{names[unknown[0]]}: unknown key; allowed keys: "
                         f"{', '.join(KING_KEYS)}")
    if values.get("topology", "king") != "king":
        raise ValueError(f"{names['topology']} must be 'king', not {values['topology']!r}")
    kind = values.get("kind", "KT")
    if isinstance(kind, str):
        kind = kind.strip().upper()
    checks.check_choice(names.get("kind", "kind"), kind, KINDS)
    side = checks.check_int(names.get("side", "side"), values.get("side", 8), minimum=3,
                            maximum=MAX_SIDE)
    topology = KingConfig(kind, side)
    routing = values.get("routing", default_routing(kind))
    checks.check_choice(names.get("routing", "routing"), routing, tuple(ROUTINGS))
    if kind not in ROUTINGS[routing]:
        raise ValueError(f"{names.get('routing', 'routing')} {routing}: applies to "
                         f"{' and '.join(ROUTINGS[routing])} only, not {kind}; {kind} must "
                         f"take {default_routing(kind)}")
    escape = values.get("escape", "bubble" if topology.wrap else "none")
    checks.check_choice(names.get("escape", "escape"), escape, ESCAPES)
    if not topology.wrap and escape != "none":
        raise ValueError(f"{names.get('escape', 'escape')} {escape}: applies to tori (T, DT, "
                         f"KT) only; the mesh {kind} has no ring and must take 'none'")
    pe_ports = checks.check_int(names.get("pe_ports", "pe_ports"), values.get("pe_ports", 1),
                                minimum=1, maximum=MAX_PE_PORTS)
    sizes = sizes_from_dict(values, names, bubble=topology.wrap and escape == "bubble")
    network = KingNetworkConfig(topology, routing, escape, pe_ports, **sizes)
    if network.flit_width < network.header_width:
        raise ValueError(f"{names.get('flit_width', 'flit_width')} {network.flit_width}: a head "
                         f"flit of {topology.name} needs {network.header_width} "
                         f"bits (two coordinates, the PE and the source)")
    return network


def node_label(node: tuple[int, int]) -> str:
    """A router's label: ``x,y``."""
    return f"{node[0]},{node[1]}"


def router_hops(network: KingNetworkConfig, source: int,
                destination: int) -> list[tuple[str, str, int]]:
    """The links a packet from terminal ``source`` to ``destination`` crosses, as ``(router
    label, output port, VC)``: the routing's path, with the dateline's VCs."""
    topology = network.topology
    hops = routing_path(topology, network.node_of(source), network.node_of(destination))
    if network.escape != "dateline":
        return [(node_label(node), port, 0) for node, port in hops]
    return [(node_label(node), port, vc)
            for node, port, vc in scheme_channels(topology, hops, "dateline")]


def dependency_graph(network: KingNetworkConfig) -> ChannelDependencyGraph:
    """The channel-dependency graph of every pair's path under the escape scheme (with the
    bubble, of the rings entered: a ring with a free bubble cannot fill)."""
    topology, scheme = network.topology, _SCHEMES[network.escape]
    return ChannelDependencyGraph.from_paths(
        scheme_channels(topology, routing_path(topology, a, b), scheme)
        for a in topology.nodes() for b in topology.nodes() if a != b)
