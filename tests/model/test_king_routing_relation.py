"""King networks as built in RTL: VCs per routing and escape, and the relations the checks hold
a packet's path to (:func:`twinnet.model.king_network.path_error`) and a broadcast's copies to
(:func:`twinnet.model.king_network.broadcast_error`).

Expected paths are built by hand or from the model's own definitions (profitable ports, the
escape routing's port, the dateline's VC rule of 002 §3.3.3), never from the RTL.
"""

import random

import pytest

from twinnet.model.king import (
    PORTS,
    bfs_distances,
    broadcast_sends,
    profitable_vector,
    routing_port,
    wraps,
)
from twinnet.model.king_network import (
    WRAPPED_KINDS,
    KingNetworkConfig,
    broadcast_error,
    dependency_graph,
    dependency_graph_of_every_pair,
    escape_paths,
    node_label,
    path_error,
    router_hops,
    tied_ports,
)


def terminal(network: KingNetworkConfig, node) -> int:
    return network.pe_ports * (node[0] + network.topology.side * node[1])


@pytest.mark.parametrize("values, vcs, mask, name", [
    ({"kind": "KT", "side": 8}, 1, 0, "king_kt8_knaive_bubble"),
    ({"kind": "KT", "side": 8, "escape": "dateline"}, 2, 0, "king_kt8_knaive_dateline"),
    ({"kind": "KT", "side": 8, "routing": "2s"}, 2, 0b10, "king_kt8_2s_bubble"),
    ({"kind": "KT", "side": 8, "routing": "2s", "vcs": 4}, 4, 0b1110, "king_kt8_2s_bubble_v4"),
    ({"kind": "KM", "side": 5, "routing": "hop-by-hop"}, 2, 0b10, "king_km5_hop_by_hop_none"),
    ({"kind": "T", "side": 4, "routing": "hop-by-hop", "escape": "dateline"}, 3, 0b100,
     "king_t4_hop_by_hop_dateline"),
])
def test_vcs_per_routing_and_escape(values, vcs, mask, name):
    network = KingNetworkConfig.from_dict(values)
    assert (network.vc_count, network.adaptive_vc_mask, network.name) == (vcs, mask, name)
    assert network.escape_routing == {"K": "knaive", "T": "dor"}[values["kind"][0]]
    assert KingNetworkConfig.from_dict(network.to_dict()) == network


@pytest.mark.parametrize("values, message", [
    ({"kind": "T", "routing": "2s"}, "routing 2s: applies to KM and KT only, not T; T takes "
                                     "dor or hop-by-hop"),
    ({"kind": "KT", "routing": "knaive", "vcs": 2}, "vcs 2: knaive routing with escape bubble "
                                                    "uses exactly 1 VC"),
    ({"kind": "KT", "routing": "2s", "vcs": 1}, "vcs must be an integer from 2 to 8, not 1"),
    ({"kind": "KT", "routing": "2s", "escape": "dateline", "vcs": 2},
     "vcs must be an integer from 3 to 8, not 2"),
    ({"kind": "KT", "routing": "2s", "vcs": 9}, "vcs must be an integer from 2 to 8, not 9"),
])
def test_bad_vcs_and_routings(values, message):
    with pytest.raises(ValueError) as error:
        KingNetworkConfig.from_dict(values)
    assert message in str(error.value)


def test_deterministic_paths_must_be_the_models():
    network = KingNetworkConfig.from_dict({"kind": "KT", "side": 5})
    source, destination = terminal(network, (0, 0)), terminal(network, (2, 1))
    path = router_hops(network, source, destination)
    assert path == [("0,0", "x+", 0), ("1,0", "z+", 0)]  # Knaive (1, 0, 1, 0) by hand
    assert path_error(network, source, destination, path) is None
    # z+ then x+ is as short, but not the deterministic path.
    assert "model says" in path_error(network, source, destination,
                                      [("0,0", "z+", 0), ("1,1", "x+", 0)])


