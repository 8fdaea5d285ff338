"""A king-family network as built in RTL: one of the six square networks of 002 (M, DM, KM,
T, DT, KT), its routing, its escape scheme, its VCs and its router sizes.

Deterministic routing (002 §3): ``dor`` on M and T (x, then y), ``diagonal`` on DM and DT (the
diagonal-mesh record; on DT 002 Alg. 1's shortest wrap-around image, ties to the first image,
or with ``ties`` ``lfsr`` to a pseudo-random one, as 002's hardware does: every router then
takes the first port of any tied image's record, so a pair's packets may take different
minimal paths, each still in vector order; :func:`tied_ports`), ``knaive`` on KM and KT (002
§3.3.1). Every router recomputes the record from its own coordinates and takes its first port
in vector order (:func:`twinnet.model.king.routing_port`): the path is minimal and its ports
never go back in vector order, so it enters each ring at most once.

Adaptive routing (002 §3.2–3.3.2) runs over an escape network: the escape VCs (the lowest one,
or two with the dateline) take the kind's deterministic routing above under the escape scheme;
the other VCs of each link are adaptive. ``hop-by-hop`` (any kind) offers every profitable
port (one hop closer to the destination) on an adaptive VC; ``2s`` (KM, KT) grades them: a
profitable port the Knaive record uses is grade 1 (with ``ties`` ``both``, the record of either
way round a ring at an offset of exactly side/2), any other profitable port grade 2. A packet
takes a free adaptive VC of a grade-1 port, else of a grade-2 port, else waits for its escape
move (Duato's condition: the escape network alone is deadlock-free and always on offer).
:func:`path_error` is the relation the checks hold a packet's path to: every adaptive hop
profitable, every escape hop the escape routing's.

Deadlock (the ``escape`` scheme, tori only; a mesh's paths are acyclic on one VC):

- ``bubble``: one VC per link; a packet enters a ring (injected, or turning) only when the
  buffer downstream holds two whole packets (003 §6.3.2, the bubble of 002's ABR). Each ring
  keeps a free packet buffer, and the rings are entered in vector order: deadlock-free;
- ``dateline``: two VCs per link; a packet moves to VC 1 after crossing its ring's dateline
  (the hop that wraps x, or y on the y rings) and back to VC 0 on a turn;
- ``none``: one VC, no bubble: the rings close cycles and the network can deadlock (kept to
  show it).

Broadcast (``broadcast``, KM and KT; 002 §3.3.4): the source sends a copy through each of its
ports with a TTL, and each receiver consumes it and forwards it by the rule of
:func:`twinnet.model.king.broadcast_sends` (one copy per node, the even-side rule included).
Broadcast copies travel on a VC of their own, the highest, under the bubble on a torus:
entering a ring (leaving the source, or turning from an orthogonal ray onto a diagonal) needs
room for two packets downstream, going straight on room for one. Copies only ever turn from
orthogonal rings onto diagonal ones, so their rings are entered in an acyclic order, and the
unicast VCs never wait for the broadcast VC (nor the other way round): deadlock-free, as
``docs/king.md`` argues in full. :func:`broadcast_error` is the relation the checks hold a
broadcast's copies to.

``pe_ports`` PEs per router (002 Table 2's parallel injection, so that a king torus can be
offered more than one flit per node and cycle): terminal ``t = p + pe_ports * (x + side * y)``
is PE ``p`` of router ``(x, y)``.
"""

import functools
from collections import Counter
from dataclasses import dataclass

from . import checks
from .deadlock import ESCAPE_VCS, ChannelDependencyGraph, escape_vc_count
from .king import (
    KINDS,
    PORTS,
    KingTopology,
    broadcast_sends,
    diagonal_torus_candidates,
    profitable_vector,
    record_ports,
    routing_path,
    routing_port,
    scheme_channels,
    wraps,
)
from .schema import Choice, Flag, Integer, parameter
from .sizes import MAX_PE_PORTS, PeSlots, RouterSizes
from .widths import index_width

