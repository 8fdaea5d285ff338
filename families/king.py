"""The king family (002): meshes and tori with diagonal and king links."""

import random

from twinnet.model import king_network

from . import drawing
from .contract import Family, escape_verdict, out_of_range

#: 002 Table 3's networks (16x16, uniform traffic; bench/king.py): 002's adaptive routing
#: (hop-by-hop on T and DT, 2S hop-by-hop on KT) over the bubble escape, 8-flit packets, 4 VCs
#: (002 ran Table 3 with "enough" VCs: one escape, three adaptive; on the split router KT16
#: peaked at 1.089 flits/node/cycle with 2 VCs, 1.224 with 4, 1.246 with 6, one seed, before
#: both ties) of 32 flits (four packets per VC: the reading of 002's "32 phits" its simulator
#: can run), 2 PEs per router (KT's bound is above one flit per node and cycle), iSLIP
#: allocation (adaptive packets ask for every open profitable output; bench/allocators.py, 2
#: VCs: peaks x1.016 on T16, x1.029 on DT16, x1.081 on KT16 over the round robin, 3 seeds),
#: and on KT both ties (002's simulator breaks a torus tie at random; with the + tie the +
#: ways carry more and KT16 peaked at 0.613 flits/PE/cycle, with both ties 0.653, one seed).
PRESETS = {
    f"002-{kind.lower()}16": {"family": "king", "kind": kind, "side": 16, "routing": routing,
                              "escape": "bubble", "vcs": 4, "max_packet_length": 8,
                              "buffer_depth": 32, "pe_ports": 2, "allocator": "islip",
                              **extra}
    for kind, routing, extra in (("T", "hop-by-hop", {}), ("DT", "hop-by-hop", {}),
                                 ("KT", "2s", {"ties": "both"}))
}


class KingFamily(Family):
    """The square networks of 002 (M, DM, KM, T, DT, KT) under deterministic or adaptive
    routing: :mod:`twinnet.model.king_network`."""

    name = "king"
    configuration = king_network.KingNetworkConfig
    presets = PRESETS
    limits = (f"{king_network.MAX_SIDE}x{king_network.MAX_SIDE} king and diagonal tori without "
              f"a dateline, {king_network.MAX_WALKED_SIDE}x{king_network.MAX_WALKED_SIDE} "
              "meshes and tori with one")
    hardware = "twinnet.hdl.king"
    route_spec = "twinnet.hdl.formal.king_spec:king_spec"
    analyses = ("twinnet.cli.analyze_king",)
    modules = ("twinnet.model.king", "twinnet.model.king_network", "twinnet.hdl.king_route")

    def layout(self, config, netlist) -> dict[str, drawing.Box]:
        """The nodes on their grid (labels ``x,y``)."""
        side = config.topology.side
        return drawing.grid([router.label for router in netlist.routers], (side, side))

    def line(self, config, link, boxes: dict[str, drawing.Box]) -> drawing.Line:
        """Grid neighbours (diagonals included) straight, wrap-around links as arcs."""
        side = config.topology.side
        return drawing.grid_line(drawing.coordinates(link.source),
                                 drawing.coordinates(link.target), (side, side))

    def section(self, config) -> dict:
        topology = config.topology
        return self.describe(
            config,
            derived={"node_count": topology.node_count, "buffer_depth": config.depth,
                     "vc_count": config.vc_count, "escape_vcs": config.escape_vc_count,
                     "escape_routing": config.escape_routing,
                     "broadcast_vc": config.broadcast_vc},
            terminal_order="terminal t = pe + pe_ports * (x + side * y) is PE port pe<pe> of "
                           "router x,y",
            route="route.x and route.y are the destination's coordinates, route.pe (with "
                  "several PEs per router) its PE; with broadcast, route.broadcast = 1 marks a "
                  "broadcast (x and y ignored, a copy at PE route.pe of every other router) "
                  "and route.ttl is its TTL (a PE leaves it 0)",
            malformed="a destination coordinate >= side or PE >= pe_ports (when the field can "
                      "hold one): the packet is dropped at injection and counted on drop_count",
            section={"kind": topology.kind, "side": topology.side, "routing": config.routing,
                     "escape": config.escape, "pe_ports": config.pe_ports,
                     "broadcast": config.broadcast, "ties": config.ties})

    def terminal_count(self, config) -> int:
        return config.terminal_count

    def router_count(self, config) -> int:
        return config.topology.node_count

    def terminal_label(self, config, terminal: int) -> str:
        label = king_network.node_label(config.node_of(terminal))
        return f"{label}/pe{config.pe_of(terminal)}" if config.pe_ports > 1 else label

    def destination(self, config, terminal: int) -> dict[str, int]:
        x, y = config.node_of(terminal)
        pe = {"route.pe": config.pe_of(terminal)} if config.pe_width else {}
        return {"route.x": x, "route.y": y, **pe}

    def malformed(self, config, rng: random.Random) -> dict[str, int] | None:
        side = config.topology.side
        # Each field with its count of valid values and its width.
        fields = {"route.x": (side, config.coordinate_width),
                  "route.y": (side, config.coordinate_width)}
        if config.pe_width:
            fields["route.pe"] = (config.pe_ports, config.pe_width)
        return out_of_range(fields, rng)

    def hops(self, config, source: int, destination: int) -> list[tuple[str, str, int]]:
        return king_network.router_hops(config, source, destination)

    def deterministic(self, config) -> bool:
        return config.deterministic

    def path_error(self, config, source: int, destination: int,
                   hops: list[tuple[str, str, int]]) -> str | None:
        return king_network.path_error(config, source, destination, hops)

    def broadcast_route(self, config, pe: int) -> dict[str, int] | None:
        if not config.broadcast:
            return None
        return {"route.broadcast": 1, **({"route.pe": pe} if config.pe_width else {})}

    def broadcast_error(self, config, source: int, pe: int, hops: list[tuple[str, str, int]],
                        receivers: list[int]) -> str | None:
        return king_network.broadcast_error(config, source, pe, hops, receivers)

    def terminal_digits(self, config) -> list[tuple[str, int]]:
        side = config.topology.side
        pe = [("route.pe", config.pe_ports)] if config.pe_width else []
        return [*pe, ("route.x", side), ("route.y", side)]

    def deadlock(self, config) -> dict:
        return escape_verdict(king_network.dependency_graph(config), config.escape, "rings")
