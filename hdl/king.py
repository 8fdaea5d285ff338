"""The king family's netlist: one router per node of an M, DM, KM, T, DT or KT network (002),
each with its links in vector order and its PE ports.

Router labels are ``x,y``; port labels are the model's (``x+`` … ``t-``) and ``pe0`` … for the
PE ports. A link from
output ``p`` of one router enters the neighbour's input ``opposite(p)``, the port facing back.
On a torus every router has every port of the kind, so one module serves the network; on a
mesh the routers differ by the ports the border leaves out, one module per distinct set (up to
nine). The route compute (:class:`twinnet.hdl.king_route.KingRouteCompute`) reads the router's
coordinates on ``node_static``, tied off per instance.
"""

import functools

from twinnet.model.king_network import KingNetworkConfig, node_label

from .config import link_port, pe_port, router_config, verilog_label
from .king_route import KingRouteCompute, is_pe, pe_label
from .network import Link, Netlist, RouterInstance, Terminal
from .ring_escape import opposite
from .router import Router


def router_ports(network: KingNetworkConfig, node: tuple[int, int]) -> tuple[str, ...]:
    """The ports of the router at ``node`` in local order: its links in vector order, then
    its PE ports ``pe0`` …"""
    return (*(port for port, _ in network.topology.neighbors(node)),
            *map(pe_label, range(network.pe_ports)))


def router(network: KingNetworkConfig, ports: tuple[str, ...], *,
           stall_counters: bool = False) -> Router:
    """A router with ``ports`` (labels in local order); links are bubble ports under the
    bubble escape on a torus and carry :attr:`KingNetworkConfig.vc_count` VCs."""
    bubble = network.bubble_ports
    config = router_config(network, [
        pe_port(network, port) if is_pe(port) else
        link_port(network, network.vc_count, verilog_label(port), bubble=bubble)
        for port in ports], source_width=network.source_width, stall_counters=stall_counters)
    return Router(config, functools.partial(KingRouteCompute, network=network, ports=ports))


def kind_name(network: KingNetworkConfig, ports: tuple[str, ...]) -> str:
    """``router`` for a router with every port of the kind, else ``no_`` and the ports it
    lacks (``no_xm_ym_zm_tp_tm`` at a king mesh's corner)."""
    missing = [port for port in network.topology.ports if port not in ports]
    return "router" if not missing else "no_" + "_".join(map(verilog_label, missing))


def netlist(network: KingNetworkConfig, *, stall_counters: bool = False) -> Netlist:
    """The :class:`Netlist` of ``network``, with the routers' stall counters if asked."""
    topology = network.topology
    kinds, routers, local = {}, [], {}
    for node in topology.nodes():
        ports = router_ports(network, node)
        name = kind_name(network, ports)
        if name not in kinds:
            kinds[name] = router(network, ports, stall_counters=stall_counters)
        routers.append(RouterInstance(node_label(node), name, {"x": node[0], "y": node[1]}))
        local[node] = {port: index for index, port in enumerate(ports)}
    links = []
    for node in topology.nodes():
        for port, neighbour in topology.neighbors(node):
            links.append(Link(len(links), node_label(node), local[node][port],
                              node_label(neighbour), local[neighbour][opposite(port)],
                              port, opposite(port), network.vc_count))
    terminals = [Terminal(node_label(network.node_of(t)),
                          local[network.node_of(t)][pe_label(network.pe_of(t))])
                 for t in range(network.terminal_count)]
    return Netlist(kinds, routers, links, terminals)