#: Routing → the kinds it applies to.
ROUTINGS = {"dor": ("M", "T"), "diagonal": ("DM", "DT"), "knaive": ("KM", "KT"),
            "hop-by-hop": KINDS, "2s": ("KM", "KT")}
#: The adaptive routings (over an escape network); the others are deterministic.
ADAPTIVE_ROUTINGS = ("hop-by-hop", "2s")
#: The tori among the kinds (their rings take an escape).
WRAPPED_KINDS = ("T", "DT", "KT")
#: Most VCs per link.
MAX_VCS = 8
#: Escape schemes of the RTL (tori; a mesh takes ``none``).
ESCAPES = tuple(ESCAPE_VCS)
#: Largest side: 128 × 128 = 16,384 routers, on the tori without a dateline, whose deadlock
#: check places the paths toward one node at every node (:func:`dependency_graph`).
MAX_SIDE = 128
#: Largest side of a mesh or a torus with a dateline: 32 × 32 = 1,024 routers, the largest
#: network of the papers; their deadlock check walks every pair of nodes (KT32 with a
#: dateline: about 150 s).
MAX_WALKED_SIDE = 32
#: How routing treats equally short alternatives: ``first`` (DT: 002 Alg. 1's first shortest
#: image; a torus offset of exactly side/2 goes +), ``lfsr`` (DT: a pseudo-random shortest
#: image) or ``both`` (KT under 2S: at a torus offset of exactly side/2 both ways round the
#: ring grade as Knaive's).
TIES = ("first", "lfsr", "both")
#: The kinds broadcast applies to (002 §3.3.4).
BROADCAST_KINDS = ("KM", "KT")
#: The scheme of :func:`twinnet.model.king.scheme_channels` each escape checks with.
_SCHEMES = {"bubble": "bubble", "dateline": "dateline", "none": "plain"}


def default_routing(kind: str) -> str:
    """The kind's deterministic routing (also the escape routing of its adaptive ones)."""
    return next(routing for routing, kinds in ROUTINGS.items()
                if kind in kinds and routing not in ADAPTIVE_ROUTINGS)


def vc_count_allowed(routing: str, escape: str, broadcast: bool = False) -> tuple[int, int]:
    """The least and most VCs per link: exactly the escape's under deterministic routing, at
    least one adaptive VC more under adaptive routing; one more for broadcast, whose copies
    have a VC of their own."""
    least = escape_vc_count(escape) + int(broadcast)
    return (least + 1, MAX_VCS) if routing in ADAPTIVE_ROUTINGS else (least, least)


