"""The fat-tree family's netlist: a k-ary n-tree of twin switches (or plain switches).

Each twin switch is two routers, its halves α and β: a half holds its share of the switch's
2k ports (which ones: the stage's :class:`twinnet.model.twin_switch.TwinSwitch`) and the r
internal ports that join it to the other half. A plain switch is one router with all its ports.
At stage 0 the down ports are the terminals' PE ports; at the last stage the up ports lead
nowhere and are left out. DESTRO runs in every router as arithmetic hardware
(:class:`twinnet.hdl.fat_tree_route.FatTreeRouteCompute`): the switch's stage and digits enter
on ``node_static``, so one module serves every switch of a stage class and half.

Router labels are the model's (``<1,03>/alpha``, ``<0,12>``); port labels are ``d<j>`` (down port
j), ``u<j>`` (up port k + j) and ``i<j>`` (internal port j), as in
:func:`twinnet.model.fat_tree.router_hops`.
"""

import functools

from twinnet.model.fat_tree import (
    FatTreeNetworkConfig,
    internal_label,
    port_label,
    router_label,
    switch_ports,
)
from twinnet.model.twin_switch import HALVES
from twinnet.model.widths import index_width

from .config import link_port, pe_port, router_config
from .fat_tree_route import FatTreeRouteCompute
from .network import Link, Netlist, RouterInstance, Terminal
from .router import Router


def half_ports(network: FatTreeNetworkConfig, stage: int, half: str | None) -> tuple[int, ...]:
    """The connected switch ports a router holds: all of them for a plain switch (``half``
    None), else those of ``half`` in the stage's split."""
    ports = switch_ports(network.tree, stage)
    if half is None:
        return ports
    split = network.splits[stage]
    return tuple(port for port in ports if split.half_of(port) == half)


def halves(network: FatTreeNetworkConfig, stage: int) -> tuple[str | None, ...]:
    """The routers of a stage-``stage`` switch: ``(None,)`` for a plain switch, else the halves
    that hold a connected port (at the last stage, a half holding only up ports is left out,
    and with it the switch's internal link)."""
    if not network.is_twin:
        return (None,)
    return tuple(half for half in HALVES if half_ports(network, stage, half))


def internal_ports(network: FatTreeNetworkConfig, stage: int) -> int:
    """Internal ports of each half at ``stage``: r, or 0 when a half is left out."""
    return network.internal_port_count if len(halves(network, stage)) == 2 else 0


def router(network: FatTreeNetworkConfig, stage: int, half: str | None, *,
           stall_counters: bool = False) -> Router:
    """The router of a stage-``stage`` switch's ``half`` (the whole switch when None)."""
    tree, r = network.tree, internal_ports(network, stage)
    external = half_ports(network, stage, half)
    ports = [pe_port(network, port_label(tree.k, port)) if stage == 0 and port < tree.k else
             link_port(network, network.vcs, port_label(tree.k, port)) for port in external]
    ports += [link_port(network, network.vcs, internal_label(j), role="internal")
              for j in range(r)]
    config = router_config(network, ports, source_width=index_width(tree.terminal_count),
                           stall_counters=stall_counters)
    route = functools.partial(FatTreeRouteCompute, tree=tree, external_ports=external,
                              internal_port_count=r)
    return Router(config, route)


def _kind(network: FatTreeNetworkConfig, stage: int, half: str | None) -> tuple:
    """What makes two routers the same module: their ports, their roles and r."""
    last = stage == network.tree.last_stage
    return (stage == 0, last, half_ports(network, stage, half), internal_ports(network, stage))


def netlist(network: FatTreeNetworkConfig, *, stall_counters: bool = False) -> Netlist:
    """The :class:`Netlist` of ``network``; kinds are named ``s<stage><a|b>`` (``s<stage>`` for
    plain switches) after the first stage that uses them, with their stall counters if
    asked."""
    tree = network.tree
    kinds, kind_names = {}, {}
    for stage in range(tree.n):
        for half in halves(network, stage):
            key = _kind(network, stage, half)
            if key not in kind_names:
                name = f"s{stage}" + ("" if half is None else half[0])
                kind_names[key] = name
                kinds[name] = router(network, stage, half, stall_counters=stall_counters)
    routers, local = [], {}  # local[(label, switch port or ("i", j))] = local port index
    for switch in tree.switches():
        for half in halves(network, switch.stage):
            label = router_label(switch, half)
            external = half_ports(network, switch.stage, half)
            for index, port in enumerate(external):
                local[label, port] = index
            for j in range(internal_ports(network, switch.stage)):
                local[label, ("i", j)] = len(external) + j
            static = {"stage": switch.stage,
                      **{f"o{i}": digit for i, digit in enumerate(switch.digits)}}
            routers.append(RouterInstance(label, kind_names[_kind(network, switch.stage, half)],
                                          static))
    links = []

    def join(source, source_port, target, target_port, source_label, target_label):
        links.append(Link(len(links), source, local[source, source_port], target,
                          local[target, target_port], source_label, target_label,
                          network.vcs))

    def holder(switch, port):
        if not network.is_twin:
            return router_label(switch, None)
        return router_label(switch, network.splits[switch.stage].half_of(port))

    for switch in tree.switches():
        if switch.stage < tree.last_stage:
            for up in range(tree.k, 2 * tree.k):
                above, down = tree.up_neighbor(switch, up)
                lower, upper = holder(switch, up), holder(above, down)
                join(lower, up, upper, down, port_label(tree.k, up), port_label(tree.k, down))
                join(upper, down, lower, up, port_label(tree.k, down), port_label(tree.k, up))
        for j in range(internal_ports(network, switch.stage)):
            alpha, beta = router_label(switch, "alpha"), router_label(switch, "beta")
            join(alpha, ("i", j), beta, ("i", j), internal_label(j), internal_label(j))
            join(beta, ("i", j), alpha, ("i", j), internal_label(j), internal_label(j))
    terminals = []
    for terminal in range(tree.terminal_count):
        switch, port = tree.terminal_switch(terminal), tree.terminal_digits(terminal)[0]
        label = holder(switch, port)
        terminals.append(Terminal(label, local[label, port]))
    return Netlist(kinds, routers, links, terminals)
