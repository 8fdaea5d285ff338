"""The twin-torus network top: card modules instantiated by name and cabled together.

Each distinct card module (card 0 and card 1) is converted to Verilog once; this top holds an
``Instance`` of the right one per card, ties its ``node_static`` input to the node's coordinates,
joins every link (flits forward, credits backward) and brings the PE ports out as vector
buses. PE ``i`` (in :meth:`TwinTorusConfig.pes` order: node by node, PE0 before PE1) owns bit
``i`` of each 1-bit bus and bits ``[i*W, (i+1)*W)`` of each data bus:

    pe_in_valid, pe_in_first, pe_in_last: In(P)     pe_in_ready: Out(P)     pe_in_data: In(P*W)
    pe_out_valid, pe_out_first, pe_out_last: Out(P) pe_out_ready: In(P)     pe_out_data: Out(P*W)
    drop_count: Out(32) — malformed packets dropped at injection, summed over every card:
        exact until the total reaches 2**32 - 1, where it saturates (each card counts in 32
        bits too, so no card's counter saturates before the total does).

With ``trace=True`` the top also shows every link to a testbench: ``trace_valid`` (one bit per
link: a flit is on it this cycle) and ``trace_flit`` (link ``j``'s flit payload at bits
``[j*S, (j+1)*S)``, S = :attr:`TwinNetwork.trace_stride`: data, first, last, then the VC).
"""

from dataclasses import dataclass

from amaranth.hdl import Cat, ClockSignal, Const, Instance, Module, Mux, ResetSignal, Shape, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from twinnet.model.network import TwinNetworkConfig
from twinnet.model.twin import PE_PORT, Card, Port

from .twin_card import NETWORK_DROP_COUNT_WIDTH, card_router_config
from .twin_route import card_ports


@dataclass(frozen=True)
class Link:
    """One direction of a cable: from ``card``'s output ``port`` to ``target``'s input
    ``target_port``; ``vc_count`` VCs."""

    index: int
    card: Card
    port: Port
    target: Card
    target_port: Port
    vc_count: int

    def describe(self) -> dict:
        return {"index": self.index, "from": {"card": str(self.card), "port": str(self.port)},
                "to": {"card": str(self.target), "port": str(self.target_port)},
                "vc_count": self.vc_count}


def network_links(network: TwinNetworkConfig) -> list[Link]:
    """Every router-to-router link, card by card in :meth:`TwinTorusConfig.cards` order."""
    twin, links = network.topology, []
    for card in twin.cards():
        config = card_router_config(network, card.index)
        for local, port in enumerate(card_ports(twin, card.index)):
            if port == PE_PORT:
                continue
            target, target_port = twin.link_target(card, port)
            links.append(Link(len(links), card, port, target, target_port,
                              config.ports[local].vc_count))
    return links


def module_ports(component) -> list[tuple[str, str, int]]:
    """``(Verilog name, "i"/"o", width)`` of each port of ``component`` once converted."""
    ports = []
    for path, member, _ in component.signature.flatten(component):
        name = "__".join(str(part) for part in path)
        ports.append((name, "i" if member.flow == In else "o", Shape.cast(member.shape).width))
    return ports


