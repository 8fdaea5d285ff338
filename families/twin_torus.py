"""The twin-torus family (003): twin tori and plain tori, :mod:`twinnet.model.twin`."""

import functools
import random

from twinnet.model import checks, twin, twin_analysis, twin_network
from twinnet.model.twin_routing import path

from . import drawing
from .contract import Family, verdict


@functools.lru_cache(maxsize=8)
def _pe_addresses(topology: twin.TwinTorusTopology) -> tuple[twin.PEAddress, ...]:
    """Every PE of ``topology`` in PE order, listed once per topology: the bench asks for a
    destination and a path per packet."""
    return tuple(topology.pes())


#: The papers' twin-torus instances (003 §7.4: all in configuration D).
PRESETS = {
    f"3dt-{'x'.join(map(str, radices))}": {"family": "twin-torus", "radices": list(radices),
                                           "configuration": "D", "mode": "bubble"}
    for radices in [(4, 4, 2), (4, 4, 4), (5, 5, 5), (6, 6, 6), (8, 4, 4), (8, 8, 8)]
}
#: The plain 2D tori 003 §7.4 compares them with (64, 128, 256, 432, 441 and 1,024 PEs).
PRESETS.update({
    f"2d-{'x'.join(map(str, radices))}": {"family": "twin-torus", "radices": list(radices),
                                          "configuration": "torus", "mode": "bubble"}
    for radices in [(8, 8), (16, 8), (16, 16), (24, 18), (21, 21), (32, 32)]
})

#: 003 §7.1's router settings on the 3DT 4x4x4 of §7.3 (configuration D, 4-flit packets):
#: one 128-flit buffer per link with bubble flow control, or VCs of 32 flits (the RTL has the
#: 2 VCs of 003 §6.3.1 where the paper simulates 4).
PRESETS.update({
    "003-bubble": {"family": "twin-torus", "radices": [4, 4, 4], "configuration": "D",
                   "mode": "bubble", "max_packet_length": 4, "buffer_depth": 128},
    "003-vc": {"family": "twin-torus", "radices": [4, 4, 4], "configuration": "D",
               "mode": "vc", "max_packet_length": 4, "buffer_depth": 32},
    # The 2D torus of the same 128 PEs (003 §7.4's 16x8) with the same router settings.
    "003-torus": {"family": "torus", "radices": [16, 8], "configuration": "torus",
                  "mode": "bubble", "max_packet_length": 4, "buffer_depth": 128},
})

