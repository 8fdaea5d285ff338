"""The twisted-torus family's netlist: one router per node, its links ``X+ X- Y+ Y- …`` and
its PE ports (``PE``, or ``PE0`` … with several), joined along
:meth:`twinnet.model.twist.TwistedTorusTopology.step` (the peripheral links of a twisted
dimension land ``t_JK`` over in K).

Every router is the same module (a node-symmetric torus: the route compute,
:class:`twinnet.hdl.twisted_route.TwistedRouteCompute`, reads the router's coordinates on
``node_static``). Router labels are ``x,y[,z]``; port labels ``X+`` … and the PE ports.
"""

import functools

from twinnet.model.twisted_network import TwistedNetworkConfig, node_label, port_move

from .config import link_port, pe_port, router_config, verilog_label
from .network import Link, Netlist, RouterInstance, Terminal
from .ring_escape import opposite
from .router import Router
from .twisted_route import TwistedRouteCompute, is_pe, pe_labels


def router(network: TwistedNetworkConfig, *, stall_counters: bool = False) -> Router:
    ports = (*network.ports, *pe_labels(network))
    bubble = network.escape == "bubble"
    config = router_config(network, [
        pe_port(network, port) if is_pe(port) else
        link_port(network, network.vc_count, verilog_label(port), bubble=bubble)
        for port in ports], source_width=network.source_width, stall_counters=stall_counters)
    return Router(config, functools.partial(TwistedRouteCompute, network=network, ports=ports))


def netlist(network: TwistedNetworkConfig, *, stall_counters: bool = False) -> Netlist:
    topology = network.topology
    pes = pe_labels(network)
    local = {port: index for index, port in enumerate((*network.ports, *pes))}
    routers = [RouterInstance(node_label(node), "router",
                              {f"o{dim}": x for dim, x in enumerate(node)})
               for node in topology.nodes()]
    links = []
    for node in topology.nodes():
        for port in network.ports:
            dim, sign = port_move(port)
            target = topology.step(node, dim, sign)
            links.append(Link(len(links), node_label(node), local[port],
                              node_label(target), local[opposite(port)], port,
                              opposite(port), network.vc_count))
    terminals = [Terminal(node_label(network.node_of(t)), local[pes[network.pe_of(t)]])
                 for t in range(network.terminal_count)]
    return Netlist({"router": router(network, stall_counters=stall_counters)}, routers, links,
                   terminals)
