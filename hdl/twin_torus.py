"""The twin-torus family's netlist: two card kinds, one card per (node, card), PE per card.

Card 0 of every node is the same module (likewise card 1): the node's coordinates enter on the
router's ``node_static`` input, tied off per instance by :class:`twinnet.hdl.network.Network`.
Router labels are the model's card names (``0,1,2/c0``); port labels are the model's port names
(``X+``, ``I``), so the link trace speaks the reference model's language.
"""

from twinnet.model.twin import PE_PORT
from twinnet.model.twin_network import TwinNetworkConfig

from .network import Link, Netlist, RouterInstance, Terminal
from .twin_card import card_router
from .twin_route import card_ports


def netlist(network: TwinNetworkConfig, *, stall_counters: bool = False) -> Netlist:
    """The :class:`Netlist` of ``network``: kinds ``card0`` (and ``card1`` on a twin torus),
    with their stall counters if asked."""
    twin = network.topology
    kinds = {f"card{card}": card_router(network, card, stall_counters=stall_counters)
             for card in range(twin.card_count)}
    routers = [RouterInstance(str(card), f"card{card.index}",
                              {f"o{dim}": digit for dim, digit in enumerate(card.node)})
               for card in twin.cards()]
    links = []
    for card in twin.cards():
        ports = card_ports(twin, card.index)
        for local, port in enumerate(ports):
            if port == PE_PORT:
                continue
            target, target_port = twin.link_target(card, port)
            links.append(Link(
                len(links), str(card), local, str(target),
                card_ports(twin, target.index).index(target_port), str(port),
                str(target_port), kinds[f"card{card.index}"].config.ports[local].vc_count))
    terminals = [Terminal(str(pe.card), card_ports(twin, pe.pe).index(PE_PORT))
                 for pe in twin.pes()]
    return Netlist(kinds, routers, links, terminals)
