"""A twisted torus as built in RTL (004): its topology, its escape scheme and router sizes.

Routing: dimension-order routing over the minimal record of
:func:`twinnet.model.twist.routing_record`, which needs a node-symmetric torus (004's
Theorem). Every router recomputes the record from its own coordinates and the destination's
and takes the first dimension with hops left; the path is the same as the source's record
would give (checked for every pair of every instance in
``tests/model/test_twisted_routing.py``).

Deadlock (the ``escape`` scheme). Following the links of one dimension and direction from a
node closes a cycle; a twist joins the rings of dimension J into longer cycles (the peripheral
link of J lands t_JK over in K). Dimension order enters these cycles in dimension order and
never comes back to one it left, so:

- ``bubble``: one VC per link; a packet enters a cycle (injected, or turning to a new
  dimension) only with room for two whole packets downstream (003 §6.3.2), so a cycle never
  fills; the dependencies between cycles follow the dimension order;
- ``dateline``: two VCs per link; the peripheral links of a dimension are its datelines: a
  packet moves to VC 1 after crossing one and starts each new dimension on VC 0. A leg crosses
  at most one peripheral link, so no VC-1 channel waits on a peripheral crossing;
- ``none``: one VC, no bubble: the cycles deadlock (kept to show it).

More VCs per link (``vcs``): with the bubble, every VC of a link is a set of cycles of its
own: a packet keeps its VC while it goes straight on and enters a cycle (injected, or turning)
on any VC with room for two whole packets, so no cycle of any VC fills; with the dateline the
VCs come in pairs ``2c, 2c + 1``, each pair the scheme above: a packet keeps its pair within a
dimension and starts each new one on VC ``2c`` of any pair. Entering a cycle is the only move
between VCs, and it goes to a later dimension, so the argument above holds VC by VC. A pair's
packets may then take different VCs and pass each other: with more VCs than the scheme's own
each pair keeps its path (its links), not its order.

``pe_ports`` PEs per router (parallel injection and ejection, so that a torus whose links
can carry more than one flit per node and cycle can be offered it): terminal ``t = p +
pe_ports * i`` is PE ``p`` of the node of index ``i`` (X fastest).
"""

import functools
import re
from dataclasses import dataclass

from . import checks
from .deadlock import ESCAPE_VCS, ChannelDependencyGraph, escape_vc_count
from .schema import Choice, Integer, Integers, Text, parameter
from .sizes import MAX_PE_PORTS, PeSlots, RouterSizes
from .torus import dimension_name
from .twist import TwistedTorusTopology, parse_dimension_pair, routing_path, theorem_violations
from .widths import index_width

#: Escape schemes of the RTL.
ESCAPES = tuple(ESCAPE_VCS)
#: Most routers: as for the other families.
MAX_NODES = 1024
#: Largest radix of a dimension.
MAX_RADIX = 64
#: Most VCs per link.
MAX_VCS = 8
Hop = tuple[tuple[int, ...], int, int]  # (node, dimension, sign)


def port_label(dim: int, sign: int) -> str:
    """``X+``, ``Y-``, …"""
    return dimension_name(dim) + ("+" if sign > 0 else "-")


def port_move(port: str) -> tuple[int, int]:
    """``(dimension, sign)`` of a link port label: ``Y-`` → ``(1, -1)``."""
    dim = next(d for d in range(3) if dimension_name(d) == port[:-1])
    return dim, 1 if port[-1] == "+" else -1


