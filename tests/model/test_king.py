"""King and diagonal networks against 002 figures (§2, Tables 1 and 3), formulas and hand
counts."""

import math
import random

import pytest

from twinnet.model.king import (
    KINDS,
    PORT_VECTORS,
    PORTS,
    KingTopology,
    bfs_distances,
    bisection_channel_count,
    broadcast_deliveries,
    broadcast_ttl,
    diagonal_mesh_record,
    diagonal_torus_candidates,
    diagonal_torus_record,
    distance,
    distance_summary,
    escape_channels,
    escape_dependency_graph,
    escape_port,
    graded_vector,
    knaive_record,
    minimal_path_counts,
    profitable_vector,
    record_displacement,
    record_length,
    record_ports,
    ring_of,
    routing_path,
    routing_record,
)

DIAGONAL_PORTS = {"z+", "z-", "t+", "t-"}


def reaches(config, source, record, destination) -> bool:
    """Following ``record`` from ``source`` ends on ``destination`` (mod side on a torus)."""
    dx, dy = record_displacement(record)
    x, y = source[0] + dx, source[1] + dy
    if config.wrap:
        x, y = x % config.side, y % config.side
    return (x, y) == destination


# --- distances -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind, expected", [("T", 8.000), ("DT", 6.211), ("KT", 5.344)])
def test_average_distance_of_side_16_tori(kind, expected):
    assert distance_summary(KingTopology(kind, 16)).average_distance == pytest.approx(
        expected, abs=0.001)


def test_torus_shortcut_matches_all_sources():
    config = KingTopology("DT", 7)
    total = sum(sum(bfs_distances(config, n).values()) for n in config.nodes())
    assert distance_summary(config).distance_sum == total


@pytest.mark.parametrize("side", range(8, 18))
def test_king_torus_diameter_is_half_the_side(side):
    assert distance_summary(KingTopology("KT", side)).diameter == side // 2


def test_mesh_diameters():
    # M: 2(s-1); DM: 2(s-1) across the anti-diagonal; KM: s-1.
    assert [distance_summary(KingTopology(k, 6)).diameter for k in ("M", "DM", "KM")] == [10, 10, 5]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("side", [5, 6])
def test_closed_form_distance_equals_bfs(kind, side):
    config = KingTopology(kind, side)
    for a in config.nodes():
        bfs = bfs_distances(config, a)
        assert all(distance(config, a, b) == bfs[b] for b in config.nodes()), a


@pytest.mark.parametrize("side", [4, 6, 8, 16])
def test_channels_across_the_middle_cut(side):
    s = side
    expected = dict(T=4 * s, DT=8 * s, KT=12 * s, M=2 * s, DM=4 * s - 2, KM=6 * s - 4)
    assert {k: bisection_channel_count(KingTopology(k, s)) for k in KINDS} == expected


# --- minimal path counts -------------------------------------------------------------------------

def trinomial(n: int, m: int) -> int:
    return sum((-1) ** j * math.comb(n, j) * math.comb(2 * n - 2 * j, n - m - j)
               for j in range(n + 1) if n - m - j >= 0)


def test_trinomial_reference_values():
    # Coefficients of (1 + x + x²)^n, m away from the centre: central ones 1, 1, 3, 7, 19;
    # (1 + x + x²)² = 1 + 2x + 3x² + 2x³ + x⁴. 002 §3.3.1 counts 7 minimal king paths from
    # (0,0) to (3,0).
    assert [trinomial(n, 0) for n in range(5)] == [1, 1, 3, 7, 19]
    assert (trinomial(2, 1), trinomial(2, 2), trinomial(3, 3)) == (2, 1, 1)


def test_mesh_path_counts_are_binomial():
    config = KingTopology("M", 8)
    for a in config.nodes():
        counts = minimal_path_counts(config, a)
        for b in config.nodes():
            dx, dy = abs(b[0] - a[0]), abs(b[1] - a[1])
            assert counts[b] == math.comb(dx + dy, dx), (a, b)


def test_diagonal_mesh_path_counts():
    config = KingTopology("DM", 8)
    for a in config.nodes():
        counts = minimal_path_counts(config, a)
        for b in config.nodes():
            dx, dy = b[0] - a[0], b[1] - a[1]
            if dx * dy > 0:
                expected = math.comb(max(abs(dx), abs(dy)), min(abs(dx), abs(dy)))
            else:
                expected = math.comb(abs(dx) + abs(dy), abs(dx))
            assert counts[b] == expected, (a, b)


