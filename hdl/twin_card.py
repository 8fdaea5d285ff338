"""A twin-torus card (or a plain-torus router): the generic router with twin DOR in its
route-compute stage.

Card ``c`` of every node has the same ports, in card-local order (see
:mod:`twinnet.hdl.twin_route`): its n external ports, the internal link, the PE port. One card
module therefore serves every node; the node's coordinates enter on the router's ``node_static``
input, tied off by the network top.
"""

import functools

from twinnet.model.twin import INTERNAL, PE_PORT
from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.model.twin_routing import vc_count

from .config import RouterConfig, link_port, pe_port, router_config, verilog_label
from .router import Router
from .twin_route import TwinRouteCompute, card_ports


def card_router_config(network: TwinNetworkConfig, card: int, *,
                       stall_counters: bool = False) -> RouterConfig:
    """The router parameters of card ``card``: one :class:`PortConfig` per card-local port.

    Bubble mode marks every ring link (external links, and the internal link when some
    dimension is split, since type-2 traffic enters rings there) as a bubble port.
    """
    twin = network.topology
    bubble = twin.mode == "bubble"
    ports = []
    for port in card_ports(twin, card):
        if port == PE_PORT:
            ports.append(pe_port(network, "PE"))
        elif port == INTERNAL:
            ports.append(link_port(network, vc_count(twin, port), "I", role="internal",
                                   bubble=bubble and bool(twin.configuration.split_dims)))
        else:
            ports.append(link_port(network, vc_count(twin, port), verilog_label(port),
                                   bubble=bubble))
    return router_config(network, ports, source_width=network.source_width,
                         stall_counters=stall_counters)


def card_router(network: TwinNetworkConfig, card: int, *, stall_counters: bool = False) -> Router:
    """The router of card ``card``, with one :class:`TwinRouteCompute` per input port."""
    route = functools.partial(TwinRouteCompute, twin=network.topology, card=card)
    return Router(card_router_config(network, card, stall_counters=stall_counters), route)