def read_twists(label: str, value) -> tuple[tuple[str, int], ...]:
    """The ``twists`` parameter: the text ``YX=4,ZX=1``, a mapping ``{"YX": 4}`` or
    ``(J, K, t)`` triples, held as ``(("YX", 4), ...)`` pairs (their dimensions are checked
    against the radices, and the pairs made canonical, by :meth:`TwistedNetworkConfig.rules`)."""
    try:
        if isinstance(value, str):
            pairs = parse_twists(value, 3)
        elif isinstance(value, (list, tuple)) and all(
                isinstance(item, (list, tuple)) and len(item) == 3 for item in value):
            pairs = {dimension_name(j) + dimension_name(k): t for j, k, t in value}
        else:
            pairs = dict(value)
    except (TypeError, ValueError):
        raise ValueError(f"{label} {_shown(value)}: must be text such as YX=4 or YX=2,ZX=1, a "
                         "mapping such as {YX = 4} or (J, K, t) triples") from None
    for key, amount in pairs.items():
        if not isinstance(key, str) or isinstance(amount, bool) or not isinstance(amount, int):
            raise ValueError(f"{label} {_shown(value)}: each twist must be a pair of dimensions "
                             "and an integer, such as YX=4")
    return tuple((key.strip().upper(), amount) for key, amount in pairs.items())