@dataclass(frozen=True)
class KingNetworkConfig(PeSlots, RouterSizes):
    """A king-family network: a square network of 002 (``kind``, ``side``: :attr:`topology`),
    its routing and escape, PEs per router, VCs per link (``None``: the least
    :func:`vc_count_allowed` allows), broadcast, ties, and the router sizes. Each field is
    a parameter (:mod:`twinnet.model.schema`)."""

    family = "king"

    kind: str = parameter(
        "KT", Choice(KINDS, fold=str.upper),
        f"the square network of 002: {', '.join(KINDS)} (mesh, diagonal mesh, king mesh and "
        "their tori; default KT)")
    side: int = parameter(8, Integer(3, MAX_SIDE),
                          f"nodes per side, 3 to {MAX_SIDE} on the tori, 3 to {MAX_WALKED_SIDE} "
                          "on the meshes and with --escape dateline (default 8)")
    routing: str = parameter(
        lambda values: default_routing(values["kind"]), Choice(tuple(ROUTINGS)),
        "deterministic: dor (M, T), diagonal (DM, DT: 002 Alg. 1 on DT) or knaive (KM, KT), "
        "the default for the kind; adaptive over an escape network that takes the kind's "
        "deterministic routing: hop-by-hop (any kind: every profitable port) or 2s (KM, KT: "
        "profitable Knaive ports first, then the other profitable ports)")
    escape: str = parameter(
        lambda values: "bubble" if values["kind"] in WRAPPED_KINDS else "none", Choice(ESCAPES),
        "deadlock avoidance on the tori: bubble (one VC, room for two packets to enter a ring; "
        "the default), dateline (two VCs) or none (one VC: can deadlock); meshes take none")
    pe_ports: int = parameter(
        1, Integer(1, MAX_PE_PORTS),
        f"PEs per router, 1 to {MAX_PE_PORTS} (002's parallel injection: offer a king torus "
        "more than one flit per node and cycle; default 1)")
    vcs: int | None = parameter(
        None, Integer(None, None),  # the range depends on the routing: checked by the rules
        f"VCs per link: the escape's (1, or 2 with the dateline), plus at least one adaptive VC "
        f"under adaptive routing (default: one), at most {MAX_VCS}")
    broadcast: bool = parameter(
        False, Flag(),
        "KM, KT: routers that replicate broadcasts (002 §3.3.4: a copy to every other router, "
        "on a VC of their own, one more per link)")
    ties: str = parameter(
        "first", Choice(TIES),
        "equally short alternatives: first (the default: DT takes 002 Alg. 1's first shortest "
        "wrap-around image, a ring offset of exactly side/2 goes +), lfsr (DT: a pseudo-random "
        "image, as in 002's hardware; paths vary, order per pair is not kept) or both (KT "
        "under 2s, even sides: at an offset of exactly side/2 both ways round the ring are "
        "Knaive's, grade 1; 002's simulator breaks such ties at random)")

    @classmethod
    def bubble(cls, values: dict) -> bool:
        return values["kind"] in WRAPPED_KINDS and (values["escape"] == "bubble"
                                                    or values["broadcast"])

    @classmethod
    def rules(cls, values: dict, names: dict) -> None:
        kind, routing, escape = values["kind"], values["routing"], values["escape"]
        if kind not in ROUTINGS[routing]:
            allowed = [name for name, kinds in ROUTINGS.items() if kind in kinds]
            raise ValueError(f"{names['routing']} {routing}: applies to "
                             f"{' and '.join(ROUTINGS[routing])} only, not {kind}; {kind} takes "
                             f"{' or '.join(allowed)}")
        if kind not in WRAPPED_KINDS and escape != "none":
            raise ValueError(f"{names['escape']} {escape}: applies to tori (T, DT, KT) only; "
                             f"the mesh {kind} has no ring and must take 'none'")
        if values["side"] > MAX_WALKED_SIDE and (kind not in WRAPPED_KINDS
                                                 or escape == "dateline"):
            shape = "the mesh " + kind if kind not in WRAPPED_KINDS else "a dateline"
            raise ValueError(f"{names['side']} {values['side']}: at most {MAX_WALKED_SIDE} with "
                             f"{shape} (the deadlock check walks every pair of nodes); only the "
                             f"tori without a dateline take up to {MAX_SIDE}")
        if values["broadcast"] and kind not in BROADCAST_KINDS:
            raise ValueError(f"{names['broadcast']}: applies to "
                             f"{' and '.join(BROADCAST_KINDS)} only, not {kind}")
        if values["broadcast"] and values["ejection_lanes"] > 1:
            raise ValueError(f"{names['ejection_lanes']} {values['ejection_lanes']}: takes "
                             f"unicast routing only, not {names['broadcast']}")
        ties = values["ties"]
        if ties == "lfsr" and kind != "DT":
            raise ValueError(f"{names['ties']} lfsr: applies to DT only (002 Alg. 1's "
                             f"wrap-around images), not {kind}")
        if ties == "both" and (kind != "KT" or routing != "2s" or values["side"] % 2):
            raise ValueError(f"{names['ties']} both: applies to KT under 2s routing with an "
                             f"even side only (a ring of odd side has no tie), not {kind} "
                             f"under {routing} with side {values['side']}")
        vcs = values["vcs"]
        if vcs is not None:
            least, most = vc_count_allowed(routing, escape, values["broadcast"])
            with_broadcast = " and broadcast" if values["broadcast"] else ""
            if least == most and vcs != least:
                raise ValueError(f"{names['vcs']} {vcs}: {routing} routing with escape "
                                 f"{escape}{with_broadcast} uses exactly {least} VC(s) per "
                                 "link; adaptive routing (hop-by-hop, 2s) takes more")
            checks.check_int(names["vcs"], vcs, minimum=least, maximum=most)
        super().rules(values, names)

    @functools.cached_property
    def topology(self) -> KingTopology:
        return KingTopology(self.kind, self.side)

    @property
    def adaptive(self) -> bool:
        return self.routing in ADAPTIVE_ROUTINGS

    @property
    def deterministic(self) -> bool:
        """One path per pair (so each pair's packets stay in order): neither adaptive routing
        nor DT's pseudo-random ties."""
        return not self.adaptive and self.ties == "first"

    @property
    def bubble_ports(self) -> bool:
        """Link buffers take the bubble (room for two packets): on a torus under the bubble
        escape or with broadcast."""
        return self.topology.wrap and (self.escape == "bubble" or self.broadcast)

    @property
    def escape_routing(self) -> str:
        """The deterministic routing of the escape VCs (the routing itself when deterministic)."""
        return default_routing(self.topology.kind) if self.adaptive else self.routing

    @property
    def escape_vc_count(self) -> int:
        """The escape VCs of each link, the lowest ones: two with the dateline, else one."""
        return escape_vc_count(self.escape)

    @property
    def vc_count(self) -> int:
        """VCs per link: the escape VCs, then the adaptive ones."""
        return self.vcs if self.vcs is not None else self.least_vcs

    @property
    def least_vcs(self) -> int:
        return vc_count_allowed(self.routing, self.escape, self.broadcast)[0]

    @property
    def broadcast_vc(self) -> int | None:
        """The VC of broadcast copies on every link, the highest (None without broadcast)."""
        return self.vc_count - 1 if self.broadcast else None

    @property
    def adaptive_vc_mask(self) -> int:
        """Bit v set: VC v of a link is adaptive (none under deterministic routing): the VCs
        above the escape's, less the broadcast VC."""
        if not self.adaptive:
            return 0
        unicast = self.vc_count - int(self.broadcast)
        return ((1 << unicast) - 1) & ~((1 << self.escape_vc_count) - 1)

    @property
    def ttl_width(self) -> int:
        """Bits of a broadcast's TTL: up to ``side - 1`` on a king mesh."""
        return index_width(self.topology.side)

    @property
    def coordinate_width(self) -> int:
        """Bits of one destination coordinate: ``0 … side-1`` (a value ``>= side`` that fits
        is malformed)."""
        return index_width(self.topology.side)

    @property
    def source_width(self) -> int:
        return index_width(self.terminal_count)

    @property
    def header_width(self) -> int:
        broadcast = 1 + self.ttl_width if self.broadcast else 0
        return 2 * self.coordinate_width + self.pe_width + broadcast + self.source_width

    @property
    def name(self) -> str:
        """``king_kt8_knaive_bubble``, plus ``_p`` and the PEs per router when more than one,
        ``_b`` with broadcast, ``_v`` and the VCs per link when not the least allowed, and
        ``_w``/``_l``/``_d`` for non-default sizes as for a twin torus."""
        suffix = (f"_p{self.pe_ports}" if self.pe_ports > 1 else "")
        suffix += "_b" if self.broadcast else ""
        suffix += {"first": "", "lfsr": "_lfsr", "both": "_bothties"}[self.ties]
        if self.vc_count != self.least_vcs:
            suffix += f"_v{self.vc_count}"
        suffix += self.size_suffix
        routing = self.routing.replace("-", "_")  # a Verilog identifier
        return f"king_{self.topology.name.lower()}_{routing}_{self.escape}{suffix}"

    def node_of(self, terminal: int) -> tuple[int, int]:
        """The router of terminal ``terminal``."""
        node, side = terminal // self.pe_ports, self.topology.side
        return node % side, node // side