def test_king_torus_path_counts_are_trinomial():
    config = KingTopology("KT", 15)
    counts = minimal_path_counts(config, (0, 0))
    for x, y in config.nodes():
        dx, dy = min(x, 15 - x), min(y, 15 - y)
        assert counts[x, y] == trinomial(max(dx, dy), min(dx, dy)), (x, y)


# --- routing records -----------------------------------------------------------------------------

def test_diagonal_mesh_records_by_hand():
    assert diagonal_mesh_record(5, 2) == (3, 0, 2)
    assert diagonal_mesh_record(-2, -5) == (0, -3, -2)
    assert diagonal_mesh_record(3, -2) == (3, -2, 0)


def test_knaive_records_by_hand():
    assert knaive_record(5, 2) == (3, 0, 2, 0)  # 002 Fig. 5(d)
    assert knaive_record(3, 0) == (3, 0, 0, 0)  # 002 Fig. 5(a)
    assert knaive_record(4, -1) == (3, 0, 0, -1)
    assert knaive_record(-1, 4) == (0, 3, 0, 1)


@pytest.mark.parametrize("kind, side", [("DM", 7), ("DT", 7), ("DT", 8), ("KM", 6),
                                        ("KT", 7), ("KT", 8), ("M", 5), ("T", 6)])
def test_records_are_minimal_and_arrive(kind, side):
    config = KingTopology(kind, side)
    for a in config.nodes():
        bfs = bfs_distances(config, a)
        for b in config.nodes():
            record = routing_record(config, a, b)
            assert record_length(record) == bfs[b], (a, b, record)
            assert reaches(config, a, record, b), (a, b, record)
            assert sum(1 for c in record if c) <= 2


def test_diagonal_torus_ties_expose_every_shortest_image():
    config = KingTopology("DT", 8)
    tied = 0
    for a in [(0, 0), (3, 5)]:
        for b in config.nodes():
            candidates = diagonal_torus_candidates(8, a, b)
            tied += len(candidates) > 1
            for record in candidates:
                assert record_length(record) == distance(config, a, b)
                assert reaches(config, a, record, b)
    assert tied > 0
    # (0,0) → (4,4): the images (4,4) and (-4,-4) are both 4 z hops away.
    assert set(diagonal_torus_candidates(8, (0, 0), (4, 4))) == {(0, 0, 4), (0, 0, -4)}


def test_diagonal_torus_tie_break_replays_with_a_seed():
    def picks(seed):
        rng = random.Random(seed)
        return [diagonal_torus_record(8, (0, 0), (4, 4), rng) for _ in range(40)]
    assert picks(1) == picks(1)
    assert set(picks(1)) == {(0, 0, 4), (0, 0, -4)}
    assert diagonal_torus_record(8, (0, 0), (4, 4)) == (0, 0, 4)


# --- hop-by-hop ----------------------------------------------------------------------------------

@pytest.mark.parametrize("side", [8, 9])
def test_profitable_ports_always_lead_one_hop_closer(side):
    config = KingTopology("KT", side)
    rng = random.Random(side)
    for b in config.nodes():
        bfs = bfs_distances(config, b)  # symmetric graph: distances to b
        for a in config.nodes():
            vector = profitable_vector(config, a, b)
            closer = [int(bfs[config.neighbor(a, p)] == bfs[a] - 1) for p in PORTS]
            assert list(vector) == closer, (a, b)
            node, hops = a, 0
            while node != b:
                ports = [p for p, v in zip(PORTS, profitable_vector(config, node, b)) if v]
                node = config.neighbor(node, rng.choice(ports))
                hops += 1
            assert hops == bfs[a]


@pytest.mark.parametrize("kind, side", [("KM", 6), ("KT", 7), ("KT", 8)])
def test_grades_and_the_escape_port(kind, side):
    config = KingTopology(kind, side)
    for a in config.nodes():
        for b in config.nodes():
            grades = graded_vector(config, a, b)
            profitable = profitable_vector(config, a, b)
            assert [g > 0 for g in grades] == [p == 1 for p in profitable]
            port = escape_port(config, a, b)
            if a == b:
                assert port is None and not any(grades)
                continue
            assert grades[PORTS.index(port)] == 1
            assert port == next(p for p, g in zip(PORTS, grades) if g == 1)
            dx, dy = config.offset(a, b)
            for p, g in zip(PORTS, grades):
                if g == 2 and p not in DIAGONAL_PORTS:
                    # Only at a torus tie: the axis offset is exactly side/2 and the positive
                    # tie rule sends Knaive the other way.
                    axis = dx if p[0] == "x" else dy
                    assert config.wrap and side % 2 == 0 and abs(axis) == side // 2, (a, b, p)