def test_adaptive_hops_may_take_any_profitable_port():
    network = KingNetworkConfig.from_dict({"kind": "KT", "side": 5, "routing": "2s"})
    source, destination = terminal(network, (0, 0)), terminal(network, (2, 1))
    # By hand: from 0,0 to 2,1 (offset (2, 1), two hops) x+ and z+ are profitable.
    for path in ([("0,0", "z+", 1), ("1,1", "x+", 1)], [("0,0", "x+", 1), ("1,0", "z+", 0)],
                 [("0,0", "x+", 0), ("1,0", "z+", 1)]):
        assert path_error(network, source, destination, path) is None, path
    # y+ is not profitable: (0, 1) is still two hops from (2, 1).
    error = path_error(network, source, destination, [("0,0", "y+", 1), ("0,1", "x+", 1),
                                                      ("1,1", "x+", 1)])
    assert error == "hop 1 (0,0 y+ VC 1) is not profitable; profitable ports there: x+, z+"
    # On the escape VC only the escape routing's port (Knaive: x+ first) is allowed.
    error = path_error(network, source, destination, [("0,0", "z+", 0), ("1,1", "x+", 1)])
    assert error == "hop 1 (0,0 z+ VC 0) is on an escape VC; the escape port there is x+"
    assert "leaves a router the packet is not at (1,0)" in path_error(
        network, source, destination, [("0,0", "x+", 1), ("1,1", "x+", 1)])
    assert "ends at 1,0, not at 2,1" in path_error(network, source, destination,
                                                   [("0,0", "x+", 1)])
    assert "the links have 2 VCs" in path_error(network, source, destination,
                                                [("0,0", "x+", 2), ("1,0", "z+", 1)])


def test_the_dateline_vc_follows_the_escape_ring():
    """T7 with the dateline: from 5,0 to 1,0 DOR goes x+ three times, wrapping on the second
    hop (6 → 0); the dateline moves a packet to VC 1 after the wrap only while it stays on the
    escape VCs of the ring."""
    network = KingNetworkConfig.from_dict({"kind": "T", "side": 7, "routing": "hop-by-hop",
                                      "escape": "dateline"})
    source, destination = terminal(network, (5, 0)), terminal(network, (1, 0))
    assert wraps(network.topology, (6, 0), "x+")
    good = [("5,0", "x+", 0), ("6,0", "x+", 0), ("0,0", "x+", 1)]
    assert path_error(network, source, destination, good) is None
    assert "puts it on VC 0" in path_error(network, source, destination,
                                           [("5,0", "x+", 0), ("6,0", "x+", 1),
                                            ("0,0", "x+", 1)])
    assert "puts it on VC 1" in path_error(network, source, destination,
                                           [("5,0", "x+", 0), ("6,0", "x+", 0),
                                            ("0,0", "x+", 0)])
    # After an adaptive hop that wrapped, the escape ring is entered afresh on VC 0.
    assert path_error(network, source, destination,
                      [("5,0", "x+", 0), ("6,0", "x+", 2), ("0,0", "x+", 0)]) is None
    assert "puts it on VC 0" in path_error(network, source, destination,
                                           [("5,0", "x+", 0), ("6,0", "x+", 2),
                                            ("0,0", "x+", 1)])


@pytest.mark.parametrize("kind, routing", [("KT", "2s"), ("KM", "2s"), ("DT", "hop-by-hop"),
                                           ("T", "hop-by-hop"), ("M", "hop-by-hop")])
def test_random_profitable_walks_and_escape_paths_are_allowed(kind, routing):
    """Walks built from the model's own definitions (a random profitable port on an adaptive
    VC, or the escape port on VC 0) are allowed and minimal; the escape path is one of them."""
    network = KingNetworkConfig.from_dict({"kind": kind, "side": 6, "routing": routing})
    topology, rng = network.topology, random.Random(5)
    for a in topology.nodes():
        for b in topology.nodes():
            source, destination = terminal(network, a), terminal(network, b)
            assert path_error(network, source, destination,
                              router_hops(network, source, destination)) is None
            node, path = a, []
            while node != b:
                if rng.random() < 0.3:
                    port, vc = routing_port(topology, node, b), 0
                else:
                    port = rng.choice([p for p, good in zip(PORTS, profitable_vector(
                        topology, node, b)) if good])
                    vc = 1
                path.append((node_label(node), port, vc))
                node = topology.neighbor(node, port)
            assert path_error(network, source, destination, path) is None, path