class TwinNetwork(wiring.Component):
    """The network top (see the module docstring for its ports).

    Parameters:
        network: the :class:`TwinNetworkConfig`.
        card_modules: for card 0 and card 1, ``(module name, router)``: the name under which
            that router was converted, and the router itself (read for its port list only).
        trace: add the ``trace_valid``/``trace_flit`` outputs.
    """

    def __init__(self, network: TwinNetworkConfig, card_modules: dict, *, trace: bool = False):
        self.network, self.card_modules, self.trace = network, card_modules, trace
        self.links = network_links(network)
        self.vc_bits = max(1, max(link.vc_count for link in self.links) - 1).bit_length()
        self.trace_stride = network.flit_width + 2 + self.vc_bits
        pes, width = network.topology.pe_count, network.flit_width
        members = {
            "pe_in_valid": In(pes), "pe_in_first": In(pes), "pe_in_last": In(pes),
            "pe_in_data": In(pes * width), "pe_in_ready": Out(pes),
            "pe_out_valid": Out(pes), "pe_out_first": Out(pes), "pe_out_last": Out(pes),
            "pe_out_data": Out(pes * width), "pe_out_ready": In(pes),
            "drop_count": Out(NETWORK_DROP_COUNT_WIDTH),
        }
        if trace:
            members["trace_valid"] = Out(len(self.links))
            members["trace_flit"] = Out(len(self.links) * self.trace_stride)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        twin, width = self.network.topology, self.network.flit_width
        wires = {}  # (card, Verilog port name) -> Signal
        for card in twin.cards():
            name, router = self.card_modules[card.index]
            prefix = f"n{'_'.join(map(str, card.node))}_c{card.index}"
            connections = {"i_clk": ClockSignal(), "i_rst": ResetSignal()}
            for port, direction, size in module_ports(router):
                signal = Signal(size, name=f"{prefix}_{port}")
                wires[card, port] = signal
                connections[f"{direction}_{port}"] = signal
            m.submodules[prefix] = Instance(name, **connections)
            m.d.comb += wires[card, "node_static"].eq(self._coordinates(card.node))

        for link in self.links:
            out = f"out_{self._local(link.card, link.port)}"
            into = f"in_{self._local(link.target, link.target_port)}"
            m.d.comb += [
                wires[link.target, f"{into}__flit__valid"].eq(wires[link.card,
                                                                      f"{out}__flit__valid"]),
                wires[link.target, f"{into}__flit__payload"].eq(
                    wires[link.card, f"{out}__flit__payload"]),
                wires[link.card, f"{out}__credit__valid"].eq(
                    wires[link.target, f"{into}__credit__valid"]),
            ]
            if (link.card, f"{out}__credit__payload") in wires:
                m.d.comb += wires[link.card, f"{out}__credit__payload"].eq(
                    wires[link.target, f"{into}__credit__payload"])
            if self.trace:
                payload = wires[link.card, f"{out}__flit__payload"]
                m.d.comb += [
                    self.trace_valid[link.index].eq(wires[link.card, f"{out}__flit__valid"]),
                    self.trace_flit.word_select(link.index, self.trace_stride).eq(payload),
                ]

        for index, pe in enumerate(twin.pes()):
            local = card_ports(twin, pe.pe).index(PE_PORT)
            into, out = f"in_{local}", f"out_{local}"
            card = pe.card
            data = slice(index * width, (index + 1) * width)
            m.d.comb += [
                wires[card, f"{into}__valid"].eq(self.pe_in_valid[index]),
                wires[card, f"{into}__payload"].eq(Cat(self.pe_in_data[data],
                                                       self.pe_in_first[index],
                                                       self.pe_in_last[index])),
                self.pe_in_ready[index].eq(wires[card, f"{into}__ready"]),
                self.pe_out_valid[index].eq(wires[card, f"{out}__valid"]),
                self.pe_out_data[data].eq(wires[card, f"{out}__payload"][:width]),
                self.pe_out_first[index].eq(wires[card, f"{out}__payload"][width]),
                self.pe_out_last[index].eq(wires[card, f"{out}__payload"][width + 1]),
                wires[card, f"{out}__ready"].eq(self.pe_out_ready[index]),
            ]

        drops = [wires[card, "drop_count"] for card in twin.cards()]
        total, limit = _sum_tree(drops), (1 << NETWORK_DROP_COUNT_WIDTH) - 1
        m.d.comb += self.drop_count.eq(Mux(total > limit, limit, total))
        return m

    def _local(self, card: Card, port: Port) -> int:
        return card_ports(self.network.topology, card.index).index(port)

    def _coordinates(self, node) -> Const:
        widths = self.network.digit_widths
        return Cat(*(Const(digit, width) for digit, width in zip(node, widths)))


def _sum_tree(values):
    """Sum with a balanced tree of adders, so that depth grows with log2 of the count."""
    values = list(values)
    while len(values) > 1:
        values = [a + b for a, b in zip(values[::2], values[1::2])] + \
                 ([values[-1]] if len(values) % 2 else [])
    return values[0]


