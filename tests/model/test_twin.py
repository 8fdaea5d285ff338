"""Twin-torus configurations, addressing and wiring; every bad parameter's message."""

import pytest

from twinnet.model.twin import (
    INTERNAL,
    Card,
    Port,
    PortConfiguration,
    TwinTorusTopology,
    parse_pe,
)


def test_named_configurations_from_table_1():
    d = PortConfiguration.named("D")
    assert [str(p) for p in d.ports_of(0)] == ["X+", "X-", "Y+"]
    assert [str(p) for p in d.ports_of(1)] == ["Y-", "Z+", "Z-"]
    assert d.split_dims == (1,)
    assert PortConfiguration.named("A").split_dims == (0, 1, 2)


def test_c_best_for_n3_is_g():
    assert PortConfiguration.c_best(3).card0 == PortConfiguration.named("G").card0


@pytest.mark.parametrize("n, card0", [
    (2, "X+ X-"), (4, "X+ X- Y+ Y-"), (5, "X+ X- Y+ Y- Z-"),
])
def test_c_best_layout(n, card0):
    assert " ".join(str(p) for p in PortConfiguration.c_best(n).ports_of(0)) == card0


def test_wiring_plus_port_meets_minus_port_of_next_node():
    config = TwinTorusTopology.uniform(3, 4, "D")
    # X+ of node (3,0,0) on card 0 wraps to node (0,0,0), arriving on X- (card 0 in D).
    assert config.link_target(Card((3, 0, 0), 0), Port.parse("X+", 3)) == \
        (Card((0, 0, 0), 0), Port.parse("X-", 3))
    # Y+ (card 0) arrives on Y- of the next node, which sits on card 1.
    assert config.link_target(Card((0, 1, 0), 0), Port.parse("Y+", 3)) == \
        (Card((0, 2, 0), 1), Port.parse("Y-", 3))
    assert config.link_target(Card((0, 1, 0), 0), INTERNAL) == (Card((0, 1, 0), 1), INTERNAL)


def test_counts_and_names():
    config = TwinTorusTopology((4, 4, 2), "D", "bubble")
    assert (config.node_count, config.pe_count) == (32, 64)
    assert config.name == "ndt3_4x4x2_D_bubble"
    assert TwinTorusTopology.uniform(3, 4, "D", "vc").name == "ndt3_k4_D_vc"
    assert TwinTorusTopology.uniform(3, 4, "X+,Y-,Z+").name == "ndt3_k4_XpYmZp_bubble"
    assert TwinTorusTopology.uniform(3, 4).name == "ndt3_k4_D_bubble"  # the one default
    assert TwinTorusTopology.uniform(2, 4).name == "ndt2_k4_C_Best_bubble"
    pes = list(config.pes())
    assert [config.pe_index(p) for p in pes] == list(range(64))


def test_parse_pe():
    assert parse_pe("0,1,2:1") == ((0, 1, 2), 1)
    assert parse_pe("3,3") == ((3, 3), 0)
    with pytest.raises(ValueError, match=r"PE address 'a,b' must look like 'x,y,z:pe'"):
        parse_pe("a,b")


@pytest.mark.parametrize("build, error, message", [
    (lambda: TwinTorusTopology.uniform(3, 1), ValueError, r"k must be an integer >= 2, not 1"),
    (lambda: TwinTorusTopology.uniform(1, 4), ValueError, r"n must be an integer >= 2, not 1"),
    (lambda: TwinTorusTopology((4,), "C_Best"), ValueError, r"n must be an integer >= 2, not 1"),
    (lambda: TwinTorusTopology((4, 1, 4), "D"), ValueError,
     r"k must be an integer >= 2, not 1 \(dimension 1\)"),
    (lambda: TwinTorusTopology.uniform(3, 2.5), TypeError, r"k must be an integer, not 2.5"),
    (lambda: TwinTorusTopology(4), TypeError, r"radices must be a sequence of integers"),
    (lambda: TwinTorusTopology.uniform(3, 4, "Q"), ValueError,
     r"configuration 'Q' is not one of A–J, C_Best, torus or a card-0 port list"),
    (lambda: PortConfiguration.named("Q"), ValueError,
     r"configuration must be one of 'A', .*'J', not 'Q'"),
    (lambda: TwinTorusTopology.uniform(4, 4, "D"), ValueError,
     r"configuration 'D' is a 3DT configuration; it needs n=3, not n=4"),
    (lambda: TwinTorusTopology.uniform(3, 4, "X+,Y+"), ValueError,
     r"card-0 port list must hold exactly n=3 of the 6 external ports \(or all 6 for a plain "
     r"torus\), not 2"),
    (lambda: TwinTorusTopology.uniform(3, 4, "X+,X+,Y-"), ValueError,
     r"card-0 port list repeats X\+: each external port may appear once"),
    (lambda: TwinTorusTopology.uniform(3, 4, "X+,Y+,W-"), ValueError,
     r"port 'W-' must be one of the external ports of an n=3 torus: X\+, X-, Y\+, Y-, Z\+, Z-"),
    (lambda: TwinTorusTopology.uniform(3, 4, "D", "credit"), ValueError,
     r"mode must be one of 'none', 'vc', 'bubble', not 'credit'"),
    (lambda: TwinTorusTopology.uniform(3, 4).pe((0, 0, 0), 2), ValueError,
     r"pe must be one of 0, 1, not 2"),
    (lambda: TwinTorusTopology.uniform(3, 4).pe((0, 4, 0), 0), ValueError,
     r"node digit 1 must be from 0 to 3, not 4"),
    (lambda: TwinTorusTopology.uniform(3, 4).pe((0, 0), 0), ValueError,
     r"node must have 3 entries, not 2"),
])
def test_bad_parameters(build, error, message):
    with pytest.raises(error, match=message):
        build()
