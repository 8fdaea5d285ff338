"""The twisted-torus family (004)."""

import random

from twinnet.model import twisted_network

from . import drawing
from .contract import Family, escape_verdict, out_of_range

#: 004's rectangular tori, twisted by t_YX = d_x / 2 (the twist with the smallest diameter),
#: and their untwisted twins (``-untwisted``): minimal dimension-order routing over the
#: bubble escape with 4 VCs per link (each its own bubble: a blocked packet holds up only its
#: own VC; 16x8 twisted over untwisted x1.17 with one VC, x1.38 with four, one seed), 4-flit
#: packets, four packets of buffer per VC (bench/twisted.py); 8x4 with 2 PEs per router (its
#: twisted links can carry 1.19 flits per node and cycle, more than one PE port offers).
PRESETS = {
    f"004-{dx}x{dy}{suffix}": {"family": "twisted", "radices": [dx, dy],
                               "twists": twists, "escape": "bubble", "vcs": 4,
                               "pe_ports": 2 if (dx, dy) == (8, 4) else 1,
                               "max_packet_length": 4, "buffer_depth": 16}
    for dx, dy in [(8, 4), (16, 8), (24, 12), (48, 12)]
    for suffix, twists in (("", f"YX={dx // 2}"), ("-untwisted", ""))
}

#: How a twisted wrap link is drawn.
TWISTED_LINE = drawing.Line("twisted", "#dd8452", bend=0.6)



class TwistedFamily(Family):
    """Twisted tori (004) under dimension-order routing over their minimal record:
    :mod:`twinnet.model.twisted_network`."""

    name = "twisted"
    configuration = twisted_network.TwistedNetworkConfig
    presets = PRESETS
    limits = f"{twisted_network.MAX_NODES} nodes in a twisted torus"
    hardware = "twinnet.hdl.twisted"
    route_spec = "twinnet.hdl.formal.twisted_spec:twisted_spec"
    analyses = ("twinnet.cli.analyze_twist",)
    modules = ("twinnet.model.twist", "twinnet.model.twisted_network",
               "twinnet.hdl.twisted_route")

    def layout(self, config, netlist) -> dict[str, drawing.Box]:
        """The nodes on their grid (labels ``x,y[,z]``; a 3-D one in oblique projection)."""
        radices = config.topology.radices
        return drawing.grid([router.label for router in netlist.routers], radices)

    def line(self, config, link, boxes: dict[str, drawing.Box]) -> drawing.Line:
        """Grid neighbours straight, wrap-around links as arcs; a twisted wrap link (one that
        lands on another column) in its own colour."""
        return drawing.grid_line(drawing.coordinates(link.source),
                                 drawing.coordinates(link.target), config.topology.radices,
                                 skewed=TWISTED_LINE)

    def section(self, config) -> dict:
        topology = config.topology
        return self.describe(
            config,
            derived={"node_count": topology.node_count, "buffer_depth": config.depth,
                     "vc_count": config.vc_count, "escape_vcs": config.escape_vc_count,
                     "label": topology.label()},
            terminal_order="terminal t = pe + pe_ports * (o0 + d0 * (o1 + d1 * o2)) is PE "
                           "port pe of router o0,o1[,o2] (o0 is X)",
            route="route.o<i> are the destination's coordinates (o0 is X), route.pe (with "
                  "several PEs per router) its PE",
            malformed="a destination coordinate >= its radix or PE >= pe_ports (when the "
                      "field can hold one): the packet is dropped at injection and counted on "
                      "drop_count",
            section={"radices": list(topology.radices), "twists": config.to_dict()["twists"],
                     "escape": config.escape, "pe_ports": config.pe_ports})

    def terminal_count(self, config) -> int:
        return config.terminal_count

    def router_count(self, config) -> int:
        return config.topology.node_count

    def terminal_label(self, config, terminal: int) -> str:
        label = twisted_network.node_label(config.node_of(terminal))
        return f"{label}/pe{config.pe_of(terminal)}" if config.pe_ports > 1 else label

    def destination(self, config, terminal: int) -> dict[str, int]:
        pe = {"route.pe": config.pe_of(terminal)} if config.pe_width else {}
        return {**{f"route.o{dim}": x for dim, x in enumerate(config.node_of(terminal))}, **pe}

    def malformed(self, config, rng: random.Random) -> dict[str, int] | None:
        # Each field with its count of valid values and its width.
        fields = {f"route.o{dim}": (d, w) for dim, (d, w) in
                  enumerate(zip(config.topology.radices, config.digit_widths))}
        if config.pe_width:
            fields["route.pe"] = (config.pe_ports, config.pe_width)
        return out_of_range(fields, rng)

    def hops(self, config, source: int, destination: int) -> list[tuple[str, str, int]]:
        return twisted_network.router_hops(config, source, destination)

    def in_order(self, config) -> bool:
        return config.in_order

    def path_error(self, config, source: int, destination: int,
                   hops: list[tuple[str, str, int]]) -> str | None:
        """The dimension-order path's links exactly; with more VCs than the escape's own, on
        any VC set, kept within each dimension (:mod:`twinnet.model.twisted_network`)."""
        expected = self.hops(config, source, destination)
        if config.in_order:
            return None if hops == expected else f"model says {expected}"
        own = config.escape_vc_count
        same = len(hops) == len(expected) and all(
            hop[:2] == want[:2] and 0 <= hop[2] < config.vc_count and hop[2] % own == want[2]
            for hop, want in zip(hops, expected))
        # A new dimension starts on any set; going straight on keeps it.
        same = same and all(hop[2] // own == before[2] // own
                            for before, hop in zip(hops, hops[1:]) if hop[1] == before[1])
        return None if same else (f"model says {expected} with VC v + {own} c of any set c "
                                  f"below {config.vc_count // own}, one set per dimension")

    def terminal_digits(self, config) -> list[tuple[str, int]]:
        pe = [("route.pe", config.pe_ports)] if config.pe_width else []
        return [*pe, *((f"route.o{dim}", d) for dim, d in enumerate(config.topology.radices))]

    def deadlock(self, config) -> dict:
        return escape_verdict(twisted_network.dependency_graph(config), config.escape, "cycles",
                              copies=config.vc_count // config.escape_vc_count)
