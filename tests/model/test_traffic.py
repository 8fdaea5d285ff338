"""Traffic patterns of :mod:`twinnet.model.traffic`, against values worked out by hand."""

import pytest

from twinnet.model.traffic import (
    FIXED,
    destination_distribution,
    fixed_destination,
    random_permutation,
    throughput_bound,
)


@pytest.mark.parametrize("pattern, source, expected", [
    # P = 16, b = 4 bits.
    ("bit-complement", 0, 15), ("bit-complement", 5, 10),       # 0101 -> 1010
    ("transpose", 1, 4), ("transpose", 6, 9),                    # 01|10 -> 10|01
    ("bit-reverse", 1, 8), ("bit-reverse", 3, 12),               # 0011 -> 1100
    ("shuffle", 1, 2), ("shuffle", 8, 1), ("shuffle", 9, 3),     # rotate left
    ("tornado", 0, 7), ("tornado", 12, 3),                       # s + 8 - 1 mod 16
    ("neighbor", 15, 0),
])
def test_patterns_on_sixteen_terminals(pattern, source, expected):
    assert fixed_destination(pattern, 16, source) == expected


@pytest.mark.parametrize("pattern", ["bit-complement", "transpose", "bit-reverse", "shuffle",
                                     "tornado", "neighbor"])
def test_power_of_two_patterns_are_permutations(pattern):
    for terminals in (2, 8, 16, 64):
        images = [fixed_destination(pattern, terminals, s) for s in range(terminals)]
        sent = [d for d in images if d is not None]
        assert len(set(sent)) == len(sent)  # no terminal receives from two sources
        # A terminal maps to itself only where the bit pattern says so (e.g. 0 under shuffle).
        assert all(d is None or d != s for s, d in enumerate(images))


def test_self_destinations_send_nothing():
    assert fixed_destination("transpose", 16, 5) is None  # 01|01 is its own transpose
    assert fixed_destination("shuffle", 16, 0) is None
    assert fixed_destination("shuffle", 16, 15) is None


def test_other_sizes():
    # P = 12, b = 4: the complement stays a permutation (11 - s); a bit-reversed 3 (0011) is
    # 12 (1100), which is reduced to 0.
    assert [fixed_destination("bit-complement", 12, s) for s in (0, 11)] == [11, 0]
    assert fixed_destination("bit-reverse", 12, 3) == 0
    assert fixed_destination("tornado", 5, 0) == 2  # ceil(5/2) - 1 = 2


def test_random_permutation_is_a_derangement_fixed_by_its_seed():
    first = random_permutation(50, seed=3)
    assert sorted(first) == list(range(50))
    assert all(d != s for s, d in enumerate(first))
    assert random_permutation(50, seed=3) == first != random_permutation(50, seed=4)


def test_distributions():
    uniform = destination_distribution("uniform", 5, 2)
    assert uniform == {0: 0.25, 1: 0.25, 3: 0.25, 4: 0.25}
    hot = destination_distribution("hotspot", 5, 2, hotspot=0, hotspot_fraction=0.2)
    assert hot[0] == pytest.approx(0.2 + 0.8 / 4) and hot[1] == pytest.approx(0.2)
    assert sum(hot.values()) == pytest.approx(1)
    with pytest.raises(ValueError, match="pattern must be one of"):
        fixed_destination("uniform", 4, 0)
    assert set(FIXED) == {"transpose", "bit-complement", "bit-reverse", "shuffle", "tornado",
                          "neighbor", "random-permutation"}


def test_throughput_bound_of_a_ring():
    """A unidirectional ring of 4 terminals, each packet over the links from s to d: under
    uniform traffic the mean path is (1 + 2 + 3) / 3 = 2 links, so each of the 4 links carries
    4 * 2 / 4 = 2 packets per cycle per unit rate: the bound is 1/2. Neighbor traffic loads
    each link once: bound 1."""
    def paths(s, d):
        return [(s + i) % 4 for i in range((d - s) % 4)]

    assert throughput_bound(paths, 4, "uniform") == pytest.approx(0.5)
    assert throughput_bound(paths, 4, "neighbor") == pytest.approx(1.0)


def test_balanced_bound_is_the_mean_channel_load():
    """Under uniform traffic on a 4-ring with one path per pair, clockwise (distances 1, 2, 3
    from each node): the busiest channel carries the mean load, 4 x 6/3 / 4 = 2 packets per
    unit rate, both ways; a lopsided routing that sends everything one way around a 3-ring
    but uses only 2 of its 3 channels is bounded by the mean over the channels it uses."""
    def ring(source, destination):
        return [(node % 4, "+") for node in range(source, source + (destination - source) % 4)]

    assert throughput_bound(ring, 4, "uniform") == pytest.approx(0.5)
    assert throughput_bound(ring, 4, "uniform", balanced=True) == pytest.approx(0.5)

    def lopsided(source, destination):
        return [("a",)] if destination == 0 else [("b",)]

    # Loads: channel a carries 2 x 1/2 = 1, b carries 1 + 1/2 + 1/2 = 2; mean 1.5.
    assert throughput_bound(lopsided, 3, "uniform") == pytest.approx(0.5)
    assert throughput_bound(lopsided, 3, "uniform", balanced=True) == pytest.approx(2 / 3)
