"""Twin-torus analyses against the papers' formulas (003 §4–6, 000 eq. 9) and hand counts."""

import pytest

from twinnet.model.torus import CubeTopology
from twinnet.model.twin import NAMED_CONFIGURATIONS, Card, PortConfiguration, TwinTorusTopology
from twinnet.model.twin_analysis import (
    cross_ring_graph,
    deadlock_check,
    dependency_graph,
    dependency_graph_of_paths,
    equivalent_2d_torus,
    internal_transit_count,
    internal_transit_count_at,
    internal_transit_counts,
    path_channels,
    pe_distance_summary,
    torus_distance_summary,
)
from twinnet.model.twin_routing import path

# 003 Tables 7–8: paths through both cards of a node, counted as in 003 §5.1.
ODD_K = {
    "ABEF": lambda k: (3 * k**4 - 8 * k**3 + 3 * k**2 + 2) / 4,
    "CHIJ": lambda k: (k**4 + 2 * k**3 - 7 * k**2 + 2 * k + 2) / 4,
    "DG": lambda k: (k**4 - k**2 - 4 * k + 4) / 4,
}
EVEN_K = {
    "A": lambda k: (3 * k**4 - 8 * k**3 + 6 * k**2 + 4 * k + 4) / 4,
    "BF": lambda k: (3 * k**4 - 8 * k**3 + 6 * k**2) / 4,
    "CI": lambda k: (k**4 + 2 * k**3 - 4 * k**2 - 2 * k + 4) / 4,
    "D": lambda k: (k**4 - 4 * k**2 + 4) / 4,
    "E": lambda k: (3 * k**4 - 8 * k**3 + 6 * k**2 - 4 * k + 4) / 4,
    "G": lambda k: (k**4 + 4 * k**2 - 8 * k + 4) / 4,
    "HJ": lambda k: (k**4 + 2 * k**3 - 8 * k**2 + 6 * k) / 4,
}


def table_formula(name: str, k: int) -> int:
    table = ODD_K if k % 2 else EVEN_K
    (formula,) = [f for names, f in table.items() if name in names]
    value = formula(k)
    assert value == int(value)
    return int(value)


