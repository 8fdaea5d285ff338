"""The twisted-torus network model: per-router routing, the escape schemes' deadlock verdicts,
and the configuration's errors."""

import pytest

from twinnet.model.twist import TwistedTorusTopology, routing_path, routing_record
from twinnet.model.twisted_network import (
    TwistedNetworkConfig,
    dependency_graph,
    parse_twists,
    router_hops,
)

INSTANCES = [((8, 4), {"YX": 4}), ((8, 4), {}), ((6, 3), {"YX": 3}), ((5, 4), {"XY": 3}),
             ((2, 7), {"XY": 3}), ((4, 4, 2), {"ZX": 2}), ((3, 3, 3), {"ZX": 1, "ZY": 2})]


@pytest.mark.parametrize("radices, twists", INSTANCES)
def test_recomputing_the_record_at_every_router_gives_the_source_path(radices, twists):
    """What the RTL does (each router takes the first dimension of the record from where it
    is) follows exactly the dimension-order path of the source's record, for every pair."""
    config = TwistedTorusTopology(radices, twists)
    for source in config.nodes():
        for destination in config.nodes():
            node, hops = source, []
            while node != destination:
                record = routing_record(config, node, destination)
                dim = next(i for i, hops_left in enumerate(record) if hops_left)
                sign = 1 if record[dim] > 0 else -1
                hops.append((node, dim, sign))
                node = config.step(node, dim, sign)
            assert hops == routing_path(config, source, destination)


@pytest.mark.parametrize("radices, twists", INSTANCES)
def test_bubble_and_dateline_are_acyclic_and_one_vc_is_not(radices, twists):
    for escape, free in (("bubble", True), ("dateline", True), ("none", False)):
        network = TwistedNetworkConfig.from_dict({"radices": list(radices), "twists": twists,
                                             "escape": escape})
        assert (dependency_graph(network).find_cycle() is None) == free, escape


def test_dateline_vcs_on_8x4():
    """8x4 with t_YX = 4, from node (0, 1) (terminal 8) to (4, 3) (terminal 28): the record is
    (0, -2): down from row 1 to row 0 on VC 0, then across the twisted periphery (row 0 ->
    row 3, four columns over) on VC 0, arriving at (4, 3); a third hop would be on VC 1."""
    network = TwistedNetworkConfig.from_dict({"radices": [8, 4], "twists": "YX=4",
                                         "escape": "dateline"})
    assert router_hops(network, 8, 28) == [("0,1", "Y-", 0), ("0,0", "Y-", 0)]
    # (0, 0) -> (4, 2): Y- across the periphery to (4, 3), then Y- on VC 1 to (4, 2).
    assert router_hops(network, 0, 20) == [("0,0", "Y-", 0), ("4,3", "Y-", 1)]


def test_parse_twists_and_errors():
    assert parse_twists("YX=4, ZX=-1", 3) == {"YX": 4, "ZX": -1}
    for text, message in [("YX", "such as YX=4"), ("YX=٣", "such as YX=4"),
                          ("YX=1,YX=2", "given twice"), ("QQ=1", "must name two dimensions")]:
        with pytest.raises(ValueError, match=message):
            parse_twists(text, 2)
    with pytest.raises(ValueError, match="not node-symmetric \\(004's Theorem: dimension Y"):
        TwistedNetworkConfig.from_dict({"radices": [4, 4], "twists": "XY=-1,YX=1"})
    with pytest.raises(ValueError, match="must have 2 or 3 dimensions, not 1"):
        TwistedNetworkConfig.from_dict({"radices": [4]})
    with pytest.raises(ValueError, match="at most 1024"):
        TwistedNetworkConfig.from_dict({"radices": [32, 32, 2]})


@pytest.mark.parametrize("radices, twists", INSTANCES[:3] + INSTANCES[-2:])
def test_several_vcs_per_link_stay_acyclic(radices, twists):
    for escape, vcs in (("bubble", 3), ("dateline", 4)):
        network = TwistedNetworkConfig.from_dict({"radices": list(radices), "twists": twists,
                                                  "escape": escape, "vcs": vcs})
        single = TwistedNetworkConfig.from_dict({"radices": list(radices), "twists": twists,
                                                 "escape": escape})
        graph, one = dependency_graph(network), dependency_graph(single)
        assert graph.find_cycle() is None, escape
        # Every channel of the scheme, once per copy.
        assert graph.channel_count == one.channel_count * vcs // single.vc_count


def test_copies_of_a_dependency_graph():
    from twinnet.model.deadlock import ChannelDependencyGraph

    graph = ChannelDependencyGraph.from_paths([("a", "b", "c")])
    # a -> b stays within its copy, b -> c may change copies.
    copied = graph.copies(2, lambda held, requested: (held, requested) == ("a", "b"))
    assert copied.edges == {("a", 0): {("b", 0)}, ("a", 1): {("b", 1)},
                            ("b", 0): {("c", 0), ("c", 1)}, ("b", 1): {("c", 0), ("c", 1)},
                            ("c", 0): set(), ("c", 1): set()}
    cyclic = ChannelDependencyGraph.from_paths([("a", "b", "a")])
    assert cyclic.copies(3, lambda *_: True).find_cycle() is not None


