"""Twisted-torus route compute in the Amaranth simulator, against the reference model.

For (router, destination) pairs and every input port the hardware's port must be the
first move of the model's dimension-order path (:func:`twinnet.model.twist.routing_path`),
its bubble flag and dateline VC those of
:func:`twinnet.model.twisted_network.scheme_channels` on the hop that brought the packet in
and the hop it takes. Every pair on the small instances, 160 seeded pairs on the others (the
model's own tests cover every pair of the routing itself).
"""

import random

import pytest
from route_sim import run_route_compute

from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.ring_escape import opposite
from twinnet.hdl.twisted_route import PE, TwistedRouteCompute, is_pe, pe_labels
from twinnet.model.twist import routing_path
from twinnet.model.twisted_network import (
    TwistedNetworkConfig,
    port_label,
    port_move,
    scheme_channels,
)


def route_compute(network, in_port: int) -> TwistedRouteCompute:
    ports = (*network.ports, PE)
    config = RouterConfig(32, 1, tuple(PortConfig("pe") if p == PE else
                                       PortConfig("network", network.vc_count) for p in ports))
    return TwistedRouteCompute(config, in_port, network=network, ports=ports)


def run(dut, n: int, cases):
    """Drive ``(here, destination, in_vc)``; return ``(out_port, vc_mask, bubble,
    malformed)`` of each."""
    def drive(ctx, dut, case):
        here, there, vc = case
        for dim in range(n):
            ctx.set(dut.node_static[f"o{dim}"], here[dim])
            ctx.set(dut.header[f"o{dim}"], there[dim])
        ctx.set(dut.in_vc, vc)

    return run_route_compute(dut, cases, drive)


def expected(network, in_label: str, here, there, vc: int):
    topology = network.topology
    ports = (*network.ports, PE)
    path = routing_path(topology, here, there)
    if not path:
        return ports.index(PE), 1, 0, 0
    _, dim, sign = path[0]
    out = port_label(dim, sign)
    if network.escape == "none":
        return ports.index(out), 1, 0, 0
    if in_label == PE:
        return ports.index(out), 1, int(network.escape == "bubble"), 0
    travel_dim, travel_sign = port_move(opposite(in_label))
    previous = topology.step(here, travel_dim, -travel_sign)
    channels = scheme_channels(network, [(previous, travel_dim, travel_sign),
                                         (here, dim, sign)])
    if network.escape == "bubble":
        return ports.index(out), 1, int(len(channels) == 2), 0
    straight = out == opposite(in_label)
    return ports.index(out), 1 << (1 if straight and vc == 1 else channels[1][3]), 0, 0


CASES = [("8,4", "YX=4"), ("8,4", ""), ("6,3", "YX=3"), ("5,4", "XY=3"), ("4,4,2", "ZX=2"),
         ("4,3,2", "YX=2"), ("3,3,3", "ZX=1,ZY=2")]
#: Instances driven with every pair.
EVERY_PAIR = {("6,3", "YX=3"), ("3,3,3", "ZX=1,ZY=2")}


@pytest.mark.parametrize("escape", ["bubble", "dateline", "none"])
@pytest.mark.parametrize("radices, twists", CASES, ids=[f"{r}-{t or 't0'}" for r, t in CASES])
def test_every_router_destination_and_input(radices, twists, escape):
    network = TwistedNetworkConfig.from_dict({"radices": [int(x) for x in radices.split(",")],
                                         "twists": twists, "escape": escape})
    topology = network.topology
    nodes = list(topology.nodes())
    pairs = [(here, there) for here in nodes for there in nodes]
    if (radices, twists) not in EVERY_PAIR:
        pairs = random.Random(radices + twists).sample(pairs, 160)
    for in_port, in_label in enumerate((*network.ports, PE)):
        vcs = (0, 1) if network.vc_count == 2 and in_label != PE else (0,)
        cases = [(here, there, vc) for here, there in pairs for vc in vcs]
        got = run(route_compute(network, in_port), topology.n, cases)
        want = [expected(network, in_label, *case) for case in cases]
        wrong = [(in_label, c, g, w) for c, g, w in zip(cases, got, want) if g != w]
        assert wrong == [], wrong[:5]


