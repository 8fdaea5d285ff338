"""The twin-torus family (003): twin tori and plain tori, :mod:`twinnet.model.twin`."""

import functools
import random

from twinnet.model import network, twin, twin_analysis
from twinnet.model.twin_routing import path

from .contract import Family, verdict


@functools.lru_cache(maxsize=8)
def _pe_addresses(topology: twin.TwinTorusConfig) -> tuple[twin.PEAddress, ...]:
    """Every PE of ``topology`` in PE order, listed once per topology: the bench asks for a
    destination and a path per packet."""
    return tuple(topology.pes())


class TwinTorusFamily(Family):
    """Twin tori and plain tori (configuration ``torus``): :mod:`twinnet.model.twin`."""

    name = "twin-torus"
    configuration = network.TwinNetworkConfig
    hardware = "twinnet.hdl.twin_torus"
    #: ``torus``: the plain torus, one router per node.
    aliases = {"torus": {"configuration": "torus"}}

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
