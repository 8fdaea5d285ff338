"""A bidirectional ring of ``nodes`` routers, one PE each, as a twinnet family: its model here,
its RTL and route specification in :mod:`.hardware`, its analysis in :mod:`.analysis`."""

from dataclasses import dataclass

from twinnet.families import Family, escape_verdict, out_of_range
from twinnet.model.deadlock import ChannelDependencyGraph
from twinnet.model.schema import Choice, Integer, parameter
from twinnet.model.sizes import RouterSizes
from twinnet.model.widths import index_width

#: Ports of every router: the links toward node + 1 and node - 1, then the PE.
PLUS, MINUS, PE = "x+", "x-", "pe"
MAX_NODES = 256


@dataclass(frozen=True)
class RingNetworkConfig(RouterSizes):
    """A ring and its router sizes."""

    family = "ring"

    nodes: int = parameter(8, Integer(3, MAX_NODES), f"routers in the ring, 3 to {MAX_NODES} "
                           "(default 8)")
    escape: str = parameter("bubble", Choice(("bubble", "dateline")),
                            "deadlock avoidance: bubble (one VC, room for two packets to enter "
                            "the ring; the default) or dateline (two VCs, VC 1 after the link "
                            "from the last node to node 0, either way round)")

    @classmethod
    def bubble(cls, values: dict) -> bool:
        return values["escape"] == "bubble"

    @property
    def name(self) -> str:
        return f"ring{self.nodes}_{self.escape}{self.size_suffix}"

    @property
    def vc_count(self) -> int:
        return 2 if self.escape == "dateline" else 1

    @property
    def node_width(self) -> int:
        return index_width(self.nodes)

    @property
    def header_width(self) -> int:
        return 2 * self.node_width  # the destination and the source

    def path(self, source: int, destination: int) -> list[tuple[int, str, int]]:
        """The (node, output port, VC) of each link from ``source`` to ``destination``: the
        shorter way round, + on a tie; VC 1 (dateline) once past the link between the last
        node and node 0."""
        ahead = (destination - source) % self.nodes
        step, port = (1, PLUS) if 2 * ahead <= self.nodes else (-1, MINUS)
        hops, node, vc = [], source, 0
        while node != destination:
            hops.append((node, port, vc))
            vc |= self.escape == "dateline" and node + step in (-1, self.nodes)  # the wrap
            node = (node + step) % self.nodes
        return hops


class RingFamily(Family):
    """Rings: :class:`RingNetworkConfig`, :mod:`twinnet_ring.hardware`."""

    name = "ring"
    configuration = RingNetworkConfig
    hardware = "twinnet_ring.hardware"
    route_spec = "twinnet_ring.hardware:route_spec"
    analyses = ("twinnet_ring.analysis",)
    presets = {"ring-16": {"family": "ring", "nodes": 16}}
    limits = f"{MAX_NODES} nodes in a ring"

    def section(self, config) -> dict:
        return self.describe(config, derived={"vc_count": config.vc_count},
                             terminal_order="terminal t is the PE of router t",
                             route="route.dest is the destination's node",
                             malformed="route.dest >= nodes (when the field can hold one): "
                                       "dropped at injection and counted on drop_count")

    def terminal_digits(self, config) -> list[tuple[str, int]]:
        return [("route.dest", config.nodes)]

    def malformed(self, config, rng) -> dict[str, int] | None:
        return out_of_range({"route.dest": (config.nodes, config.node_width)}, rng)

    def hops(self, config, source: int, destination: int) -> list[tuple[str, str, int]]:
        return [(str(node), port, vc) for node, port, vc in config.path(source, destination)]

    def deadlock(self, config) -> dict:
        """A path's channels: all, or with the bubble its first (it stays in that ring)."""
        def channels(path):
            return ([path[0][1]] if path else []) if config.escape == "bubble" else path

        pairs = [(a, b) for a in range(config.nodes) for b in range(config.nodes) if a != b]
        graph = ChannelDependencyGraph.from_paths(channels(config.path(a, b)) for a, b in pairs)
        return escape_verdict(graph, config.escape, "rings")