# --- broadcast -----------------------------------------------------------------------------------

def test_broadcast_takes_a_vc_of_its_own():
    """The broadcast VC is one more than the routing needs, the highest, and never adaptive."""
    knaive = KingNetworkConfig.from_dict({"kind": "KT", "side": 5, "broadcast": True})
    assert (knaive.vc_count, knaive.broadcast_vc, knaive.adaptive_vc_mask) == (2, 1, 0)
    two_s = KingNetworkConfig.from_dict({"kind": "KT", "side": 5, "routing": "2s", "vcs": 4,
                                    "broadcast": True})
    assert (two_s.broadcast_vc, two_s.adaptive_vc_mask) == (3, 0b0110)
    dateline = KingNetworkConfig.from_dict({"kind": "KT", "side": 5, "escape": "dateline",
                                       "broadcast": True})
    assert (dateline.vc_count, dateline.broadcast_vc) == (3, 2)
    assert dateline.bubble_ports  # broadcast copies take the bubble on a torus
    # Header: x, y (3 bits each), broadcast flag, TTL (3 bits: up to 4), source (5 bits).
    assert knaive.header_width == 3 + 3 + 1 + 3 + 5
    assert knaive.name == "king_kt5_knaive_bubble_b"
    # A unicast hop on the broadcast VC is not allowed.
    assert "VC 3 carries broadcast copies only" in path_error(two_s, 0, 1, [("0,0", "x+", 3)])


@pytest.mark.parametrize("values, message", [
    ({"kind": "T", "broadcast": True}, "broadcast: applies to KM and KT only, not T"),
    ({"kind": "KT", "broadcast": 1}, "broadcast must be true or false, not 1"),
    ({"kind": "KT", "broadcast": True, "vcs": 1}, r"uses exactly 2 VC\(s\)"),
    ({"kind": "KT", "broadcast": True, "routing": "2s", "vcs": 2}, "vcs must be"),
    ({"kind": "KT", "broadcast": True, "escape": "dateline", "buffer_depth": 6},
     "buffer_depth must be"),
])
def test_broadcast_configuration_errors(values, message):
    with pytest.raises(ValueError, match=message):
        KingNetworkConfig.from_dict(values)


def test_broadcast_relation_is_the_forwarding_rule():
    """The copies of a broadcast from 2,2 of KM5: every link crossing of the model's rule once,
    on the broadcast VC, and one copy at every other router; any change is reported."""
    network = KingNetworkConfig.from_dict({"kind": "KM", "side": 5, "broadcast": True})
    source = 2 + 5 * 2
    hops = [(f"{x},{y}", port, 1) for (x, y), port in broadcast_sends(network.topology, (2, 2))]
    receivers = [t for t in range(25) if t != source]
    assert broadcast_error(network, source, 0, hops, receivers) is None
    # 8 sends at the source, then each orthogonal ray goes on once and branches twice.
    assert len(hops) == 24 == len(receivers)
    assert "missed" in broadcast_error(network, source, 0, hops[:-1], receivers)
    assert "('2,2', 'x+', 0)" in broadcast_error(
        network, source, 0, [("2,2", "x+", 0), *hops[1:]], receivers)
    assert "twice to terminals [0]" in broadcast_error(network, source, 0, hops,
                                                       [*receivers, 0])
    assert "never to [24]" in broadcast_error(network, source, 0, hops, receivers[:-1])


# --- DT ties by LFSR -----------------------------------------------------------------------------