def expected_with_copies(network, in_label: str, here, there, vc: int):
    """:func:`expected` with several copies of the escape per link: straight on, the copy the
    packet is on; entering a ring (a turn, an injection), the first VC of every copy."""
    port, mask, bubble, malformed = expected(
        network, in_label, here, there, vc % network.escape_vc_count)
    own = network.escape_vc_count
    if port == len(network.ports):  # ejection
        return port, mask, bubble, malformed
    straight = in_label != PE and (*network.ports, PE)[port] == opposite(in_label)
    if straight:
        return port, mask << (vc - vc % own), bubble, malformed
    return port, sum(1 << v for v in range(0, network.vc_count, own)), bubble, malformed


@pytest.mark.parametrize("radices, twists, escape, vcs", [
    ("8,4", "YX=4", "bubble", 3), ("6,3", "YX=3", "dateline", 4), ("4,3,2", "YX=2", "bubble", 8),
    ("5,4", "XY=3", "dateline", 8)])
def test_several_vcs_per_link(radices, twists, escape, vcs):
    network = TwistedNetworkConfig.from_dict({"radices": [int(x) for x in radices.split(",")],
                                              "twists": twists, "escape": escape, "vcs": vcs})
    topology = network.topology
    nodes = list(topology.nodes())
    pairs = random.Random(radices + twists).sample(
        [(here, there) for here in nodes for there in nodes], 60)
    for in_port, in_label in enumerate((*network.ports, PE)):
        cases = [(here, there, vc) for here, there in pairs
                 for vc in (range(vcs) if in_label != PE else (0,))]
        got = run(route_compute(network, in_port), topology.n, cases)
        want = [expected_with_copies(network, in_label, *case) for case in cases]
        wrong = [(in_label, c, g, w) for c, g, w in zip(cases, got, want) if g != w]
        assert wrong == [], wrong[:5]


def test_several_pes_per_router():
    """Three PEs per router: an arriving packet leaves at the PE its header names, a PE
    beyond the third is malformed, and a packet not yet there moves as the model says."""
    network = TwistedNetworkConfig.from_dict({"radices": [6, 3], "twists": "YX=3",
                                              "pe_ports": 3})
    ports = (*network.ports, *pe_labels(network))
    assert ports[-3:] == ("PE0", "PE1", "PE2")
    config = RouterConfig(32, 1, tuple(PortConfig("pe") if is_pe(p) else PortConfig("network")
                                       for p in ports))
    dut = TwistedRouteCompute(config, ports.index("PE1"), network=network, ports=ports)
    here = (1, 2)
    cases = [(there, pe) for there in network.topology.nodes() for pe in range(4)]

    def drive(ctx, dut, case):
        there, pe = case
        for dim in range(2):
            ctx.set(dut.node_static[f"o{dim}"], here[dim])
            ctx.set(dut.header[f"o{dim}"], there[dim])
        ctx.set(dut.header.pe, pe)

    for (there, pe), (port, _, _, malformed) in zip(cases, run_route_compute(dut, cases, drive)):
        assert malformed == int(pe == 3), (there, pe)
        if pe == 3:
            continue
        path = routing_path(network.topology, here, there)
        want = ports.index(f"PE{pe}") if not path else ports.index(port_label(*path[0][1:]))
        assert port == want, (there, pe)


def test_out_of_range_coordinates_are_malformed():
    network = TwistedNetworkConfig.from_dict({"radices": [6, 3], "twists": "YX=3"})
    dut = route_compute(network, len(network.ports))
    cases = [((1, 2), (x, y), 0) for x in range(8) for y in range(4)]
    for (_, (x, y), _), got in zip(cases, run(dut, 2, cases)):
        assert got[3] == int(x >= 6 or y >= 3), (x, y)


def test_bad_parameters():
    network = TwistedNetworkConfig.from_dict({"radices": [8, 4], "twists": "YX=4"})
    config = RouterConfig(32, 1, (PortConfig("pe"),) * 5)
    with pytest.raises(ValueError, match="ports must be X\\+, X-, Y\\+, Y-, PE in some order"):
        TwistedRouteCompute(config, 0, network=network, ports=("X+", "X-", "Y+", "Z+", PE))
    with pytest.raises(TypeError, match="network must be a TwistedNetworkConfig"):
        TwistedRouteCompute(config, 0, network="8x4", ports=("X+",))