def eq9(n: int, k: int) -> int:
    """000 eq. 9: C_Best, odd n and odd k."""
    return ((k ** ((n - 1) // 2) - 1) * (k ** ((n + 1) // 2) - 1)
            + (k - 1) * (k - 3) // 4 * k ** (n - 1))


@pytest.mark.parametrize("k", range(3, 9))
@pytest.mark.parametrize("name", NAMED_CONFIGURATIONS)
def test_internal_transit_count_matches_tables_7_and_8(name, k):
    config = TwinTorusTopology.uniform(3, k, name)
    assert internal_transit_count(config) == table_formula(name, k)


def test_k4_values_of_table_8():
    quoted = dict(A=93, B=88, C=79, D=49, E=85, F=88, G=73, H=70, I=79, J=70)
    counts = {name: internal_transit_count(TwinTorusTopology.uniform(3, 4, name))
              for name in quoted}
    assert counts == quoted


@pytest.mark.parametrize("n, k", [(3, 3), (3, 5), (3, 7), (5, 3), (5, 5)])
def test_c_best_matches_eq_9(n, k):
    assert internal_transit_count(TwinTorusTopology.uniform(n, k, "C_Best")) == eq9(n, k)


def test_eq_9_hand_values():
    assert (eq9(3, 5), eq9(3, 7)) == (146, 582)


@pytest.mark.parametrize("name, k, node", [("A", 3, (1, 2, 0)), ("D", 4, (3, 0, 2)),
                                           ("G", 4, (0, 0, 0)), ("H", 3, (2, 2, 2))])
def test_symmetric_count_equals_walking_every_pair(name, k, node):
    config = TwinTorusTopology.uniform(3, k, name)
    assert internal_transit_count_at(config, node) == internal_transit_count(config)


def test_fully_split_configurations_have_no_type_1_transit():
    for name in "ABEF":
        assert internal_transit_counts(TwinTorusTopology.uniform(3, 4, name))["type1"] == 0


def test_mixed_radix_count_walks_every_pair():
    config = TwinTorusTopology((4, 4, 2), "D")
    assert internal_transit_count_at(config, (1, 3, 1)) == internal_transit_count(config)


# --- PE-level distances ---------------------------------------------------------------------------

@pytest.mark.parametrize("k", [2, 4, 6])
@pytest.mark.parametrize("name", NAMED_CONFIGURATIONS)
def test_pe_level_diameter_is_2k_for_even_k(name, k):
    assert pe_distance_summary(TwinTorusTopology.uniform(3, k, name)).diameter == 2 * k


def test_pe_level_diameter_k8_configuration_d():
    assert pe_distance_summary(TwinTorusTopology.uniform(3, 8, "D")).diameter == 16


@pytest.mark.parametrize("w", [1, 2, 3])
def test_equivalent_2d_torus_follows_table_2(w):
    k = 2**w
    cube = equivalent_2d_torus(2 * k**3)
    if w % 2:
        side = 2 ** ((3 * w + 1) // 2)
        assert cube.radices == (side, side)
        assert torus_distance_summary(cube).diameter == side
    else:
        assert cube.radices == (2 ** (3 * w // 2), 2 ** (3 * w // 2 + 1))
        assert torus_distance_summary(cube).diameter == 3 * 2 ** (3 * w // 2 - 1)


def test_twin_torus_beats_equivalent_2d_torus_from_k4():
    for k in (4, 8):
        twin = pe_distance_summary(TwinTorusTopology.uniform(3, k, "D"))
        flat = torus_distance_summary(equivalent_2d_torus(twin.pe_count))
        assert twin.diameter < flat.diameter and twin.average < flat.average


def test_torus_average_distance_by_hand():
    # 4x4 torus: per ring of 4 the distances from a node are 0, 1, 2, 1 (sum 4); over 15 others
    # the total is 4*4 (X) + 4*4 (Y) = 32.
    assert torus_distance_summary(CubeTopology((4, 4))).average == pytest.approx(32 / 15)


# --- channel-dependency graphs (003 §6.2–6.3) -----------------------------------------------------

def walk_cycle(config, cycle):
    """Check a reported cycle independently: each channel's link ends at the card where the next
    channel starts, and some PE-to-PE path holds each channel while requesting the next."""
    assert len(cycle) >= 2
    pairs = {(cycle[i], cycle[(i + 1) % len(cycle)]) for i in range(len(cycle))}
    for (node, card, port, _), (next_node, next_card, _, _) in pairs:
        arrival, _ = config.link_target(Card(node, card), port)
        assert arrival == Card(next_node, next_card)
    witnessed = set()
    for source in config.pes():
        for destination in config.pes():
            channels = path_channels(path(config, source, destination))
            witnessed.update(p for p in zip(channels, channels[1:]) if p in pairs)
    assert witnessed == pairs


@pytest.mark.parametrize("name", ["A", "D"])
def test_plain_twin_dor_has_a_real_cycle(name):
    config = TwinTorusTopology.uniform(3, 4, name, "none")
    report = deadlock_check(config)
    assert not report.deadlock_free
    walk_cycle(config, report.cycle)


@pytest.mark.parametrize("name", NAMED_CONFIGURATIONS)
@pytest.mark.parametrize("k", (3, 4, 5, 6))
def test_virtual_channels_make_twin_dor_acyclic(name, k):
    assert deadlock_check(TwinTorusTopology.uniform(3, k, name, "vc")).deadlock_free


@pytest.mark.parametrize("name", ["A", "D", "G"])
def test_bubble_mode_leaves_only_in_ring_cycles(name):
    config = TwinTorusTopology.uniform(3, 4, name, "bubble")
    assert dependency_graph(config).find_cycle() is not None  # rings close on one VC
    assert deadlock_check(config).deadlock_free


def test_plain_dor_has_cross_card_cycles_beyond_the_rings():
    # 003 Ex. 6.2: types 1 and 3 on one internal VC close cycles across the cards.
    config = TwinTorusTopology.uniform(3, 4, "D", "none")
    cycle = cross_ring_graph(config, dependency_graph(config)).find_cycle()
    assert cycle is not None
    walk_cycle(config, cycle)


@pytest.mark.parametrize("mode", ["none", "vc", "bubble"])
@pytest.mark.parametrize("radices, configuration", [((3, 4, 2), "A"), ((4, 3, 3), "D"),
                                                    ((5, 4), "C_Best")])
def test_dependency_graph_shortcut_equals_every_full_path(radices, configuration, mode):
    """The walk that stops at channels seen (and, without VCs, places the origin's
    dependencies at every node) finds exactly the dependencies of every full path."""
    if configuration == "C_Best":
        configuration = PortConfiguration.c_best(len(radices))
    config = TwinTorusTopology(radices, configuration, mode)
    assert dependency_graph(config).edges == dependency_graph_of_paths(config).edges


@pytest.mark.parametrize("radices, configuration", [
    ((2, 7), "torus"), ((6, 5), "torus"), ((2, 2, 2), "G"), ((5, 4, 2), "J"),
    ((3, 3, 3, 2), "C_Best")])
def test_mode_vc_dependencies_by_digit_class_equal_every_full_path(radices, configuration):
    """Mode vc reads each destination digit by its class: rings of 2, odd and even rings (the
    tie k/2 away), every split, the plain torus and four dimensions give the graph of every
    full path."""
    if configuration == "C_Best":
        configuration = PortConfiguration.c_best(len(radices))
    config = TwinTorusTopology(radices, configuration, "vc")
    assert dependency_graph(config).edges == dependency_graph_of_paths(config).edges


def test_ndt_c_best_vc_is_acyclic():
    for radices in [(4, 4), (3, 3, 3, 3), (3, 3, 3, 3, 3)]:
        config = TwinTorusTopology(radices, PortConfiguration.c_best(len(radices)), "vc")
        assert deadlock_check(config).deadlock_free