def node_label(node: tuple[int, int]) -> str:
    """A router's label: ``x,y``."""
    return f"{node[0]},{node[1]}"


def router_hops(network: KingNetworkConfig, source: int,
                destination: int) -> list[tuple[str, str, int]]:
    """The links a packet from terminal ``source`` to ``destination`` crosses, as ``(router
    label, output port, VC)``: the deterministic routing's path, with the dateline's VCs
    (under adaptive routing: the escape path, one of the paths :func:`path_error` allows)."""
    topology = network.topology
    hops = routing_path(topology, network.node_of(source), network.node_of(destination))
    if network.escape != "dateline":
        return [(node_label(node), port, 0) for node, port in hops]
    return [(node_label(node), port, vc)
            for node, port, vc in scheme_channels(topology, hops, "dateline")]


def tied_ports(network: KingNetworkConfig, node, target) -> tuple[str, ...]:
    """The ports the (escape) routing may take at ``node`` toward ``target``: the first port of
    the deterministic record, or under DT's ``lfsr`` ties the first port of any shortest
    image's record (002 Alg. 1)."""
    topology = network.topology
    if network.ties != "lfsr" or node == target:
        port = routing_port(topology, node, target)
        return (port,) if port else ()
    records = diagonal_torus_candidates(topology.side, node, target)
    return tuple(dict.fromkeys(record_ports(record)[0] for record in records))


