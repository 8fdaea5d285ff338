"""The fat-tree family (001): k-ary n-trees of twin switches under DESTRO."""

import random

from twinnet.model import fat_tree

from . import drawing
from .contract import Family, verdict

#: Fat trees of twin switches with 001's optimal split (16, 64 and 256 terminals). 001 gives
#: no router settings: four packets of buffer per VC, as in the 002 and 004 presets (with the
#: default two, the split router's links wait for credits: docs/results.md).
PRESETS = {
    f"ft-{k}x{n}": {"family": "fat-tree", "k": k, "n": n, "split": "optimal",
                    "buffer_depth": 16}
    for k, n in [(4, 2), (4, 3), (4, 4)]
}

class FatTreeFamily(Family):
    """k-ary n-trees of twin switches (or plain switches) under DESTRO:
    :mod:`twinnet.model.fat_tree`."""

    name = "fat-tree"
    configuration = fat_tree.FatTreeNetworkConfig
    presets = PRESETS
    limits = f"{fat_tree.MAX_FAT_TREE_TERMINALS} fat-tree terminals"
    hardware = "twinnet.hdl.fat_tree"
    route_spec = "twinnet.hdl.formal.fat_tree_spec:destro_spec"
    analyses = ("twinnet.cli.analyze_fat_tree",)
    modules = ("twinnet.model.fat_tree", "twinnet.model.twin_switch",
               "twinnet.hdl.fat_tree_route")

    def merge(self, values: dict, labels: dict, source: dict, source_labels: dict) -> None:
        """Later values win; a later ``plain`` or ``split`` decides the switches anew, so the
        earlier ``plain``, ``split`` and ``internal_ports`` give way (``--plain`` over a preset's
        split)."""
        if {"plain", "split"} & source.keys():
            for key in ("plain", "split", "internal_ports"):
                values.pop(key, None)
                labels.pop(key, None)
        super().merge(values, labels, source, source_labels)

    def layout(self, config, netlist) -> dict[str, drawing.Box]:
        """By stage, the leaves at the bottom; each twin switch's halves side by side (labels
        ``<stage,digits>/half``), each lettered by its half."""
        halves: dict[str, list[str]] = {}
        for router in netlist.routers:
            switch, _, half = router.label.partition("/")
            halves.setdefault(switch, []).append(half)
        stages: dict[int, list[str]] = {}
        for switch in halves:
            stages.setdefault(int(switch.strip("<>").split(",")[0]), []).append(switch)
        widest = max(len(row) for row in stages.values())
        width = 0.45
        boxes = {}
        for stage, row in stages.items():
            spread = widest / len(row) * (2 * width + 2 * drawing.GAP)
            for index, switch in enumerate(row):
                for number, half in enumerate(halves[switch]):
                    offset = (number - (len(halves[switch]) - 1) / 2) * (width + 0.1)
                    label = f"{switch}/{half}" if half else switch
                    boxes[label] = drawing.Box((index + 0.5) * spread + offset, 2.0 * stage,
                                               width, drawing.BOX_HEIGHT, half[:1], switch)
        return boxes

    def line(self, config, link, boxes: dict[str, drawing.Box]) -> drawing.Line:
        same = boxes[link.source].group == boxes[link.target].group
        return drawing.Line("internal" if same else "tree")

    def section(self, config) -> dict:
        tree = config.tree
        splits = ([{"stage": stage, "alpha": sorted(split.alpha), "beta": sorted(split.beta)}
                   for stage, split in enumerate(config.splits)] if config.is_twin else None)
        return {
            "name": self.name,
            "parameters": config.to_dict(),
            "derived": {"switch_count": tree.switch_count, "buffer_depth": config.depth},
            "terminal_order": "terminal h = sum of h_i * k**i (h0 least significant); it hangs "
                              "on down port h0 of stage-0 switch <0, h_{n-1} ... h1>",
            "route": "route.h<i> are the destination terminal's base-k digits, h0 least "
                     "significant",
            "malformed": "a destination >= k**n (route.h<n-1> >= k) or any digit >= k: the "
                         "packet is dropped at injection and counted on drop_count",
            "section": {"k": tree.k, "n": tree.n, "twin": config.is_twin,
                        "internal_ports": config.internal_port_count, "splits": splits},
        }

    def terminal_count(self, config) -> int:
        return config.tree.terminal_count

    def router_count(self, config) -> int:
        from twinnet.hdl.fat_tree import halves

        return sum(len(halves(config, switch.stage)) for switch in config.tree.switches())

    def destination(self, config, terminal: int) -> dict[str, int]:
        return {f"route.h{i}": digit
                for i, digit in enumerate(config.tree.terminal_digits(terminal))}

    def malformed(self, config, rng: random.Random) -> dict[str, int] | None:
        tree = config.tree
        fields = {f"route.h{i}": rng.randrange(tree.k) for i in range(tree.n)}
        fields[f"route.h{tree.n - 1}"] = tree.k + rng.randrange(
            (1 << tree.k.bit_length()) - tree.k)
        return fields

    def hops(self, config, source: int, destination: int) -> list[tuple[str, str, int]]:
        return fat_tree.router_hops(config, source, destination)

    def in_order(self, config) -> bool:
        # With several VCs a pair's packets may take different VCs on a link and pass.
        return config.vcs == 1

    def path_error(self, config, source: int, destination: int,
                   hops: list[tuple[str, str, int]]) -> str | None:
        """The DESTRO path's links exactly, on any of the network's VCs."""
        expected = self.hops(config, source, destination)
        if config.vcs == 1:
            return None if hops == expected else f"model says {expected}"
        same = len(hops) == len(expected) and all(
            hop[:2] == want[:2] and 0 <= hop[2] < config.vcs for hop, want in zip(hops, expected))
        return None if same else (f"model says {[want[:2] for want in expected]} on any of "
                                  f"VCs 0 to {config.vcs - 1}")

    def internal_crossings(self, manifest: dict, link_heads: dict) -> list[dict] | None:
        """Per twin switch (``<stage,digits>``), the packets that crossed its internal link in
        either direction: the head flits on its internal links (ports ``i<j>``)."""
        if not manifest[self.name]["twin"]:
            return None
        # Every twin switch, including those whose internal link is left out (0 crossings).
        crossings = {router["label"].split("/")[0]: 0 for router in manifest["routers"]}
        for link in manifest["links"]:
            if link["from"]["port"].startswith("i"):
                switch = link["from"]["router"].split("/")[0]
                crossings[switch] += link_heads.get(str(link["index"]), 0)
        return [{"router": switch, "stage": int(switch[1:switch.index(",")]),
                 "crossings": count} for switch, count in crossings.items()]


    def terminal_digits(self, config) -> list[tuple[str, int]]:
        return [(f"route.h{i}", config.tree.k) for i in range(config.tree.n)]

    def deadlock(self, config) -> dict:
        graph = fat_tree.dependency_graph(config.tree, twin=config.twin)
        # A packet may take any VC of a link, so (link, VC) channels depend on each other as
        # their links do: the graph of links decides.
        vcs = "one VC" if config.vcs == 1 else f"{config.vcs} VCs taken freely"
        return verdict(graph.find_cycle(), rule="the channel-dependency graph of the DESTRO "
                       f"paths, {vcs}, each twin switch's internal ports as channels",
                       channels=graph.channel_count, dependencies=graph.edge_count)