@dataclass(frozen=True)
class TwistedNetworkConfig(PeSlots, RouterSizes):
    """A twisted torus (``radices`` and ``twists``: :attr:`topology`, node-symmetric), its
    escape scheme (:data:`ESCAPES`) and the router sizes. Each field is a parameter
    (:mod:`twinnet.model.schema`)."""

    family = "twisted"

    radices: tuple[int, ...] = parameter(
        (8, 4), Integers(2, MAX_RADIX, (2, 3), "dimensions"),
        f"the radix of each dimension, 2 or 3 of them, each 2 to {MAX_RADIX}, at most "
        f"{MAX_NODES} routers (default 8,4)", flag="--radix")
    twists: tuple[tuple[str, int], ...] = parameter(
        (), Text(read_twists, "YX=4 or YX=2,ZX=1", write=dict),
        "the twists t_JK, e.g. YX=4 or YX=2,ZX=1 (the peripheral link of J lands t_JK over in "
        "K; node-symmetric sets only, 004's Theorem); default none", flag="--twist")
    escape: str = parameter(
        "bubble", Choice(ESCAPES),
        "deadlock avoidance: bubble (one VC, room for two packets to enter a cycle; the "
        "default), dateline (two VCs) or none (one VC: can deadlock)")
    vcs: int | None = parameter(
        None, Integer(None, None),  # the range depends on the escape: checked by the rules
        f"VCs per link, at most {MAX_VCS}: with the bubble any number, each VC its own set of "
        "cycles (a packet keeps its VC within a dimension and enters a cycle on any VC with "
        "room); with the dateline an even number, in pairs; none takes 1 (default: the "
        "escape's own, 1 or 2)")
    pe_ports: int = parameter(
        1, Integer(1, MAX_PE_PORTS),
        f"PEs per router, 1 to {MAX_PE_PORTS} (parallel injection and ejection: offer a torus "
        "whose links can carry more than one flit per node and cycle; default 1)")

    @classmethod
    def bubble(cls, values: dict) -> bool:
        return values["escape"] == "bubble"

    @classmethod
    def rules(cls, values: dict, names: dict) -> None:
        radices, label = values["radices"], names["radices"]
        nodes = functools.reduce(lambda a, b: a * b, radices)
        if nodes > MAX_NODES:
            raise ValueError(f"{label} {','.join(map(str, radices))}: {nodes} routers; at most "
                             f"{MAX_NODES} are allowed")
        given, twist_label = values["twists"], names["twists"]
        try:
            topology = TwistedTorusTopology(radices, dict(given))
        except (TypeError, ValueError) as error:
            raise ValueError(f"{twist_label} {_shown(dict(given))}: {error}") from None
        # Canonical: sorted, zero twists dropped (the same torus, the same configuration).
        values["twists"] = tuple((dimension_name(j) + dimension_name(k), t)
                                 for j, k, t in topology.twists)
        vcs, escape = values["vcs"], values["escape"]
        if vcs is not None:
            least = escape_vc_count(escape)
            checks.check_int(names["vcs"], vcs, minimum=least, maximum=MAX_VCS)
            if escape == "none" and vcs != 1:
                raise ValueError(f"{names['vcs']} {vcs}: escape none uses exactly 1 VC per "
                                 "link; the bubble and the dateline take more")
            if vcs % least:
                raise ValueError(f"{names['vcs']} {vcs}: the dateline takes VCs in pairs, so "
                                 f"an even number from 2 to {MAX_VCS}")
        violations = theorem_violations(topology)
        if violations:
            i, j, k = violations[0]
            raise ValueError(
                f"{twist_label} {_shown(dict(given))}: {topology.label()} is not node-symmetric "
                f"(004's Theorem: dimension {dimension_name(j)} both receives "
                f"t_{dimension_name(i)}{dimension_name(j)} and applies "
                f"t_{dimension_name(j)}{dimension_name(k)}), so routing from coordinate "
                "differences does not apply; only node-symmetric twists are allowed")
        super().rules(values, names)

    @functools.cached_property
    def topology(self) -> TwistedTorusTopology:
        return TwistedTorusTopology(self.radices, dict(self.twists))

    @property
    def escape_vc_count(self) -> int:
        """The VCs of one copy of the escape scheme: two with the dateline, else one."""
        return escape_vc_count(self.escape)

    @property
    def vc_count(self) -> int:
        """VCs per link: ``vcs``, else the escape's own."""
        return self.vcs if self.vcs is not None else self.escape_vc_count

    @property
    def in_order(self) -> bool:
        """Each pair's packets arrive in order: one VC set per link, the escape's own."""
        return self.vc_count == self.escape_vc_count

    @property
    def digit_widths(self) -> tuple[int, ...]:
        """Bits of each destination coordinate (a value ``>= d`` that fits is malformed)."""
        return tuple(index_width(d) for d in self.topology.radices)

    @property
    def source_width(self) -> int:
        return index_width(self.terminal_count)

    @property
    def header_width(self) -> int:
        return sum(self.digit_widths) + self.pe_width + self.source_width

    @property
    def ports(self) -> tuple[str, ...]:
        """The link ports of every router, ``X+ X- Y+ Y- …`` (dimensions of size 1 have
        none)."""
        return tuple(port_label(dim, sign) for dim, d in enumerate(self.topology.radices)
                     if d > 1 for sign in (1, -1))

    @property
    def name(self) -> str:
        """``twisted_8x4_tyx4_bubble`` (``_t0`` untwisted), plus ``_p`` and the PEs per router
        when more than one, ``_v`` and the VCs per link when not the escape's own, and
        ``_w``/``_l``/``_d`` for non-default sizes as for a twin torus."""
        topology = self.topology
        twists = "_".join(f"t{dimension_name(j)}{dimension_name(k)}{t}".lower().replace("-", "m")
                          for j, k, t in topology.twists) or "t0"
        suffix = f"_p{self.pe_ports}" if self.pe_ports > 1 else ""
        suffix += f"_v{self.vc_count}" if self.vc_count != self.escape_vc_count else ""
        return (f"twisted_{'x'.join(map(str, topology.radices))}_{twists}_{self.escape}"
                f"{suffix}{self.size_suffix}")

    def node_of(self, terminal: int) -> tuple[int, ...]:
        """The coordinates of terminal ``terminal``'s router."""
        node, result = terminal // self.pe_ports, []
        for d in self.topology.radices:
            result.append(node % d)
            node //= d
        return tuple(result)


def parse_twists(text: str, n: int) -> dict[str, int]:
    """``"YX=4"`` or ``"YX=4,ZX=1"`` → ``{"YX": 4, "ZX": 1}``. Raises ``ValueError``."""
    twists = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        pair, equals, amount = item.partition("=")
        if not equals or not re.fullmatch(r"[+-]?[0-9]{1,9}", amount.strip()):
            raise ValueError(f"twist {item!r} must be a pair of dimensions and an integer, "
                             "such as YX=4")
        j, k = parse_dimension_pair(pair, n)
        key = dimension_name(j) + dimension_name(k)
        if key in twists:
            raise ValueError(f"twist t_{key} is given twice")
        twists[key] = int(amount)
    return twists