def path_error(network: KingNetworkConfig, source: int, destination: int,
               hops: list[tuple[str, str, int]]) -> str | None:
    """Why ``hops`` (``(router label, output port, VC)`` per link crossed) is not a path the
    routing allows from terminal ``source`` to ``destination``, or None when it is.

    Deterministic routing allows exactly :func:`router_hops`; with DT's ``lfsr`` ties, from
    each router any port of :func:`tied_ports`, on the escape scheme's VC. Adaptive routing
    allows, from
    each router, a hop on an adaptive VC through any profitable port
    (:func:`twinnet.model.king.profitable_vector`; 2S's grades only order the choice), or a
    hop on an escape VC through the escape routing's port, on the escape scheme's VC (with the
    dateline: VC 1 when going straight on along the escape VCs after VC 1 or a hop that
    wrapped, else VC 0); every path allowed is minimal.
    """
    if network.deterministic:
        expected = router_hops(network, source, destination)
        return None if hops == expected else f"model says {expected}"
    topology = network.topology
    node, target = network.node_of(source), network.node_of(destination)
    previous = None  # (port, vc, wrapped) of the hop that brought the packet here
    for index, (router, port, vc) in enumerate(hops):
        where = f"hop {index + 1} ({router} {port} VC {vc})"
        if router != node_label(node):
            return f"{where} leaves a router the packet is not at ({node_label(node)})"
        if vc < network.escape_vc_count:
            allowed = tied_ports(network, node, target)
            if port not in allowed:
                return (f"{where} is on an escape VC; the escape port there is "
                        f"{' or '.join(allowed) or 'none (arrived)'}")
            on_one = (network.escape == "dateline" and previous is not None
                      and previous[0] == port and previous[1] < network.escape_vc_count
                      and (previous[1] == 1 or previous[2]))
            if vc != int(on_one):
                return f"{where}: the escape scheme {network.escape} puts it on VC {int(on_one)}"
        elif vc >= network.vc_count:
            return f"{where}: the links have {network.vc_count} VCs"
        elif vc == network.broadcast_vc:
            return f"{where}: VC {vc} carries broadcast copies only"
        elif not network.adaptive:
            return f"{where}: deterministic routing takes VCs below {network.escape_vc_count}"
        else:
            profitable = [p for p, good in zip(PORTS, profitable_vector(topology, node, target))
                          if good]
            if port not in profitable:
                return (f"{where} is not profitable; profitable ports there: "
                        f"{', '.join(profitable) or 'none'}")
        previous = (port, vc, wraps(topology, node, port))
        node = topology.neighbor(node, port)
    if node != target:
        return f"the path ends at {node_label(node)}, not at {node_label(target)}"
    return None