class TwinTorusFamily(Family):
    """Twin tori and plain tori (configuration ``torus``): :mod:`twinnet.model.twin`."""

    name = "twin-torus"
    configuration = twin_network.TwinNetworkConfig
    presets = PRESETS
    hardware = "twinnet.hdl.twin_torus"
    #: ``torus``: the plain torus, one router per node.
    aliases = {"torus": {"configuration": "torus"}}
    default = True
    #: The 2x2 torus: on the ULX3S-85F the 3x3 torus takes 34 % of the LUTs but nextpnr had
    #: not routed it after 40 minutes (docs/fpga.md); the 2x2 builds in minutes.
    board_network = {"configuration": "torus", "radices": [2, 2], "mode": "bubble"}

    limits = (f"at most {twin_network.MAX_ROUTERS} routers in a torus or twin torus (the 2D "
              "128x128 torus, 3DT 16x16x32)")
    route_spec = "twinnet.hdl.formal.twin_spec:twin_spec"
    analyses = ("twinnet.cli.analyze_twin",)
    modules = ("twinnet.model.twin_network", "twinnet.model.twin", "twinnet.model.twin_routing",
               "twinnet.model.twin_analysis", "twinnet.hdl.twin_card", "twinnet.hdl.twin_route")

    def merge(self, values: dict, labels: dict, source: dict, source_labels: dict) -> None:
        """Later values win, but the size keys (``n``, ``k``, ``radices``) merge: a later
        ``radices`` replaces the size; over earlier radices, a later ``k`` alone keeps their
        dimension count and a later ``n`` alone keeps their radix (which must then be the same
        in every dimension); over an earlier ``n``/``k``, each replaces its own."""
        given = {key: source[key] for key in ("n", "k", "radices") if key in source}
        if "radices" in given and ({"n", "k"} & given.keys()):
            other = "n" if "n" in given else "k"
            raise ValueError(f"{source_labels['radices']} and {source_labels[other]} both give "
                             "the size: give either radices or n and k, not both")
        if "radices" in given:
            for key in ("n", "k"):
                values.pop(key, None)
                labels.pop(key, None)
        elif given and "radices" in values:
            radices, label = values.pop("radices"), labels.pop("radices")
            radices = checks.check_int_tuple(label, radices)
            if "n" not in given:
                values["n"], labels["n"] = len(radices), label
            elif "k" not in given:
                if len(set(radices)) != 1:
                    raise ValueError(f"{source_labels['n']} needs --k: {label} gives unequal "
                                     f"radices {','.join(map(str, radices))}")
                values["k"], labels["k"] = radices[0], label
        for key, value in source.items():
            values[key], labels[key] = value, source_labels[key]

    def keep_preset(self, preset: str, preset_label: str, values: dict, labels: dict) -> None:
        """A preset names a shape of the papers: later sources may change its radices, mode
        and sizes, but not its dimension count or whether it is a twin or a plain torus."""
        base = PRESETS[preset]
        plain, dims = base["configuration"] == "torus", len(base["radices"])
        shape = f"{dims}-D {'plain torus' if plain else 'twin torus'}"
        if "radices" in values:
            radices = values["radices"]
            key = "radices"
            shown = (",".join(map(str, radices)) if isinstance(radices, (list, tuple))
                     else repr(radices))
            count = len(radices) if isinstance(radices, (list, tuple)) else dims
        else:
            key, shown, count = "n", str(values.get("n")), values.get("n")
        if count != dims:
            raise ValueError(f"{labels[key]} {shown}: preset {preset} ({preset_label}) is a "
                             f"{shape}: its dimension count must stay {dims} (leave out the "
                             "preset to build another shape)")
        configuration = values.get("configuration")
        if isinstance(configuration, str) and (configuration.strip().lower() == "torus") != plain:
            allowed = ("only 'torus'" if plain else "a twin configuration (A–J, C_Best or a "
                       "card-0 list), not 'torus'")
            raise ValueError(f"{labels['configuration']} {configuration}: preset {preset} "
                             f"({preset_label}) is a {shape}: its configuration must be "
                             f"{allowed} (leave out the preset to build another shape)")

    def layout(self, config, netlist) -> dict[str, drawing.Box]:
        """Nodes on a grid (a 3-D torus in oblique projection: its Z links run between the
        planes); a twin node's two cards side by side, each listing the torus ports it holds."""
        topology = config.topology
        cards = topology.card_count
        width, height = (0.55, 0.85) if cards > 1 else (drawing.BOX_WIDTH, drawing.BOX_HEIGHT)
        node_width = cards * width + (cards - 1) * 0.15
        held = {router.label: [] for router in netlist.routers}
        for link in netlist.links:
            if link.source_port_label != str(twin.INTERNAL):
                held[link.source].append(link.source_port_label)
        boxes = {}
        for router in netlist.routers:
            node, _, card = router.label.partition("/")
            x, y = drawing.grid_point(drawing.coordinates(node), topology.radices,
                                      node_width, height)
            offset = (int(card[1:]) - (cards - 1) / 2) * (width + 0.15)
            text = "\n".join(held[router.label]) if cards > 1 else node
            boxes[router.label] = drawing.Box(x + offset, y, width, height, text, node)
        return boxes

    def line(self, config, link, boxes: dict[str, drawing.Box]) -> drawing.Line:
        first, second = boxes[link.source].group, boxes[link.target].group
        if first == second:
            return drawing.Line("internal")
        return drawing.grid_line(drawing.coordinates(first), drawing.coordinates(second),
                                 config.topology.radices)

    def section(self, config) -> dict:
        topology = config.topology
        return {
            "name": self.name,
            "parameters": config.to_dict(),
            "derived": {"node_count": topology.node_count, "buffer_depth": config.depth},
            "terminal_order": f"PE i = pe + {topology.card_count} * (node index), node index = "
                              "digits in mixed radix with o0 (the X digit) most significant "
                              "(twinnet.model.twin.TwinTorusTopology.pe_index)",
            "route": "route.node.o<i> are the destination node's digits (o0 is X), route.pe "
                     "its PE",
            "malformed": "a destination digit >= its radix (or route.pe = 1 on a plain torus, "
                         "one PE per node): the packet is dropped at injection and counted on "
                         "drop_count",
            "section": {"card_count": topology.card_count,
                        "configuration": str(topology.configuration), "mode": topology.mode},
        }

    def _pes(self, config) -> tuple[twin.PEAddress, ...]:
        return _pe_addresses(config.topology)

    def terminal_count(self, config) -> int:
        return config.topology.pe_count

    def router_count(self, config) -> int:
        return config.topology.router_count

    def header_width(self, config) -> int:
        return config.destination_width + config.source_width

    def terminal_label(self, config, terminal: int) -> str:
        return str(self._pes(config)[terminal])

    def destination(self, config, terminal: int) -> dict[str, int]:
        pe = self._pes(config)[terminal]
        return {"route.pe": pe.pe, **{f"route.node.o{dim}": digit
                                      for dim, digit in enumerate(pe.node)}}

    def malformed(self, config, rng: random.Random) -> dict[str, int] | None:
        radices, widths = config.topology.radices, config.digit_widths
        spare = [dim for dim, (k, w) in enumerate(zip(radices, widths)) if (1 << w) > k]
        fields = {f"route.node.o{dim}": rng.randrange(k) for dim, k in enumerate(radices)}
        plain = config.topology.card_count == 1
        if spare and not (plain and rng.random() < 0.5):
            dim = rng.choice(spare)
            fields[f"route.node.o{dim}"] = rng.randrange(radices[dim], 1 << widths[dim])
            return {**fields, "route.pe": 0}
        return {**fields, "route.pe": 1} if plain else None

    def hops(self, config, source: int, destination: int) -> list[tuple[str, str, int]]:
        pes = self._pes(config)
        return [(str(hop.card), str(hop.out_port), hop.vc)
                for hop in path(config.topology, pes[source], pes[destination])
                if hop.out_port != twin.PE_PORT]


    def terminal_digits(self, config) -> list[tuple[str, int]]:
        topology = config.topology
        return [("route.pe", topology.card_count)] + [
            (f"route.node.o{dim}", topology.radices[dim])
            for dim in reversed(range(len(topology.radices)))]

    def deadlock(self, config) -> dict:
        report = twin_analysis.deadlock_check(config.topology)
        rule = (f"the channel-dependency graph (mode {report.mode}, 003 §6)"
                if report.mode != "bubble" else
                "the channel-dependency graph less its in-ring dependencies (mode bubble: "
                "the bubble guards each ring, 003 §6)")
        return verdict(report.cycle, rule=rule, channels=report.channel_count,
                       dependencies=report.dependency_count,
                       label=twin_analysis.format_channel)
