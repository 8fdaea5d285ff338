"""Channel-dependency graphs and the Dally–Seitz acyclicity check.

A *channel* is any hashable value naming one virtual channel of one link, e.g. ``(link, vc)``.
Channel ``c1`` depends on ``c2`` when some packet may hold ``c1`` while requesting ``c2``; for a
deterministic routing function these are the consecutive channels of its paths. The routing
function is deadlock-free if the graph has no cycle. This module knows nothing about topologies:
each family builds its paths (or edges) and hands them here.
"""

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

Channel = Hashable

#: The escape schemes of the ring families (their rings' deadlock avoidance) and the VCs per
#: link one copy of each takes: ``bubble`` (one VC; a packet enters a ring only with room
#: for two whole packets), ``dateline`` (two: a packet moves to the second after crossing
#: its ring's dateline) and ``none`` (one VC, nothing: the rings can deadlock).
ESCAPE_VCS = {"bubble": 1, "dateline": 2, "none": 1}


def escape_vc_count(escape: str) -> int:
    """The VCs per link of one copy of ``escape`` (:data:`ESCAPE_VCS`)."""
    if escape not in ESCAPE_VCS:
        raise ValueError(f"escape must be one of {', '.join(ESCAPE_VCS)}, not {escape!r}")
    return ESCAPE_VCS[escape]


@dataclass
class ChannelDependencyGraph:
    """A directed graph over channels; ``edges[c1]`` is the set of channels ``c1`` depends on."""

    edges: dict[Channel, set[Channel]] = field(default_factory=dict)

    def add_edge(self, held: Channel, requested: Channel) -> None:
        self.edges.setdefault(held, set()).add(requested)
        self.edges.setdefault(requested, set())

    def add_path(self, channels: Sequence[Channel]) -> None:
        """Add the dependencies of one packet that holds each channel while requesting the next."""
        for held, requested in zip(channels, channels[1:]):
            self.add_edge(held, requested)

    @classmethod
    def from_paths(cls, paths: Iterable[Sequence[Channel]]) -> "ChannelDependencyGraph":
        graph = cls()
        for path in paths:
            graph.add_path(path)
        return graph

    def copies(self, count: int, keeps) -> "ChannelDependencyGraph":
        """This graph over ``count`` copies of every channel, ``(channel, copy)``: a dependency
        for which ``keeps(held, requested)`` holds stays within each copy, any other joins
        every copy to every copy (a packet may change copies there).

        Every dependency of the copies projects onto one of this graph, so a cycle over the
        copies is a closed walk here: the copies are acyclic exactly when this graph is.
        What the copies add is the channels and dependencies of every VC, for the verdict."""
        graph = ChannelDependencyGraph()
        for held, targets in self.edges.items():
            for copy in range(count):
                graph.edges.setdefault((held, copy), set())
            for requested in targets:
                for copy in range(count):
                    if keeps(held, requested):
                        graph.add_edge((held, copy), (requested, copy))
                    else:
                        for other in range(count):
                            graph.add_edge((held, copy), (requested, other))
        return graph

    @property
    def channel_count(self) -> int:
        return len(self.edges)

    @property
    def edge_count(self) -> int:
        return sum(len(targets) for targets in self.edges.values())

    def find_cycle(self) -> list[Channel] | None:
        """Return one cycle as ``[c0, c1, …, cm]`` with an edge ``cm → c0``, or ``None``.

        Iterative depth-first search with three colours, so that graphs with hundreds of
        thousands of channels do not hit Python's recursion limit. Nodes are visited in a
        sorted order where possible so that the reported cycle is reproducible.
        """
        white, grey, black = 0, 1, 2
        colour = dict.fromkeys(self.edges, white)
        for root in _ordered(self.edges):
            if colour[root] != white:
                continue
            colour[root] = grey
            stack = [(root, iter(_ordered(self.edges[root])))]
            while stack:
                node, successors = stack[-1]
                for successor in successors:
                    if colour[successor] == grey:
                        trail = [entry[0] for entry in stack]
                        return trail[trail.index(successor):]
                    if colour[successor] == white:
                        colour[successor] = grey
                        stack.append((successor, iter(_ordered(self.edges[successor]))))
                        break
                else:
                    colour[node] = black
                    stack.pop()
        return None

    def is_cycle(self, cycle: Sequence[Channel]) -> bool:
        """True if ``cycle`` is non-empty and each channel depends on the next (cyclically)."""
        if not cycle:
            return False
        return all(cycle[(i + 1) % len(cycle)] in self.edges.get(c, ()) for i, c in
                   enumerate(cycle))


def _ordered(channels: Iterable[Channel]) -> list[Channel]:
    channels = list(channels)
    try:
        return sorted(channels)
    except TypeError:
        return channels
