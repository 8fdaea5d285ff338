"""Twin-torus route compute in the Amaranth simulator, against the reference model's route()."""

import itertools

import pytest
from amaranth.sim import Simulator

from twinnet.hdl.twin_card import card_router_config
from twinnet.hdl.twin_route import TwinRouteCompute, card_ports
from twinnet.model.twin import NAMED_CONFIGURATIONS, Card, TwinTorusTopology
from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.model.twin_routing import route


def route_compute(config, card, in_port):
    """The card's route compute for card-local input port ``in_port`` (a ``Port``)."""
    router = card_router_config(TwinNetworkConfig.for_topology(config), card)
    ports = card_ports(config, card)
    return TwinRouteCompute(router, ports.index(in_port), twin=config, card=card)


def simulate(config, card, in_port, heres, destinations):
    """Drive every (here, destination) pair; return the mismatches against the model."""
    dut = route_compute(config, card, in_port)
    ports = card_ports(config, card)
    mismatches = []

    async def testbench(ctx):
        for here in heres:
            for dim, digit in enumerate(here):
                ctx.set(dut.node_static[f"o{dim}"], digit)
            for destination in destinations:
                for dim, digit in enumerate(destination.node):
                    ctx.set(dut.header.node[f"o{dim}"], digit)
                ctx.set(dut.header.pe, destination.pe)
                expected = route(config, Card(here, card), in_port, destination)
                want = (ports.index(expected.port), 1 << expected.vc, int(expected.bubble), 0)
                got = (ctx.get(dut.out_port), ctx.get(dut.vc_mask), ctx.get(dut.bubble),
                       ctx.get(dut.malformed))
                if got != want:
                    mismatches.append((here, destination, got, want))

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()
    return mismatches


def check(config, *, every_in_port: bool, heres=None):
    heres = list(config.nodes()) if heres is None else heres
    destinations = list(config.pes())
    for card in range(config.card_count):
        in_ports = card_ports(config, card) if every_in_port else card_ports(config, card)[:1]
        for in_port in in_ports:
            assert simulate(config, card, in_port, heres, destinations) == []


def corners_and_middle(radices):
    corners = [tuple(c) for c in itertools.product(*[(0, k - 1) for k in radices])]
    return corners + [tuple(k // 2 for k in radices)]


@pytest.mark.parametrize("name", ["A", "D"])
def test_bubble_mode_k3_every_card_port_node_and_destination(name):
    check(TwinTorusTopology.uniform(3, 3, name, "bubble"), every_in_port=True)


@pytest.mark.parametrize("name", sorted(set(NAMED_CONFIGURATIONS) - {"A", "D"}))
def test_bubble_mode_k3_other_configurations_from_corner_nodes(name):
    config = TwinTorusTopology.uniform(3, 3, name, "bubble")
    check(config, every_in_port=True, heres=corners_and_middle(config.radices))


@pytest.mark.parametrize("mode", ["none", "vc"])
@pytest.mark.parametrize("name", ["A", "D", "G"])
def test_none_and_vc_modes_k3(name, mode):
    # In these modes the input port does not influence the decision.
    check(TwinTorusTopology.uniform(3, 3, name, mode), every_in_port=False)


@pytest.mark.parametrize("radices, name, mode", [
    ((4, 4, 4), "D", "vc"), ((4, 4, 4), "A", "bubble"), ((4, 4, 2), "D", "bubble"),
    ((6, 5, 3), "G", "vc"), ((3, 3, 3, 3), "C_Best", "bubble"),
])
def test_larger_and_mixed_radix_from_sampled_nodes(radices, name, mode):
    config = TwinTorusTopology(radices, name, mode)
    check(config, every_in_port=(mode == "bubble"), heres=corners_and_middle(radices))


def test_out_of_range_digit_is_flagged_malformed():
    config = TwinTorusTopology.uniform(3, 5, "D", "vc")  # 3-bit digits: 5, 6 and 7 are invalid
    dut = route_compute(config, 0, card_ports(config, 0)[0])
    seen = []

    async def testbench(ctx):
        for digits in itertools.product([0, 4, 5, 7], repeat=3):
            for dim, digit in enumerate(digits):
                ctx.set(dut.header.node[f"o{dim}"], digit)
            seen.append((digits, ctx.get(dut.malformed)))

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()
    for digits, malformed in seen:
        assert malformed == any(d >= 5 for d in digits), digits


def test_bad_construction():
    config = TwinTorusTopology.uniform(3, 3, "D")
    router = card_router_config(TwinNetworkConfig.for_topology(config), 0)
    with pytest.raises(ValueError, match=r"card must be 0 or 1, not 2"):
        TwinRouteCompute(router, 0, twin=config, card=2)
    with pytest.raises(ValueError, match=r"in_port must be from 0 to 4, not 5"):
        TwinRouteCompute(router, 5, twin=config, card=0)
    small = card_router_config(
        TwinNetworkConfig.for_topology(TwinTorusTopology.uniform(2, 3, "C_Best")), 0)
    with pytest.raises(ValueError, match=r"a card of an n=3 twin torus has 5 ports, not 4"):
        TwinRouteCompute(small, 0, twin=config, card=0)


@pytest.mark.parametrize("radices, mode", [((4, 4), "vc"), ((5, 3), "bubble"), ((3, 3, 3), "vc"),
                                           ((4, 3, 2), "bubble"), ((4, 4), "none")])
def test_plain_torus_every_port_node_and_destination(radices, mode):
    check(TwinTorusTopology(radices, "torus", mode), every_in_port=True)


def test_plain_torus_flags_pe_1_and_out_of_range_digits_malformed():
    config = TwinTorusTopology((3, 4), "torus", "vc")  # digit 0 is 2 bits wide: 3 is invalid
    dut = route_compute(config, 0, card_ports(config, 0)[0])
    seen = []

    async def testbench(ctx):
        for x, y, pe in itertools.product(range(4), range(4), (0, 1)):
            ctx.set(dut.header.node.o0, x)
            ctx.set(dut.header.node.o1, y)
            ctx.set(dut.header.pe, pe)
            seen.append(((x, y, pe), ctx.get(dut.malformed)))

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()
    for (x, _, pe), malformed in seen:
        assert malformed == (x >= 3 or pe == 1), (x, pe)
    router = card_router_config(TwinNetworkConfig.for_topology(config), 0)
    with pytest.raises(ValueError, match=r"card must be 0 \(the plain torus has one card\), "
                                         r"not 1"):
        TwinRouteCompute(router, 0, twin=config, card=1)