def shortest_ring_offsets(side: int, a: int, b: int) -> list[int]:
    """Every signed offset of least magnitude from ``a`` to ``b`` round a ring of ``side``,
    from the two images ``(b - a) mod side`` and that less ``side``."""
    images = [(b - a) % side, (b - a) % side - side]
    least = min(map(abs, images))
    return sorted({image for image in images if abs(image) == least})


@pytest.mark.parametrize("side", [4, 6, 8])
def test_both_ties_grade_the_knaive_ports_of_every_shortest_offset(side):
    """With both ties, grade 1 is every profitable port of the Knaive record of some shortest
    offset (both ways round a ring at side/2), the escape port stays the first grade-1 port
    (the positive tie's Knaive move), and grading differs from the positive tie's only where
    a tie is."""
    config = KingTopology("KT", side)
    differ = 0
    for a in config.nodes():
        for b in config.nodes():
            xs = shortest_ring_offsets(side, a[0], b[0])
            ys = shortest_ring_offsets(side, a[1], b[1])
            knaive = {p for ox in xs for oy in ys for p in record_ports(knaive_record(ox, oy))}
            grades = graded_vector(config, a, b, both_ties=True)
            assert grades == tuple(0 if not good else 1 if p in knaive else 2
                                   for p, good in zip(PORTS, profitable_vector(config, a, b)))
            if a != b:
                assert escape_port(config, a, b) == next(p for p, g in zip(PORTS, grades)
                                                         if g == 1)
            if grades != graded_vector(config, a, b):
                differ += 1
                assert len(xs) == 2 or len(ys) == 2, (a, b)
    assert differ > 0


def test_both_ties_by_hand():
    # KT4, (0,0) → (2,1): dx = 2 is a tie. Profitable: x+ (1,0), x- (3,0), z+ (1,1), t+ (3,1),
    # each 1 away. Knaive of (+2, 1): x+ and z+; of (-2, 1): opposite signs, x- and t+.
    config = KingTopology("KT", 4)
    first = dict(zip(PORTS, graded_vector(config, (0, 0), (2, 1))))
    both = dict(zip(PORTS, graded_vector(config, (0, 0), (2, 1), both_ties=True)))
    assert first == {"x+": 1, "x-": 2, "y+": 0, "y-": 0, "z+": 1, "z-": 0, "t+": 2, "t-": 0}
    assert both == {"x+": 1, "x-": 1, "y+": 0, "y-": 0, "z+": 1, "z-": 0, "t+": 1, "t-": 0}


def test_grade_2_on_a_mesh_is_only_for_diagonals():
    config = KingTopology("KM", 5)
    # (0,0) → (3,0): Knaive's record is (3,0,0,0), so x+ is 1; z+ reaches (1,1), 2 away, so
    # it is 2; t- would leave the mesh, so 0.
    grades = dict(zip(PORTS, graded_vector(config, (0, 0), (3, 0))))
    assert grades == {"x+": 1, "x-": 0, "y+": 0, "y-": 0, "z+": 2, "z-": 0, "t+": 0, "t-": 0}
    grades = dict(zip(PORTS, graded_vector(config, (2, 2), (4, 2))))
    assert grades["x+"] == 1 and grades["z+"] == 2 and grades["t-"] == 2


# --- escape-network deadlock ---------------------------------------------------------------------

def test_mesh_escape_is_acyclic_on_one_vc():
    assert escape_dependency_graph(KingTopology("KM", 6), "plain").find_cycle() is None


@pytest.mark.parametrize("side", [4, 5, 6])
def test_plain_torus_escape_has_a_ring_cycle(side):
    config = KingTopology("KT", side)
    graph = escape_dependency_graph(config, "plain")
    cycle = graph.find_cycle()
    assert cycle is not None and graph.is_cycle(cycle)
    assert len({ring_of(config, node, port) for node, port in cycle}) == 1
    assert len(cycle) == side


@pytest.mark.parametrize("side", [4, 5, 6])
@pytest.mark.parametrize("scheme", ["dateline", "bubble"])
def test_dateline_and_bubble_escape_are_acyclic(side, scheme):
    assert escape_dependency_graph(KingTopology("KT", side), scheme).find_cycle() is None


