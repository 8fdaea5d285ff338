"""Twin DOR paths (003 Alg. 1–6), checked against an independent node-level walk."""

import pytest

from twinnet.model.torus import ring_distance
from twinnet.model.twin import (
    INTERNAL,
    NAMED_CONFIGURATIONS,
    PE_PORT,
    Card,
    Port,
    PortConfiguration,
    TwinTorusTopology,
)
from twinnet.model.twin_routing import internal_vc_count, path, route


def expected_departure(config, node, destination):
    """The card a packet must leave ``node`` from: the card of the port that corrects the lowest
    differing dimension the shorter way (ties +), or the destination PE's card."""
    for dim, (c, d, k) in enumerate(zip(node, destination.node, config.radices)):
        if c != d:
            forward = (d - c) % k
            return config.configuration.card_of(Port.external(dim, +1 if forward <= k - forward
                                                              else -1))
    return destination.pe


def expected_node_walk(config, source, destination):
    """(node, arrival card, departure card) per node visited, from plain arithmetic: correct X,
    then Y, … each in its shorter direction (ties +), leave through the PE's card at the end."""
    card_of = config.configuration.card_of
    node, arrival_card, walk = list(source.node), source.pe, []
    for dim, k in enumerate(config.radices):
        while node[dim] != destination.node[dim]:
            forward = (destination.node[dim] - node[dim]) % k
            sign = +1 if forward <= k - forward else -1
            walk.append((tuple(node), arrival_card, card_of(Port.external(dim, sign))))
            node[dim] = (node[dim] + sign) % k
            arrival_card = card_of(Port.external(dim, -sign))
    walk.append((tuple(node), arrival_card, destination.pe))
    return walk


def check_path(config, source, destination):
    hops = path(config, source, destination)
    assert hops[0].card == source.card and hops[0].in_port == PE_PORT
    assert hops[-1].card == destination.card and hops[-1].out_port == PE_PORT
    external = [h for h in hops if h.out_port.is_external]
    distance = sum(ring_distance(a, b, k) for a, b, k in
                   zip(source.node, destination.node, config.radices))
    assert len(external) == distance  # minimal at node level
    walk = expected_node_walk(config, source, destination)
    # The internal link is used at a node exactly when the packet arrived on one card and must
    # leave (to the next external port, or to its PE) from the other.
    used = [(h.card.node, h.card.index) for h in hops if h.out_port == INTERNAL]
    expected = [(node, arrival) for node, arrival, departure in walk if arrival != departure]
    assert used == expected
    for hop in hops:
        assert hop.vc < (internal_vc_count(config) if hop.out_port == INTERNAL else
                         (2 if config.mode == "vc" and hop.out_port.is_external else 1))


@pytest.mark.parametrize("name, mode", [(name, "vc") for name in NAMED_CONFIGURATIONS] +
                         [(name, mode) for name in ("A", "D") for mode in ("none", "bubble")])
def test_every_path_k4(name, mode):
    config = TwinTorusTopology.uniform(3, 4, name, mode)
    for source in config.pes():
        for destination in config.pes():
            check_path(config, source, destination)


@pytest.mark.parametrize("name", NAMED_CONFIGURATIONS)
def test_every_path_k3(name):
    config = TwinTorusTopology.uniform(3, 3, name, "vc")
    for source in config.pes():
        for destination in config.pes():
            check_path(config, source, destination)


def check_every_path_stepwise(config):
    """Check every PE-to-PE path through the routing states it is made of.

    Per destination, each source is walked until it reaches a (card, input port) state already
    checked for that destination: the rest of its path is then made of checked steps. Each step
    is checked on its own: an external hop brings the node one hop nearer, the internal link is
    taken exactly when the wanted port (the shorter ring direction of the lowest differing
    dimension, or the destination PE) is on the other card, and the walk ends at the PE.
    """
    card_of = config.configuration.card_of
    for destination in config.pes():
        checked = set()
        for source in config.pes():
            card, in_port, steps = source.card, PE_PORT, 0
            while (card, in_port) not in checked:
                checked.add((card, in_port))
                decision = route(config, card, in_port, destination)
                departure = expected_departure(config, card.node, destination)
                if card.node == destination.node:
                    assert decision.port in (PE_PORT, INTERNAL)
                if decision.port == PE_PORT:
                    assert card == destination.card
                    break
                if decision.port == INTERNAL:
                    assert departure != card.index
                else:
                    assert departure == card.index == card_of(decision.port)
                    nearer = config.link_target(card, decision.port)[0].node
                    assert (config.cube.distance(nearer, destination.node)
                            == config.cube.distance(card.node, destination.node) - 1)
                card, in_port = config.link_target(card, decision.port)
                steps += 1
                assert steps <= 2 * sum(config.radices) + 1


#: Radix 6 (216 nodes) for two configurations in the default suite, for all ten in the slow
#: tier (about 5 s each); radix 5 for all ten.
K6_DEFAULT = ("A", "D")
K5_K6 = [pytest.param(name, k, marks=[pytest.mark.slow] if k == 6 and name not in K6_DEFAULT
                      else []) for name in NAMED_CONFIGURATIONS for k in (5, 6)]


@pytest.mark.parametrize("name, k", K5_K6)
def test_every_path_k5_k6_stepwise(name, k):
    check_every_path_stepwise(TwinTorusTopology.uniform(3, k, name, "vc"))


def test_stepwise_check_agrees_with_whole_paths_k4():
    config = TwinTorusTopology.uniform(3, 4, "A", "bubble")
    check_every_path_stepwise(config)


def test_every_path_mixed_radix_and_4d():
    for config in [TwinTorusTopology((4, 4, 2), "D", "bubble"),
                   TwinTorusTopology((3, 2, 3, 2), "C_Best", "vc")]:
        for source in config.pes():
            for destination in config.pes():
                check_path(config, source, destination)