def escape_paths(network: KingNetworkConfig, a, b) -> list[list[tuple]]:
    """Every path ``[(node, port), …]`` the (escape) routing may take from node ``a`` to node
    ``b``: the one of :func:`twinnet.model.king.routing_path`, or under DT's ``lfsr`` ties
    every sequence of :func:`tied_ports`."""
    if network.ties != "lfsr":
        return [routing_path(network.topology, a, b)]
    paths = []

    def walk(node, hops):
        ports = tied_ports(network, node, b)
        if not ports:
            paths.append(hops)
        for port in ports:
            walk(network.topology.neighbor(node, port), [*hops, (node, port)])

    walk(a, [])
    return paths


def dependency_graph(network: KingNetworkConfig) -> ChannelDependencyGraph:
    """The channel-dependency graph of every pair's paths (:func:`escape_paths`) under the
    escape scheme (with the bubble, of the rings entered: a ring with a free bubble cannot
    fill); under adaptive routing, of the escape network, which must be deadlock-free on its
    own.

    On the tori without a dateline the graph is built from the paths toward one node alone
    (:func:`_turns`); the dateline's VCs and the meshes' edges depend on where a node is, so
    there every pair is walked."""
    topology, scheme = network.topology, _SCHEMES[network.escape]
    if topology.wrap and scheme != "dateline":
        graph, turns = ChannelDependencyGraph(), _turns(network)
        for node in topology.nodes():
            for held, requested in turns:
                hops = [(node, held), (topology.neighbor(node, held), requested)]
                graph.add_path(scheme_channels(topology, hops, scheme))
        return graph
    return dependency_graph_of_every_pair(network)


def dependency_graph_of_every_pair(network: KingNetworkConfig) -> ChannelDependencyGraph:
    """The same graph built plainly from the paths of every ordered pair of nodes."""
    topology, scheme = network.topology, _SCHEMES[network.escape]
    return ChannelDependencyGraph.from_paths(
        scheme_channels(topology, path, scheme)
        for a in topology.nodes() for b in topology.nodes() if a != b
        for path in escape_paths(network, a, b))


def _turns(network: KingNetworkConfig) -> set[tuple[str, str]]:
    """The ports ``(held, requested)`` of every two consecutive hops of a path toward node
    (0, 0), from every other node. On a torus, routing reads only the offset between a node
    and the destination, so every path is one of these moved by the destination, and its
    dependencies (on a path without a dateline, each between two consecutive hops) are these
    pairs of ports, placed at every node (tests/model/test_king_routing_relation.py compares
    the graph with the one of every pair at sides 3, 4, 5 and 8)."""
    topology, origin = network.topology, (0, 0)
    return {(hop[1], after[1]) for a in topology.nodes() if a != origin
            for path in escape_paths(network, a, origin) for hop, after in zip(path, path[1:])}


def broadcast_error(network: KingNetworkConfig, source: int, pe: int,
                    hops: list[tuple[str, str, int]], receivers: list[int]) -> str | None:
    """Why the copies of a broadcast from terminal ``source`` went wrong, or None: ``hops``
    holds every link crossing of its copies as ``(router label, output port, VC)`` (None: not
    observed, not checked), ``receivers`` the terminal of every copy delivered. The model
    (:func:`twinnet.model.king.broadcast_sends`) expects each of its crossings once, on the
    broadcast VC, and one copy at PE ``pe`` of every router but the source's."""
    topology = network.topology
    origin = network.node_of(source)
    expected = Counter((node_label(node), port, network.broadcast_vc)
                       for node, port in broadcast_sends(topology, origin))
    got = expected if hops is None else Counter(hops)
    if got != expected:
        extra, missing = sorted(got - expected), sorted(expected - got)
        return (f"copies crossed links the forwarding rule does not: {extra[:4]}; "
                f"missed: {missing[:4]}")
    wanted = Counter(pe + network.pe_ports * (x + topology.side * y)
                     for x, y in topology.nodes() if (x, y) != origin)
    received = Counter(receivers)
    if received != wanted:
        twice = sorted(t for t, n in received.items() if n > 1)
        wrong = sorted(set(received) - set(wanted))
        never = sorted(set(wanted) - set(received))
        return (f"copies delivered twice to terminals {twice[:4]}, to terminals not "
                f"expecting one {wrong[:4]}, never to {never[:4]}")
    return None
