"""Analyses of twin tori: internal-link transit counts, PE-level distances, dependency graphs.

Twin DOR and the card layout are the same at every node and depend only on ``(d - c) mod k``,
so ports and distances are translation-invariant. The analyses use this: a per-node count is
the sum, over every destination offset, of what happens along the path from the origin, and
distances need a BFS from the origin's two cards only. VC choices (mode ``vc``) depend on
absolute coordinates, so there the channel-dependency graph tries one destination digit of
each class the routing tells apart instead (:func:`_vc_dependencies`). Brute-force
variants that walk every pair exist for cross-checking on small instances.
"""

import functools
import math
from collections import Counter, deque
from dataclasses import dataclass

from .deadlock import ChannelDependencyGraph
from .torus import CubeTopology, Node, ring_direction
from .twin import PE_PORT, Card, PEAddress, Port, TwinTorusTopology
from .twin_routing import TwinHop, internal_vcs, path, route

Channel = tuple[Node, int, Port, int]  # (node, card index, output port, VC)


# --- internal-link transit counts (003 §5.1–5.2.5, Tables 7–8; 000 §3.3.2) ------------------------

def _node_path_crossings(config: TwinTorusTopology, source: Node, destination: Node):
    """Yield ``(node, in_port, out_port)`` for each node a node-level DOR path passes through.

    Node-level routing ignores PEs; the through-nodes are those neither first nor last.
    """
    hops = config.cube.dor_path(source, destination)
    for (_, dim_in, sign_in), (node, dim_out, sign_out) in zip(hops, hops[1:]):
        yield node, Port.external(dim_in, -sign_in), Port.external(dim_out, sign_out)


def _transit_type(config: TwinTorusTopology, out_port: Port) -> int:
    return 2 if out_port.dim in config.configuration.split_dims else 1


def internal_transit_counts(config: TwinTorusTopology) -> Counter:
    """Per node: how many node-level DOR paths passing through it cross its internal link.

    One path per ordered pair of distinct nodes; only paths that neither start nor end at the
    node count. Returns a ``Counter`` with keys ``"type1"``, ``"type2"`` and ``"total"``.
    """
    origin = (0,) * config.n
    counts = Counter(type1=0, type2=0, total=0)
    card_of = config.configuration.card_of
    for offset in config.nodes():
        if offset == origin:
            continue
        for _, in_port, out_port in _node_path_crossings(config, origin, offset):
            if card_of(in_port) != card_of(out_port):
                counts[f"type{_transit_type(config, out_port)}"] += 1
                counts["total"] += 1
    return counts


def internal_transit_count(config: TwinTorusTopology) -> int:
    """Paths through a node that use both its cards (counted as in 003 §5.1)."""
    return internal_transit_counts(config)["total"]


def internal_transit_count_at(config: TwinTorusTopology, node: Node) -> int:
    """The same count found the slow way: walk every ordered pair and look at ``node``."""
    card_of = config.configuration.card_of
    count = 0
    for source in config.nodes():
        for destination in config.nodes():
            for through, in_port, out_port in _node_path_crossings(config, source, destination):
                if through == node and card_of(in_port) != card_of(out_port):
                    count += 1
    return count


# --- PE-level distances (003 §4) -----------------------------------------------------------------

@dataclass(frozen=True)
class PeDistanceSummary:
    """Diameter and average distance over ordered pairs of distinct PEs, in links crossed."""

    pe_count: int
    diameter: int
    average: float


def card_distances(config: TwinTorusTopology, start: Card) -> dict[Card, int]:
    """Links crossed (external and internal) on a shortest route from ``start`` to each card."""
    distance = {start: 0}
    queue = deque([start])
    while queue:
        card = queue.popleft()
        for _, (neighbor, _) in config.card_links(card):
            if neighbor not in distance:
                distance[neighbor] = distance[card] + 1
                queue.append(neighbor)
    return distance


def pe_distance_summary(config: TwinTorusTopology) -> PeDistanceSummary:
    """PE-level diameter and average distance (a PE is reached through its own card)."""
    origin = (0,) * config.n
    values = []
    for index in range(config.card_count):
        start = Card(origin, index)
        values += [d for card, d in card_distances(config, start).items() if card != start]
    return PeDistanceSummary(config.pe_count, max(values), sum(values) / len(values))