def test_dateline_moves_to_vc1_after_the_wrap():
    config = KingTopology("KT", 8)
    # (6,0) → (1,0): x+ three hops, wrapping between x = 7 and x = 0.
    assert escape_channels(config, (6, 0), (1, 0), "dateline") == [
        ((6, 0), "x+", 0), ((7, 0), "x+", 0), ((0, 0), "x+", 1)]
    # The bubble view keeps one entry per ring entered.
    # (6,0) → (1,2): Δ = (3, 2), Knaive (1, 0, 2, 0): x+ to (7,0), then the z+ ring with
    # y − x ≡ 1.
    assert escape_channels(config, (6, 0), (1, 2), "bubble") == [("x+", 0), ("z+", 1)]


# --- broadcast -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["KM", "KT"])
@pytest.mark.parametrize("side", range(3, 11))
def test_broadcast_reaches_every_node_exactly_once(kind, side):
    config = KingTopology(kind, side)
    for source in config.nodes():
        received = broadcast_deliveries(config, source)
        assert received[source] == 0
        assert all(received[n] == 1 for n in config.nodes() if n != source), source
        assert sum(received.values()) == config.node_count - 1


def test_even_torus_without_the_rule_duplicates_at_half_the_side():
    config = KingTopology("KT", 6)
    received = broadcast_deliveries(config, (0, 0), even_side_rule=False)
    duplicated = {n for n, c in received.items() if c > 1}
    assert duplicated and all(distance(config, (0, 0), n) == 3 for n in duplicated)


def test_broadcast_ttl_values():
    assert broadcast_ttl(KingTopology("KM", 7), (1, 5), "x+") == 5  # max(1, 5, 5, 1)
    assert broadcast_ttl(KingTopology("KT", 7), (1, 5), "x-") == 3
    assert broadcast_ttl(KingTopology("KT", 8), (0, 0), "x+") == 4
    ports = ("x-", "y-", "z-", "t+", "t-", "y+", "z+")
    ttls = [broadcast_ttl(KingTopology("KT", 8), (0, 0), p) for p in ports]
    assert ttls == [3] * 5 + [4] * 2


# --- ports and errors ----------------------------------------------------------------------------

def test_ports_per_kind():
    assert KingTopology("M", 4).ports == ("x+", "x-", "y+", "y-")
    assert KingTopology("DT", 4).ports == ("x+", "x-", "y+", "y-", "z+", "z-")
    assert len(KingTopology("KM", 4).ports) == 8
    assert PORT_VECTORS["t+"] == (-1, 1)
    assert KingTopology("KM", 3).neighbor((0, 0), "t+") is None
    assert KingTopology("KT", 3).neighbor((0, 0), "t+") == (2, 1)


def test_bad_parameters():
    with pytest.raises(ValueError, match="side must be an integer >= 2, not 1"):
        KingTopology("KT", 1)
    with pytest.raises(TypeError, match="side must be an integer, not 8.0"):
        KingTopology("KT", 8.0)
    with pytest.raises(ValueError, match="kind must be one of 'M', 'DM', 'KM', 'T', 'DT', 'KT', "
                                         "not 'XT'"):
        KingTopology("XT", 8)
    with pytest.raises(ValueError, match="broadcast needs a king network .*not DT"):
        broadcast_deliveries(KingTopology("DT", 4), (0, 0))
    with pytest.raises(ValueError, match="source x must be from 0 to 3, not 4"):
        bfs_distances(KingTopology("T", 4), (4, 0))
    with pytest.raises(ValueError, match="scheme must be one of 'plain', 'dateline', 'bubble'"):
        escape_channels(KingTopology("KT", 4), (0, 0), (1, 1), "vc")


@pytest.mark.parametrize("kind", KINDS)
def test_routing_paths_are_minimal_and_go_forward_in_vector_order(kind):
    """The deterministic routing of the RTL (the record recomputed at every router, its first
    port in vector order): for every pair at sides 3 to 9 the path arrives in exactly the
    BFS distance and its ports never go back in vector order (so each ring is entered at
    most once, which the bubble and the mesh's acyclicity rely on)."""
    for side in range(3, 10):
        config = KingTopology(kind, side)
        for source in config.nodes():
            distances = bfs_distances(config, source)
            for destination in config.nodes():
                hops = routing_path(config, source, destination)
                assert len(hops) == distances[destination], (side, source, destination)
                order = [PORTS.index(port) for _, port in hops]
                assert order == sorted(order), (side, source, destination, hops)
