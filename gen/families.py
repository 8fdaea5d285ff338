"""Topology families as plug-ins: name → :class:`Family`.

A family supplies what differs between networks; everything else (the network top, the
generator, the manifest, the cocotb bench and scoreboard, the simulation driver) is shared:

- its configuration: :meth:`Family.network` rebuilds it from the manifest's ``parameters``;
- its netlist (:meth:`Family.netlist`): router kinds, instances with their per-node
  constants, channels and terminals (:mod:`twinnet.hdl.network`); with
  ``stall_counters=True``, routers with their stall counters (:mod:`twinnet.hdl.router.stalls`);
- its manifest section (:meth:`Family.section`);
- its destination codec: :meth:`Family.destination` gives the head flit's route fields for a
  terminal, :meth:`Family.malformed` an example of a header the routers must drop;
- its model relation: :meth:`Family.hops`, the (router, output port, VC) of every link a packet
  crosses, from the reference model (deterministic routing: one path per pair), and
  :meth:`Family.path_error`, which holds an observed path to it (adaptive routing allows
  several paths per pair; :meth:`Family.deterministic` says which);
- its deadlock verdict (:meth:`Family.deadlock`): the model's channel-dependency check of the
  instance, written into the manifest at generation;
- broadcast, for a family whose routers replicate packets: :meth:`Family.broadcast_route`
  gives a broadcast's route fields and :meth:`Family.broadcast_error` holds its copies (the
  links they crossed and the terminals that received one) to the model.
"""

import functools
import importlib
import random

from twinnet.model import fat_tree, king_network, network, twin, twin_analysis, twisted_network
from twinnet.model.twin_routing import path


class Family:
    """The plug-in interface; see the module docstring. Subclasses set ``name`` and either
    override :meth:`network` and :meth:`netlist` or name what they call: ``from_dict`` (the
    model's function building the configuration from plain values) and ``netlist_module``
    (the gateware module whose ``netlist(config)`` builds the netlist, imported only when
    generating, so that the model side needs no Amaranth)."""

    name = ""
    from_dict = None
    netlist_module = ""

    def network(self, parameters: dict):
        if self.from_dict is None:
            raise NotImplementedError
        return type(self).from_dict(parameters)

    def netlist(self, config, *, stall_counters: bool = False):
        if not self.netlist_module:
            raise NotImplementedError
        return importlib.import_module(self.netlist_module).netlist(
            config, stall_counters=stall_counters)

    def section(self, config) -> dict:
        """The manifest's family section (see :func:`twinnet.gen.generate.generate`)."""
        raise NotImplementedError

    def describe(self, config, **keys) -> dict:
        """A manifest section: the family's ``name`` and the configuration's ``parameters``,
        then ``keys``."""
        return {"name": self.name, "parameters": config.to_dict(), **keys}

    def terminal_count(self, config) -> int:
        raise NotImplementedError

    def router_count(self, config) -> int:
        """Routers in the netlist, counted without building them where the family knows how
        (for refusing a network too large before anything is built)."""
        return len(self.netlist(config).routers)

    def header_width(self, config) -> int:
        """Bits of a head flit that are not payload: the route fields and the source."""
        raise NotImplementedError

    def terminal_label(self, config, terminal: int) -> str:
        return f"T{terminal}"

    def destination(self, config, terminal: int) -> dict[str, int]:
        raise NotImplementedError

    def malformed(self, config, rng: random.Random) -> dict[str, int] | None:
        """Route fields of a header the routers must drop, or None if every header is valid."""
        raise NotImplementedError

    def hops(self, config, source: int, destination: int) -> list[tuple[str, str, int]]:
        raise NotImplementedError

    def deterministic(self, config) -> bool:
        """One path per pair: :meth:`hops` is the path and each pair's packets stay in order."""
        return True

    def path_error(self, config, source: int, destination: int,
                   hops: list[tuple[str, str, int]]) -> str | None:
        """Why the observed ``hops`` are not a path the model allows (None when they are):
        under deterministic routing they must be exactly :meth:`hops`."""
        expected = self.hops(config, source, destination)
        return None if hops == expected else f"model says {expected}"

    def broadcast_route(self, config, pe: int) -> dict[str, int] | None:
        """Route fields of a broadcast whose copies leave at PE ``pe`` of each router, or None
        when ``config``'s routers do not replicate broadcasts."""
        return None

    def broadcast_error(self, config, source: int, pe: int, hops: list[tuple[str, str, int]],
                        receivers: list[int]) -> str | None:
        """Why a broadcast's copies (every link crossing as ``(router, output port, VC)`` and
        the terminal of every copy delivered) are not what the model says, or None."""
        raise NotImplementedError

    def internal_crossings(self, manifest: dict, link_heads: dict) -> list[dict] | None:
        """Packets that crossed each router pair's internal link, from the head flits seen on
        each link (``link_heads``: link index → count), or None for a family without one."""
        return None

    def terminal_digits(self, config) -> list[tuple[str, int]] | None:
        """The head-flit route fields that number the terminals, least significant first, as
        ``(field, radix)``: terminal ``t = d0 + r0 * (d1 + r1 * …)`` and
        :meth:`destination` gives those digits. The traffic harness
        (:mod:`twinnet.hdl.traffic`) draws destinations with them; None: no harness."""
        return None

    def deadlock(self, config) -> dict | None:
        """The manifest's ``deadlock`` verdict (see :func:`verdict`) from the model's
        channel-dependency check of ``config``, or None for a family without a check."""
        return None