def equivalent_2d_torus(pe_count: int) -> CubeTopology:
    """The 2D torus with ``pe_count`` nodes (one PE each) whose sides are closest to square."""
    side = math.isqrt(pe_count)
    while pe_count % side:
        side -= 1
    return CubeTopology((side, pe_count // side))


def torus_distance_summary(cube: CubeTopology) -> PeDistanceSummary:
    """Diameter and average distance over ordered pairs of distinct nodes of a torus."""
    ring_sums = []
    for k in cube.radices:
        ring_sums.append(sum(min(d, k - d) for d in range(k)))
    # Total over all destinations from one node: sum over dimensions of (ring sum × other sizes).
    total = sum(ring_sum * cube.node_count // k for ring_sum, k in zip(ring_sums, cube.radices))
    diameter = sum(k // 2 for k in cube.radices)
    return PeDistanceSummary(cube.node_count, diameter, total / (cube.node_count - 1))


# --- channel-dependency graphs (003 §6.2–6.3; 000 §4.2–4.3) --------------------------------------

def hop_channel(hop: TwinHop) -> Channel | None:
    """The network channel a hop occupies when it leaves, or ``None`` for ejection to the PE."""
    if hop.out_port == PE_PORT:
        return None
    return hop.card.node, hop.card.index, hop.out_port, hop.vc


def path_channels(hops: list[TwinHop]) -> list[Channel]:
    return [c for c in map(hop_channel, hops) if c is not None]


def dependency_graph(config: TwinTorusTopology) -> ChannelDependencyGraph:
    """The channel-dependency graph of twin DOR over ``(card link, VC)`` channels.

    Every ordered pair of PEs is routed. A walk toward one destination stops at the first
    channel already seen for that destination: the next decision depends only on the card,
    the input port (both fixed by the channel) and the destination, so the rest of that path
    was recorded already.

    Modes ``none`` and ``bubble`` route by the offset ``(d - c) mod k`` alone, so the graph is
    the same seen from every node: only the destinations at the origin are walked, and each
    dependency found is placed at every node by translation (on 3DT 8x8x8, 0.2 s instead of
    13 s). The VC rules of mode ``vc`` depend on absolute coordinates: see
    :func:`_vc_dependencies`.
    """
    if config.mode == "vc":
        graph = ChannelDependencyGraph()
        for held, requested in _vc_dependencies(config):
            graph.add_edge(held, requested)
        return graph
    origin = (0,) * config.n
    destinations = [pe for pe in config.pes() if pe.node == origin]
    found: dict[tuple[Channel, Channel], None] = {}  # in the order found: reproducible
    for destination in destinations:
        seen: set[Channel] = set()
        for source in config.pes():
            held = None
            card, in_port = source.card, PE_PORT
            while True:
                decision = route(config, card, in_port, destination)
                if decision.port == PE_PORT:
                    break
                channel = (card.node, card.index, decision.port, decision.vc)
                if held is not None:
                    found[held, channel] = None
                if channel in seen:
                    break
                seen.add(channel)
                held = channel
                card, in_port = config.link_target(card, decision.port)
    graph = ChannelDependencyGraph()
    # Each dependency once, seen from the node of the channel held, then at every node.
    relative = dict.fromkeys((_shifted(config, held, held[0], -1),
                              _shifted(config, requested, held[0], -1))
                             for held, requested in found)
    for node in config.nodes():
        for held, requested in relative:
            graph.add_edge(_shifted(config, held, node), _shifted(config, requested, node))
    return graph


def _digit_class(current: int, destination: int, k: int) -> tuple[int, int]:
    """What twin DOR in mode ``vc`` reads of one destination digit at a node's digit: the
    order of the two (equal, up ``d_i > c_i`` or low, 003 Alg. 3-4) and the ring direction
    (Alg. 1)."""
    order = (destination > current) - (destination < current)
    return order, ring_direction(current, destination, k) if order else 0


@functools.cache
def _representatives(k: int, current: int) -> tuple[int, ...]:
    """One destination digit of each class that a packet at digit ``current`` of a k-ring, and
    at either neighbour, can tell apart (the digit itself excluded)."""
    seen = {}
    for digit in range(k):
        if digit != current:
            key = tuple(_digit_class((current + step) % k, digit, k) for step in (-1, 0, 1))
            seen.setdefault(key, digit)
    return tuple(seen.values())


def _vc_dependencies(config: TwinTorusTopology):
    """The dependencies of mode ``vc`` without walking every pair of PEs.

    In mode ``vc`` a decision does not depend on the port a packet came in through (no bubble
    flag) and every card injects toward every destination, so the dependencies are exactly the
    pairs (decision at card ``a`` for ``d``, decision for ``d`` at the card ``b`` it leads
    to), over every card and destination that are not ejections. A decision reads the
    destination only through, in the lowest dimension where it differs from the node, its
    digit's class (:func:`_digit_class`), and, where every digit is equal, the PE: so for each
    card and each dimension ``i`` the first to differ, one digit per class is tried (the
    classes seen from ``a``'s digit and both neighbours', where ``b`` can be), and where
    ``b`` reaches that digit, one of each class in each later dimension, or the PEs. The
    graph equals the one of every full path (tests/model/test_twin_analysis.py).
    """
    for card in config.cards():
        node = card.node
        for dim, k in enumerate(config.radices):
            for digit in _representatives(k, node[dim]):
                target = list(node)
                target[dim] = digit
                first = route(config, card, PE_PORT, PEAddress(tuple(target), 0))
                if first.port == PE_PORT:
                    continue
                held = (node, card.index, first.port, first.vc)
                after, in_port = config.link_target(card, first.port)
                destinations = [PEAddress(tuple(target), 0)]
                if after.node[dim] == digit:  # b is there: a later dimension decides, or the PE
                    destinations = [PEAddress(tuple(target), pe)
                                    for pe in range(config.card_count)]
                    for later in range(dim + 1, config.n):
                        for other in _representatives(config.radices[later], node[later]):
                            tail = list(target)
                            tail[later] = other
                            destinations.append(PEAddress(tuple(tail), 0))
                for destination in destinations:
                    then = route(config, after, in_port, destination)
                    if then.port != PE_PORT:
                        yield held, (after.node, after.index, then.port, then.vc)


def _shifted(config: TwinTorusTopology, channel: Channel, offset, sign: int = 1) -> Channel:
    """``channel`` moved by ``sign`` times ``offset`` (a node), around every ring."""
    node, card, port, vc = channel
    return (tuple((a + sign * b) % k for a, b, k in zip(node, offset, config.radices)),
            card, port, vc)


def dependency_graph_of_paths(config: TwinTorusTopology) -> ChannelDependencyGraph:
    """The same graph built plainly from every full PE-to-PE path (slow; for cross-checks)."""
    return ChannelDependencyGraph.from_paths(
        path_channels(path(config, s, d)) for s in config.pes() for d in config.pes())


def ring_of(config: TwinTorusTopology, channel: Channel):
    """The ring a channel is a segment of, or ``None``.

    An external link of dimension i belongs to the ring of dimension i through its node; a
    type-2 internal VC of split dimension i is a segment of that same ring.
    """
    node, _, port, vc = channel
    if port.is_external:
        dim = port.dim
    elif config.mode != "none" and internal_vcs(config)[vc].type == 2:
        dim = internal_vcs(config)[vc].dim
    else:
        return None
    return dim, node[:dim] + node[dim + 1:]


def cross_ring_graph(config: TwinTorusTopology, graph: ChannelDependencyGraph
                     ) -> ChannelDependencyGraph:
    """``graph`` without the dependencies that stay inside one ring.

    Bubble flow control keeps each ring from filling up, so cycles inside a ring are harmless;
    what must be acyclic is what is left: the dependencies between different rings and the
    type 1 and type 3 internal channels.
    """
    reduced = ChannelDependencyGraph()
    for held, targets in graph.edges.items():
        reduced.edges.setdefault(held, set())
        ring = ring_of(config, held)
        for requested in targets:
            if ring is None or ring_of(config, requested) != ring:
                reduced.add_edge(held, requested)
    return reduced


@dataclass(frozen=True)
class DeadlockReport:
    """The outcome of a deadlock check: graph size and one offending cycle, if any."""

    mode: str
    channel_count: int
    dependency_count: int
    cycle: list[Channel] | None
    rule: str

    @property
    def deadlock_free(self) -> bool:
        return self.cycle is None


def deadlock_check(config: TwinTorusTopology) -> DeadlockReport:
    """Modes ``none`` and ``vc``: the whole graph must be acyclic. Mode ``bubble``: the graph
    less its in-ring dependencies must be acyclic (rings are guarded by the bubble)."""
    graph = dependency_graph(config)
    if config.mode == "bubble":
        checked, rule = cross_ring_graph(config, graph), "cross-ring dependencies"
    else:
        checked, rule = graph, "whole graph"
    return DeadlockReport(config.mode, graph.channel_count, graph.edge_count,
                          checked.find_cycle(), rule)


def format_channel(channel: Channel) -> str:
    node, card, port, vc = channel
    return f"{Card(node, card)} {port} vc{vc}"


