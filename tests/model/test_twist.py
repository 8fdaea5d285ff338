"""Twisted tori against 004 (§II–IV) figures and independent brute-force oracles."""

import itertools
import random
from collections import deque
from fractions import Fraction

import pytest

from twinnet.model.twist import (
    METRICS,
    TwistedTorusTopology,
    best_twists,
    diameter,
    diameter_sweep,
    is_node_symmetric,
    metrics,
    non_commuting_moves,
    parse_dimension_pair,
    routing_path,
    routing_record,
    theorem_violations,
    twist_sweep,
)

# --- independent oracles (walk the graph through `step`, enumerate paths) -----------------------

def neighbours(config, node):
    return [(config.step(node, dim, sign), dim) for dim in range(config.n)
            if config.radices[dim] > 1 for sign in (1, -1)]


def all_pairs_distances(config):
    result = {}
    for source in config.nodes():
        dist = {source: 0}
        queue = deque([source])
        while queue:
            u = queue.popleft()
            for v, _ in neighbours(config, u):
                if v not in dist:
                    dist[v] = dist[u] + 1
                    queue.append(v)
        result[source] = dist
    return result


def enumerated_dimension_averages(config):
    """k̄_i by listing every shortest path of every ordered pair (small tori only)."""
    distances = all_pairs_distances(config)
    sums = [Fraction(0)] * config.n
    for source, dist in distances.items():
        for target, d in dist.items():
            paths = []

            def walk(node, hops, left, target=target, paths=paths, dist=dist):
                if left == 0:
                    if node == target:
                        paths.append(hops)
                    return
                for v, dim in neighbours(config, node):
                    if dist[v] == dist[node] + 1 and distances[v][target] == left - 1:
                        walk(v, hops + (dim,), left - 1)

            walk(source, (), d)
            for i in range(config.n):
                sums[i] += Fraction(sum(p.count(i) for p in paths), len(paths))
    pairs = config.node_count ** 2
    return tuple(s / pairs for s in sums)


# --- 004 §III figures and the 8x4 torus of its Fig. 2 ---------------------------------------------

def test_8x4_with_twist_4_beats_the_untwisted_torus():
    plain = metrics(TwistedTorusTopology((8, 4)))
    twisted = metrics(TwistedTorusTopology((8, 4), {"YX": 4}))
    assert (plain.diameter, twisted.diameter) == (6, 4)
    assert (plain.average_distance, twisted.average_distance) == (3, Fraction(21, 8))
    assert plain.imbalance == Fraction(4, 3) and twisted.imbalance == 1


def test_twist_of_half_the_columns_minimises_the_diameter_with_12_rows():
    for dx in range(12, 49):
        sweep = diameter_sweep((dx, 12))
        best, twists = best_twists(sweep, "diameter")
        assert dx // 2 in twists, dx
        if dx == 48:
            assert (sweep[0], best) == (30, 18)
        if dx == 46:
            assert (sweep[0], best) == (29, 17)


def test_2a_by_a_is_optimal_at_twist_a():
    sweep = twist_sweep((12, 6))
    for metric in METRICS:
        assert 6 in best_twists(sweep, metric)[1], metric


def test_no_single_twist_optimises_all_four_metrics_at_4_to_1():
    sweep = twist_sweep((48, 12))
    winners = [set(best_twists(sweep, m)[1]) for m in METRICS]
    assert not set.intersection(*winners)


# --- metrics against hand formulas and oracles ---------------------------------------------------