def verdict(cycle, *, rule: str, channels: int, dependencies: int, label=str) -> dict:
    """A deadlock verdict for the manifest: ``deadlock_free`` (the checked graph is acyclic:
    Dally and Seitz's condition), ``rule`` (which graph was checked), the graph's size and
    ``cycle``, one cycle of channels (``label`` names each) or None."""
    return {"deadlock_free": cycle is None, "rule": rule, "channels": channels,
            "dependencies": dependencies,
            "cycle": None if cycle is None else [label(channel) for channel in cycle]}


def escape_verdict(graph, escape: str, rings: str) -> dict:
    """The verdict of a ring family's channel-dependency ``graph`` under ``escape``
    (``bubble``: of the ``rings`` entered; ``dateline``: two VCs; ``none``: one VC)."""
    rule = {"bubble": f"the dependencies between the {rings} entered (escape bubble: the "
                      f"bubble guards each of the {rings})",
            "dateline": "the channel-dependency graph, two VCs per link (escape dateline)",
            "none": "the channel-dependency graph, one VC per link"}[escape]
    return verdict(graph.find_cycle(), rule=rule, channels=graph.channel_count,
                   dependencies=graph.edge_count, label=str)


@functools.lru_cache(maxsize=8)
def _pe_addresses(topology: twin.TwinTorusConfig) -> tuple[twin.PEAddress, ...]:
    """Every PE of ``topology`` in PE order, listed once per topology: the bench asks for a
    destination and a path per packet."""
    return tuple(topology.pes())