def test_vcs_per_link():
    def config(**values):
        return TwistedNetworkConfig.from_dict({"radices": [8, 4], "twists": "YX=4", **values})

    assert config().vc_count == 1 and config(escape="dateline").vc_count == 2
    assert config().in_order and config(vcs=1).name == config().name
    assert config(vcs=3).vc_count == 3 and not config(vcs=3).in_order
    assert config(vcs=3).name == "twisted_8x4_tyx4_bubble_v3"
    assert config(escape="dateline", vcs=6).name == "twisted_8x4_tyx4_dateline_v6"
    for values, message in [({"vcs": 0}, "vcs must be an integer from 1 to 8, not 0"),
                            ({"vcs": 9}, "vcs must be an integer from 1 to 8, not 9"),
                            ({"escape": "dateline", "vcs": 1}, "from 2 to 8, not 1"),
                            ({"escape": "dateline", "vcs": 3}, "vcs 3: the dateline takes VCs "
                                                              "in pairs"),
                            ({"escape": "none", "vcs": 2}, "vcs 2: escape none uses exactly 1")]:
        with pytest.raises(ValueError, match=message):
            config(**values)


def test_pes_per_router():
    from twinnet.families import family

    network = TwistedNetworkConfig.from_dict({"radices": [8, 4], "twists": "YX=4",
                                              "pe_ports": 3, "vcs": 2})
    # Terminal t = pe + 3 * (x + 8 y).
    assert network.terminal_count == 96
    assert (network.node_of(29), network.pe_of(29)) == ((1, 1), 2)
    assert network.name == "twisted_8x4_tyx4_bubble_p3_v2"
    # x: 3 bits, y: 2, pe: 2, source: 7 (96 terminals).
    assert (network.pe_width, network.header_width) == (2, 3 + 2 + 2 + 7)
    twisted = family("twisted")
    assert twisted.destination(network, 29) == {"route.o0": 1, "route.o1": 1, "route.pe": 2}
    assert twisted.terminal_digits(network) == [("route.pe", 3), ("route.o0", 8),
                                                ("route.o1", 4)]
    assert twisted.terminal_label(network, 29) == "1,1/pe2"
    # Terminals of one router are zero hops apart; others take the routers' path.
    assert router_hops(network, 27, 29) == []
    assert router_hops(network, 0, 29) == router_hops(
        TwistedNetworkConfig.from_dict({"radices": [8, 4], "twists": "YX=4"}), 0, 9)
    with pytest.raises(ValueError, match="pe_ports must be an integer from 1 to 8, not 9"):
        TwistedNetworkConfig.from_dict({"radices": [8, 4], "pe_ports": 9})


def test_copies_keep_their_set_within_a_dimension():
    """8x4 (t_YX = 4), dateline, 4 VCs (two copies): a dependency within a dimension stays in
    its copy, one into a new dimension reaches both."""
    network = TwistedNetworkConfig.from_dict({"radices": [8, 4], "twists": "YX=4",
                                              "escape": "dateline", "vcs": 4})
    graph = dependency_graph(network)
    turns = 0
    for (held, copy), targets in graph.edges.items():
        for requested, other in targets:
            if held[1:3] == requested[1:3]:  # (dim, sign): straight on
                assert other == copy, (held, copy, requested, other)
            else:
                turns += 1
                assert {(requested, 0), (requested, 1)} <= targets
    assert turns


def test_path_error_with_several_vcs():
    from twinnet.families import family

    twisted = family("twisted")
    dateline = TwistedNetworkConfig.from_dict({"radices": [8, 4], "twists": "YX=4",
                                               "escape": "dateline", "vcs": 4})
    # (0, 0) -> (4, 2): across the periphery on VC 0, then VC 1 (test_dateline_vcs_on_8x4).
    assert router_hops(dateline, 0, 20) == [("0,0", "Y-", 0), ("4,3", "Y-", 1)]
    assert twisted.path_error(dateline, 0, 20, [("0,0", "Y-", 2), ("4,3", "Y-", 3)]) is None
    for hops in ([("0,0", "Y-", 0), ("4,3", "Y-", 3)],   # changes copy going straight on
                 [("0,0", "Y-", 1), ("4,3", "Y-", 1)],   # the dateline's VC 1 too early
                 [("0,0", "Y-", 4), ("4,3", "Y-", 5)],   # no such VC
                 [("0,0", "Y-", 0)]):                    # a hop short
        assert twisted.path_error(dateline, 0, 20, hops) is not None, hops
    bubble = TwistedNetworkConfig.from_dict({"radices": [8, 4], "twists": "YX=4", "vcs": 3})
    # (0, 0) -> (2, 1): X+ twice, then Y+.
    assert [hop[:2] for hop in router_hops(bubble, 0, 10)] == [("0,0", "X+"), ("1,0", "X+"),
                                                               ("2,0", "Y+")]
    assert twisted.path_error(bubble, 0, 10, [("0,0", "X+", 1), ("1,0", "X+", 1),
                                              ("2,0", "Y+", 2)]) is None  # a turn may change
    assert twisted.path_error(bubble, 0, 10, [("0,0", "X+", 1), ("1,0", "X+", 2),
                                              ("2,0", "Y+", 2)]) is not None
    assert twisted.path_error(bubble, 0, 10, [("0,0", "X+", 0), ("1,0", "Y+", 0),
                                              ("2,0", "Y+", 0)]) is not None  # wrong link
