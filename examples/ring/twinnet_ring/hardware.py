"""The ring's hardware part (route compute, netlist) and its route compute's specification."""

import functools

from amaranth.hdl import Const, Module, Mux, Signal, signed
from amaranth.lib import data

from twinnet.hdl.config import RouterConfig, link_port, pe_port, router_config
from twinnet.hdl.formal.spec_common import ExpectedRoute, ring
from twinnet.hdl.network import Link, Netlist, RouterInstance, Terminal
from twinnet.hdl.ring_escape import drive_escape, opposite
from twinnet.hdl.route_compute import RouteCompute
from twinnet.hdl.router import Router

from . import MINUS, PE, PLUS, RingNetworkConfig

PORTS = (PLUS, MINUS, PE)


class RingRouteCompute(RouteCompute):
    """The shorter way round (+ on a tie), from the node's number on ``node_static``."""

    def __init__(self, config: RouterConfig, in_port: int, *, network: RingNetworkConfig):
        self.network = network
        layout = data.StructLayout({"dest": network.node_width})
        super().__init__(config, in_port, header_layout=layout,
                         static_layout=data.StructLayout({"here": network.node_width}))

    def elaborate(self, platform):
        m = Module()
        nodes, here, dest = self.network.nodes, self.node_static.here, self.header.dest
        ahead = Signal(signed(self.network.node_width + 2))
        m.d.comb += ahead.eq(Mux(dest >= here, dest - here, dest + nodes - here))
        arrived, plus = dest == here, 2 * ahead <= nodes
        m.d.comb += [self.out_port.eq(Mux(arrived, PORTS.index(PE),
                                          Mux(plus, PORTS.index(PLUS), PORTS.index(MINUS)))),
                     self.malformed.eq(dest >= nodes)]
        came_in = PORTS[self.port_index]
        straight, wrapped = Const(0, 1), Const(0, 1)
        if came_in != PE:  # travelling toward opposite(came_in)
            straight = self.out_port == PORTS.index(opposite(came_in))
            wrapped = here == (0 if came_in == MINUS else nodes - 1)
        drive_escape(m, self, self.network.escape, to_link=~arrived, straight=straight,
                     wrapped=wrapped)
        return m


def route_spec(m, rc, in_port: int) -> ExpectedRoute:
    """The port by the signed ring offset (+ on a tie); VC 0, or going on VC 1 past the
    dateline (the last node to node 0); the bubble flag on entering a ring."""
    nodes, here, dest, came = rc.network.nodes, rc.node_static.here, rc.header.dest, PORTS[in_port]
    way = Mux(ring(dest, here, nodes) > 0, PORTS.index(PLUS), PORTS.index(MINUS))
    port = Mux(dest == here, PORTS.index(PE), way)
    on = (dest != here) & (way == PORTS.index(opposite(came))) if came != PE else Const(0, 1)
    past = rc.in_vc[0] | (here == {PLUS: nodes - 1, MINUS: 0, PE: -1}[came])  # kept, or taken
    if rc.network.escape == "bubble":
        return ExpectedRoute(port, 1, (dest != here) & ~on, dest >= nodes, [here < nodes])
    return ExpectedRoute(port, Mux(on & past, 2, 1), 0, dest >= nodes, [here < nodes])


def netlist(network: RingNetworkConfig, *, stall_counters: bool = False) -> Netlist:
    bubble = network.escape == "bubble"
    ports = (link_port(network, network.vc_count, "xp", bubble=bubble),
             link_port(network, network.vc_count, "xm", bubble=bubble), pe_port(network, PE))
    config = router_config(network, ports, source_width=network.node_width,
                           stall_counters=stall_counters)
    router = Router(config, functools.partial(RingRouteCompute, network=network))
    routers = [RouterInstance(str(node), "router", {"here": node})
               for node in range(network.nodes)]
    links = []
    for node in range(network.nodes):
        for port, step in ((PLUS, 1), (MINUS, -1)):
            links.append(Link(len(links), str(node), PORTS.index(port),
                              str((node + step) % network.nodes), PORTS.index(opposite(port)),
                              port, opposite(port), network.vc_count))
    terminals = [Terminal(str(node), PORTS.index(PE)) for node in range(network.nodes)]
    return Netlist({"router": router}, routers, links, terminals)