class TwinTorusFamily(Family):
    """Twin tori and plain tori (configuration ``torus``): :mod:`twinnet.model.twin`."""

    name = "twin-torus"

    def network(self, parameters: dict):
        return network.twin_network_from_dict(parameters)

    def netlist(self, config, *, stall_counters: bool = False):
        from twinnet.hdl.twin_torus import netlist

        return netlist(config, stall_counters=stall_counters)

    def section(self, config) -> dict:
        topology = config.topology
        return {
            "name": self.name,
            "parameters": config.to_dict(),
            "derived": {"node_count": topology.node_count, "buffer_depth": config.depth},
            "terminal_order": f"PE i = pe + {topology.card_count} * (node index), node index = "
                              "digits in mixed radix with o0 (the X digit) most significant "
                              "(twinnet.model.twin.TwinTorusConfig.pe_index)",
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


class FatTreeFamily(Family):
    """k-ary n-trees of twin switches (or plain switches) under DESTRO:
    :mod:`twinnet.model.fat_tree`."""

    name = "fat-tree"

    def network(self, parameters: dict):
        return fat_tree.fat_tree_network_from_dict(parameters)

    def netlist(self, config, *, stall_counters: bool = False):
        from twinnet.hdl.fat_tree import netlist

        return netlist(config, stall_counters=stall_counters)

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

    def header_width(self, config) -> int:
        return config.header_width

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
        return verdict(graph.find_cycle(), rule="the channel-dependency graph of the DESTRO "
                       "paths, one VC, each twin switch's internal ports as channels",
                       channels=graph.channel_count, dependencies=graph.edge_count)


class KingFamily(Family):
    """The square networks of 002 (M, DM, KM, T, DT, KT) under deterministic or adaptive
    routing: :mod:`twinnet.model.king_network`."""

    name = "king"
    from_dict = staticmethod(king_network.king_network_from_dict)
    netlist_module = "twinnet.hdl.king"

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

    def header_width(self, config) -> int:
        return config.header_width

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
        spare = [name for name, (count, width) in fields.items() if (1 << width) > count]
        if not spare:
            return None
        values = {name: rng.randrange(count) for name, (count, _) in fields.items()}
        name = rng.choice(spare)
        count, width = fields[name]
        values[name] = rng.randrange(count, 1 << width)
        return values

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


class TwistedFamily(Family):
    """Twisted tori (004) under dimension-order routing over their minimal record:
    :mod:`twinnet.model.twisted_network`."""

    name = "twisted"
    from_dict = staticmethod(twisted_network.twisted_network_from_dict)
    netlist_module = "twinnet.hdl.twisted"

    def section(self, config) -> dict:
        topology = config.topology
        return self.describe(
            config,
            derived={"node_count": topology.node_count, "buffer_depth": config.depth,
                     "vc_count": config.vc_count, "label": topology.label()},
            terminal_order="terminal t = o0 + d0 * (o1 + d1 * o2) hangs on router o0,o1[,o2] "
                           "(o0 is X)",
            route="route.o<i> are the destination's coordinates (o0 is X)",
            malformed="a destination coordinate >= its radix (when the field can hold one): "
                      "the packet is dropped at injection and counted on drop_count",
            section={"radices": list(topology.radices), "twists": config.to_dict()["twists"],
                     "escape": config.escape})

    def terminal_count(self, config) -> int:
        return config.topology.node_count

    def router_count(self, config) -> int:
        return config.topology.node_count

    def header_width(self, config) -> int:
        return config.header_width

    def terminal_label(self, config, terminal: int) -> str:
        return twisted_network.node_label(config.node_of(terminal))

    def destination(self, config, terminal: int) -> dict[str, int]:
        return {f"route.o{dim}": x for dim, x in enumerate(config.node_of(terminal))}

    def malformed(self, config, rng: random.Random) -> dict[str, int] | None:
        radices, widths = config.topology.radices, config.digit_widths
        spare = [dim for dim, (d, w) in enumerate(zip(radices, widths)) if (1 << w) > d]
        if not spare:
            return None
        fields = {f"route.o{dim}": rng.randrange(d) for dim, d in enumerate(radices)}
        dim = rng.choice(spare)
        fields[f"route.o{dim}"] = rng.randrange(radices[dim], 1 << widths[dim])
        return fields

    def hops(self, config, source: int, destination: int) -> list[tuple[str, str, int]]:
        return twisted_network.router_hops(config, source, destination)

    def terminal_digits(self, config) -> list[tuple[str, int]]:
        return [(f"route.o{dim}", d) for dim, d in enumerate(config.topology.radices)]

    def deadlock(self, config) -> dict:
        return escape_verdict(twisted_network.dependency_graph(config), config.escape,
                              "cycles")


#: The families, by the name the manifest's ``family`` key holds.
FAMILIES = {family.name: family for family in (TwinTorusFamily(), FatTreeFamily(),
                                               KingFamily(), TwistedFamily())}


def family_of(manifest: dict) -> Family:
    """The family of a generated network, from its manifest: a registered one, or else the
    plug-in class the manifest names (``"plugin": "module:Class"``), so that a family defined
    outside twinnet (a test's toy family, a user's own) drives the same bench."""
    if manifest["family"] in FAMILIES:
        return FAMILIES[manifest["family"]]
    module, _, name = manifest["plugin"].partition(":")
    return getattr(importlib.import_module(module), name)()


def family_for(config) -> Family:
    """The family of a network configuration object."""
    if isinstance(config, fat_tree.FatTreeNetworkConfig):
        return FAMILIES["fat-tree"]
    if isinstance(config, king_network.KingNetworkConfig):
        return FAMILIES["king"]
    if isinstance(config, twisted_network.TwistedNetworkConfig):
        return FAMILIES["twisted"]
    return FAMILIES["twin-torus"]