def test_positive_tie_rule():
    config = TwinTorusTopology.uniform(3, 4, "D", "none")
    decision = route(config, Card((0, 0, 0), 0), PE_PORT, config.pe((2, 0, 0), 0))
    assert decision.port == Port.parse("X+", 3)


# --- virtual channels (mode vc, 003 §6.3.1) -------------------------------------------------------

def test_external_vc_up_and_low_around_the_wrap():
    config = TwinTorusTopology.uniform(3, 6, "D", "vc")
    # X from 4 to 1 on k = 6 is a tie, so it goes + (4 -> 5 -> 0 -> 1): low (VC1) while
    # c > d, up (VC0) after the wrap.
    hops = [h for h in path(config, config.pe((4, 0, 0), 0), config.pe((1, 0, 0), 0))
            if h.out_port.is_external]
    assert [(h.card.node[0], h.vc) for h in hops] == [(4, 1), (5, 1), (0, 0)]


def test_configuration_d_internal_vc_numbering():
    config = TwinTorusTopology.uniform(3, 4, "D", "vc")  # card 0: X+ Y+ X-, Y split
    c0, c1 = Card((1, 1, 1), 0), Card((1, 1, 1), 1)
    x_in = Port.parse("X-", 3)
    # type 1: card 0 toward Z (card 1, not split) -> VC0
    assert route(config, c0, x_in, config.pe((1, 1, 2), 0)).vc == 0
    # type 2 low: card 0 toward Y- (on card 1), d_Y = 0 < c_Y = 1 -> VC2
    assert route(config, c0, x_in, config.pe((1, 0, 1), 0)).vc == 2
    assert route(config, c1, INTERNAL, config.pe((1, 0, 1), 0)).port == Port.parse("Y-", 3)
    # type 2 up: from Y = 0 toward Y = 3 goes Y- (on card 1) with d_Y > c_Y -> VC1
    assert route(config, Card((1, 0, 1), 0), x_in, config.pe((1, 3, 1), 0)).vc == 1
    # type 3: to the other PE of the same node -> VC3
    assert route(config, c0, x_in, config.pe((1, 1, 1), 1)).vc == 3


@pytest.mark.parametrize("name", NAMED_CONFIGURATIONS)
def test_internal_vc_counts(name):
    fully_split = name in "ABEF"
    assert internal_vc_count(TwinTorusTopology.uniform(3, 4, name, "vc")) == (7 if fully_split
                                                                            else 4)
    assert internal_vc_count(TwinTorusTopology.uniform(3, 4, name, "bubble")) == (4 if fully_split
                                                                                else 3)
    assert internal_vc_count(TwinTorusTopology.uniform(3, 4, name, "none")) == 1


def test_c_best_internal_vcs_for_odd_and_even_n():
    # Even n: type 1 + type 3. Odd n: add the split middle dimension (1 VC bubble, 2 VCs vc).
    for n, vc, bubble in [(2, 2, 2), (4, 2, 2), (3, 4, 3), (5, 4, 3)]:
        assert internal_vc_count(TwinTorusTopology.uniform(n, 3, "C_Best", "vc")) == vc
        assert internal_vc_count(TwinTorusTopology.uniform(n, 3, "C_Best", "bubble")) == bubble


# --- bubble flags (mode bubble, 003 §6.3.2) -------------------------------------------------------

def test_bubble_flags_along_a_hand_traced_path():
    config = TwinTorusTopology.uniform(3, 4, "D", "bubble")  # card 0: X+ Y+ X-; card 1: Y- Z+ Z-
    hops = path(config, config.pe((0, 0, 0), 0), config.pe((2, 3, 1), 1))
    trace = [(str(h.card), str(h.in_port), str(h.out_port), h.vc, h.bubble) for h in hops]
    assert trace == [
        ("0,0,0/c0", "PE", "X+", 0, True),     # injection enters the X ring
        ("1,0,0/c0", "X-", "X+", 0, False),    # continues the X ring
        ("2,0,0/c0", "X-", "I", 1, True),      # type 2, X -> Y: enters the Y ring here
        ("2,0,0/c1", "I", "Y-", 0, False),     # continues the Y ring begun at the internal link
        ("2,3,0/c0", "Y+", "I", 0, False),     # type 1: checked on the other card
        ("2,3,0/c1", "I", "Z+", 0, True),      # enters the Z ring
        ("2,3,1/c1", "Z-", "PE", 0, False),    # ejection
    ]


def test_type_2_crossing_that_continues_its_ring_needs_no_bubble():
    config = TwinTorusTopology.uniform(3, 4, "D", "bubble")
    # Arrived on card 0 through Y+ (moving Y-), continues Y- on card 1 over the internal link.
    decision = route(config, Card((0, 2, 0), 0), Port.parse("Y+", 3), config.pe((0, 1, 0), 0))
    assert (decision.port, decision.vc, decision.bubble) == (INTERNAL, 1, False)


def test_type_3_needs_no_bubble():
    config = TwinTorusTopology.uniform(3, 4, "A", "bubble")
    decision = route(config, Card((1, 1, 1), 0), PE_PORT, config.pe((1, 1, 1), 1))
    assert (decision.port, decision.vc, decision.bubble) == (INTERNAL, 3, False)


def test_vc_mode_never_asks_for_bubble():
    config = TwinTorusTopology.uniform(3, 3, "A", "vc")
    assert not any(h.bubble for s in config.pes() for d in config.pes()
                   for h in path(config, s, d))


def test_explicit_configuration_equals_named():
    explicit = PortConfiguration.from_ports(3, ["X+", "Y+", "X-"])
    assert explicit.card0 == PortConfiguration.named("D").card0