def _shown(twists) -> str:
    if isinstance(twists, dict):
        return ",".join(f"{key}={value}" for key, value in twists.items())
    return str(twists)


def node_label(node: tuple[int, ...]) -> str:
    return ",".join(map(str, node))


def crosses(topology: TwistedTorusTopology, node, dim: int, sign: int) -> bool:
    """Whether the hop from ``node`` along ``dim`` in direction ``sign`` takes the dimension's
    peripheral (possibly twisted) link."""
    return node[dim] == (topology.radices[dim] - 1 if sign > 0 else 0)


@functools.lru_cache(maxsize=16)
def _cycles(topology: TwistedTorusTopology) -> dict:
    """``(node, dim, sign)`` → the cycle its channel lies on: the smallest node (in index
    order) reached by following ``dim`` in direction ``sign`` from it."""
    cycle = {}
    for dim, d in enumerate(topology.radices):
        if d < 2:
            continue
        for sign in (1, -1):
            for start in topology.nodes():
                if (start, dim, sign) in cycle:
                    continue
                members, node = [], start
                while True:
                    members.append(node)
                    node = topology.step(node, dim, sign)
                    if node == start:
                        break
                name = min(members, key=topology.index)
                for member in members:
                    cycle[member, dim, sign] = name
    return cycle


def scheme_channels(network: TwistedNetworkConfig, hops: list[Hop]) -> list:
    """The channels a path holds under the network's escape scheme: ``(node, dim, sign)``
    with one VC (``none``), ``(node, dim, sign, vc)`` with the dateline, ``(dim, sign,
    cycle)`` per cycle entered with the bubble."""
    topology = network.topology
    if network.escape == "none":
        return hops
    if network.escape == "bubble":
        cycles = _cycles(topology)
        entered = [(dim, sign, cycles[node, dim, sign]) for node, dim, sign in hops]
        return [c for i, c in enumerate(entered) if i == 0 or entered[i - 1] != c]
    channels, crossed, previous = [], False, None
    for node, dim, sign in hops:
        if (dim, sign) != previous:
            crossed = False
        channels.append((node, dim, sign, int(crossed)))
        crossed = crossed or crosses(topology, node, dim, sign)
        previous = (dim, sign)
    return channels


def router_hops(network: TwistedNetworkConfig, source: int,
                destination: int) -> list[tuple[str, str, int]]:
    """The links a packet from terminal ``source`` to ``destination`` crosses, as ``(router
    label, output port, VC)``."""
    topology = network.topology
    hops = routing_path(topology, network.node_of(source), network.node_of(destination))
    vcs = ([vc for *_, vc in scheme_channels(network, hops)]
           if network.escape == "dateline" else [0] * len(hops))
    return [(node_label(node), port_label(dim, sign), vc)
            for (node, dim, sign), vc in zip(hops, vcs)]


def dependency_graph(network: TwistedNetworkConfig) -> ChannelDependencyGraph:
    """The dependencies of every pair's path under the escape scheme (with the bubble, of the
    cycles entered), over every VC set of a link (module docstring): a dependency within a
    dimension keeps its set, one into a new dimension may reach any."""
    topology = network.topology
    nodes = list(topology.nodes())
    graph = ChannelDependencyGraph.from_paths(
        scheme_channels(network, routing_path(topology, a, b))
        for a in nodes for b in nodes if a != b)
    sets = network.vc_count // network.escape_vc_count
    if sets == 1:
        return graph
    # Every channel names its dimension and direction: (dim, sign, cycle) with the bubble,
    # (node, dim, sign, vc) with the dateline.
    move = (lambda channel: channel[:2]) if network.escape == "bubble" else (
        lambda channel: channel[1:3])
    return graph.copies(sets, lambda held, requested: move(held) == move(requested))