@pytest.mark.parametrize("radices", [(5,), (6, 3), (4, 4, 2), (7, 2, 3)])
def test_untwisted_torus_metrics_are_ring_sums(radices):
    def ring_average(d):
        return Fraction(sum(min(i, d - i) for i in range(d)), d)
    m = metrics(TwistedTorusTopology(radices))
    assert m.diameter == sum(d // 2 for d in radices)
    assert m.dimension_averages == tuple(ring_average(d) for d in radices)
    assert m.average_distance == sum(ring_average(d) for d in radices)


@pytest.mark.parametrize("radices, twists", [
    ((4, 3), {"YX": 1}),
    ((5, 3), {"YX": 2}),
    ((4, 4), {"XY": -1, "YX": 1}),  # not node-symmetric: every source is used
    ((4, 2, 2), {"YX": 2, "ZX": 1}),
    ((3, 3, 2), {"ZX": 1, "ZY": 2}),
])
def test_metrics_equal_path_enumeration(radices, twists):
    config = TwistedTorusTopology(radices, twists)
    m = metrics(config)
    distances = all_pairs_distances(config)
    assert m.diameter == max(max(d.values()) for d in distances.values())
    assert m.average_distance == Fraction(sum(sum(d.values()) for d in distances.values()),
                                          config.node_count ** 2)
    assert m.dimension_averages == enumerated_dimension_averages(config)
    assert sum(m.dimension_averages) == m.average_distance


def test_twisted_links_by_hand():
    config = TwistedTorusTopology((8, 4), {"YX": 4})
    # 004 Fig. 2: (0,3) is joined to (4,0) and (0,0) to (4,3).
    assert config.step((0, 3), 1, +1) == (4, 0)
    assert config.step((0, 0), 1, -1) == (4, 3)
    assert config.step((7, 2), 0, +1) == (0, 2)
    assert config.step((3, 1), 1, +1) == (3, 2)


# --- node symmetry -------------------------------------------------------------------------------

def test_4x4_with_twists_both_ways_is_not_node_symmetric():
    config = TwistedTorusTopology((4, 4), {"XY": -1, "YX": 1})
    assert not is_node_symmetric(config)
    assert theorem_violations(config)
    assert non_commuting_moves(config) is not None


def test_004_proof_example_ends_on_different_nodes():
    # 004 §IV with I = K = X, J = Y, t_XY = t_YX = 1 on 4×4, source (d_X − 1, d_Y − t_XY − 1)
    # = (3, 2). X first: (3,2) → (0,3) over the twisted X link, then Y: → (1,0). Y first:
    # (3,2) → (3,3), then X: → (0, 3 + 1 mod 4) = (0,0).
    config = TwistedTorusTopology((4, 4), {"XY": 1, "YX": 1})
    x_first = config.step(config.step((3, 2), 0, 1), 1, 1)
    y_first = config.step(config.step((3, 2), 1, 1), 0, 1)
    assert (x_first, y_first) == ((1, 0), (0, 0))


@pytest.mark.parametrize("twists", [{"YX": 3}, {"YX": 1, "ZX": 2}, {"ZX": 1, "ZY": 1},
                                    {"ZY": 2}, {}])
def test_twists_only_over_unreceiving_dimensions_are_node_symmetric(twists):
    config = TwistedTorusTopology((4, 3, 3), twists)
    assert is_node_symmetric(config)
    assert non_commuting_moves(config) is None
    # Vertex-transitive: every node sees the same distance distribution.
    profiles = {tuple(sorted(d.values())) for d in all_pairs_distances(config).values()}
    assert len(profiles) == 1


def test_theorem_and_brute_force_agree_on_random_small_tori():
    rng = random.Random(2024)
    for _ in range(60):
        n = rng.choice([2, 3])
        radices = tuple(rng.randint(2, 4) for _ in range(n))
        twists = {(j, k): rng.randint(1, radices[k] - 1)
                  for j, k in itertools.permutations(range(n), 2) if rng.random() < 0.35}
        config = TwistedTorusTopology(radices, twists)
        symmetric = non_commuting_moves(config) is None
        assert is_node_symmetric(config) == symmetric, config.label()


# --- configuration and errors --------------------------------------------------------------------

def test_twist_forms_and_normalisation():
    by_name = TwistedTorusTopology((8, 4), {"YX": 4, "XY": 0})
    by_pair = TwistedTorusTopology((8, 4), {(1, 0): 4})
    by_triple = TwistedTorusTopology((8, 4), [(1, 0, 4)])
    assert by_name == by_pair == by_triple
    assert by_name.twists == ((1, 0, 4),)
    assert TwistedTorusTopology((8, 4), {"YX": 12}).skew(1, 0) == 4
    assert parse_dimension_pair("zx", 3) == (2, 0)
    assert by_name.label() == "8x4 t_YX=4"


def test_bad_twists():
    with pytest.raises(ValueError, match="t_YX = 1: dimension Y has size 1; twists need both "
                                         "dimensions of size >= 2"):
        TwistedTorusTopology((4, 1), {"YX": 1})
    with pytest.raises(ValueError, match="t_XX: a twist needs two different dimensions"):
        TwistedTorusTopology((4, 4), [(0, 0, 1)])
    with pytest.raises(ValueError, match="twist 'ZX' must name two dimensions of an N=2 torus"):
        TwistedTorusTopology((4, 4), {"ZX": 1})
    with pytest.raises(ValueError, match=r"radices\[1\] must be an integer >= 1, not 0"):
        TwistedTorusTopology((4, 0))
    with pytest.raises(TypeError, match=r"twist\[2\] must be an integer, not 1.5"):
        TwistedTorusTopology((4, 4), {"YX": 1.5})
    with pytest.raises(ValueError, match="metric must be one of 'diameter'"):
        best_twists({0: 3}, "latency")


def test_size_one_dimension_without_twists_is_allowed():
    config = TwistedTorusTopology((6, 1))
    assert diameter(config) == 3 and metrics(config).dimension_averages[1] == 0


def _instances():
    """Every node-symmetric 2-D twisted torus up to 6 x 6 with one twist, and 3-D ones."""
    for dx in range(2, 7):
        for dy in range(2, 7):
            yield from (TwistedTorusTopology((dx, dy), {"YX": t}) for t in range(dx))
            yield from (TwistedTorusTopology((dx, dy), {"XY": t}) for t in range(1, dy))
    yield TwistedTorusTopology((8, 4), {"YX": 4})
    yield TwistedTorusTopology((4, 4, 2), {"ZX": 2})
    yield TwistedTorusTopology((4, 4, 4), {"ZX": 1, "ZY": 2})
    yield TwistedTorusTopology((6, 4, 3), {"YX": 3, "ZX": 2})


def test_routing_records_are_minimal_and_arrive():
    """For every ordered pair: dimension-order routing over the record arrives (the path
    follows the torus's own links, twists included) in exactly the BFS distance."""
    for config in _instances():
        every = all_pairs_distances(config)
        for source in config.nodes():
            distances = every[source]
            for destination in config.nodes():
                hops = routing_path(config, source, destination)
                assert len(hops) == distances[destination], (config.label(), source,
                                                              destination)
                assert [dim for _, dim, _ in hops] == sorted(dim for _, dim, _ in hops)


def test_8x4_twisted_record_takes_the_twist():
    """8 x 4 with t_YX = 4: from (0, 0) to (4, 2) the untwisted torus needs 4 + 2 = 6 hops.
    Going down in Y from row 0 crosses the twisted periphery, which lands 4 columns over: two
    hops down (row 0 -> 3 -> 2) reach (4, 2) with no hop in X, so the record is (0, -2)."""
    config = TwistedTorusTopology((8, 4), {"YX": 4})
    assert routing_record(config, (0, 0), (4, 2)) == (0, -2)
    assert routing_record(TwistedTorusTopology((8, 4)), (0, 0), (4, 2)) == (4, 2)


def test_routing_needs_node_symmetry():
    config = TwistedTorusTopology((4, 4), {"XY": -1, "YX": 1})
    with pytest.raises(ValueError, match="not node-symmetric \\(004's Theorem.*t_YX and t_XY"):
        routing_record(config, (0, 0), (1, 1))