@pytest.mark.parametrize("side", range(3, 10))
def test_every_tie_path_is_minimal_and_in_vector_order(side):
    """Under DT's lfsr ties a packet may take, at every router, the first port of any shortest
    image's record: every such path is minimal (the BFS distance) and never goes back in
    vector order, so it enters each ring at most once and the escape schemes' arguments hold;
    the model's dependency check agrees."""
    network = KingNetworkConfig.from_dict({"kind": "DT", "side": side, "ties": "lfsr"})
    topology = network.topology
    source = (0, 0)  # a torus looks the same from every node
    distances = bfs_distances(topology, source)
    several = 0
    for target in topology.nodes():
        if target == source:
            continue
        paths = escape_paths(network, source, target)
        several += len(paths) > 1
        for path in paths:
            assert len(path) == distances[target]
            order = [PORTS.index(port) for _, port in path]
            assert order == sorted(order), path
            assert len({port[0] for _, port in path}) == len({port for _, port in path})
    assert several > 0
    for escape in ("bubble", "dateline"):
        graph = dependency_graph(KingNetworkConfig.from_dict({"kind": "DT", "side": side,
                                                         "ties": "lfsr", "escape": escape}))
        assert graph.find_cycle() is None


def test_path_error_accepts_any_tied_image():
    """DT5 from 0,1 to 1,4: the images (1, 3) (y+ then z+) and (1, -2) (x+ then y-) are both
    three hops; with lfsr ties either first hop is allowed, with first ties only y+."""
    lfsr = KingNetworkConfig.from_dict({"kind": "DT", "side": 5, "ties": "lfsr"})
    first = KingNetworkConfig.from_dict({"kind": "DT", "side": 5})
    source, destination = 0 + 5 * 1, 1 + 5 * 4
    assert set(tied_ports(lfsr, (0, 1), (1, 4))) == {"x+", "y+"}
    via_x = [("0,1", "x+", 0), ("1,1", "y-", 0), ("1,0", "y-", 0)]
    assert path_error(lfsr, source, destination, via_x) is None
    assert path_error(first, source, destination, via_x) is not None
    assert not lfsr.deterministic and first.deterministic
    assert lfsr.name == "king_dt5_diagonal_bubble_lfsr"
    error = path_error(lfsr, source, destination, [("0,1", "z+", 0), ("1,2", "y+", 0),
                                                   ("1,3", "y+", 0)])
    assert error == "hop 1 (0,1 z+ VC 0) is on an escape VC; the escape port there is y+ or x+"


@pytest.mark.parametrize("values, message", [
    ({"kind": "KT", "ties": "lfsr"}, "ties lfsr: applies to DT only"),
    ({"kind": "DT", "ties": "random"}, "ties must be one of"),
    ({"kind": "DT", "routing": "hop-by-hop", "ties": "both"},
     "ties both: applies to KT under 2s routing with an even side only .* not DT under "
     "hop-by-hop"),
    ({"kind": "KT", "routing": "hop-by-hop", "ties": "both"}, "not KT under hop-by-hop"),
    ({"kind": "KT", "side": 7, "routing": "2s", "ties": "both"}, "not KT under 2s with side 7"),
    ({"kind": "KM", "side": 6, "routing": "2s", "ties": "both", "escape": "none"},
     "not KM under 2s"),
])
def test_ties_errors(values, message):
    with pytest.raises(ValueError, match=message):
        KingNetworkConfig.from_dict(values)


def _torus_networks():
    """Every torus kind under each routing, escape without a dateline and ties it takes."""
    for kind in WRAPPED_KINDS:
        for routing in ("dor", "diagonal", "knaive", "hop-by-hop", "2s"):
            for escape in ("bubble", "none"):
                for ties in ("first", "lfsr", "both"):
                    for side in (3, 4, 5, 8):
                        try:
                            yield KingNetworkConfig.from_dict(
                                {"kind": kind, "side": side, "routing": routing,
                                 "escape": escape, "ties": ties})
                        except ValueError:
                            continue  # (a combination the network refuses)


def test_a_torus_graph_from_the_paths_toward_one_node_is_every_pairs():
    """On the tori without a dateline the graph is built from the paths toward node (0, 0)
    placed at every node; it must be the graph of every pair's paths."""
    networks = list(_torus_networks())
    assert len(networks) > 50
    for network in networks:
        assert dependency_graph(network).edges == \
            dependency_graph_of_every_pair(network).edges, network.name
