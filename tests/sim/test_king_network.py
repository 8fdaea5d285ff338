"""Generated king-family networks (002's M, DM, KM, T, DT, KT) on Icarus and Verilator.

Every packet's hops are compared with the reference model's path
(:func:`twinnet.model.king_network.router_hops`: the routing record recomputed at each router,
its first port in vector order, with the dateline's VCs); every packet is delivered exactly
once, intact, in order per pair. Under adaptive routing (hop-by-hop, 2S) every hop must be
one the model allows (:func:`twinnet.model.king_network.path_error`: a profitable port on an
adaptive VC, the escape routing's port and VC on an escape VC), every packet is delivered
exactly once and intact, and the uniform traffic is offered hard enough that both kinds of VC
carry hops. Under the all-pairs pattern the RTL's mean hop count must be
the topology's average distance over distinct pairs, from the model's breadth-first search
(:func:`twinnet.model.king.distance_summary`, which counts a node to itself: scaled by
N/(N-1), and with several PEs per router weighted by the PE pairs): minimal routing shown
in hardware.
"""

import random
from itertools import product

import pytest
from link_counts import assert_link_packets, assert_traced_link_packets
from soaks import assert_deadlock_report, assert_soaked, soak_point
from tiers import default_only
from variants import (
    BUILD,
    PIPELINE,
    UNIFORM_RATE,
    assert_mixed_lengths,
    mixed_lengths,
    pipeline_of,
    uniform_packets,
)

from twinnet.families import family
from twinnet.model.king import KINDS, distance_summary
from twinnet.model.king_network import ROUTINGS, KingNetworkConfig
from twinnet.model.traffic import PATTERNS
from twinnet.sim_tb import network_sim, runner

FAMILY = family("king")

#: name → configuration: every kind with its routing, bubble and dateline on the tori, at
#: side 5 (odd; coordinates 5 to 7 are malformed) and 4.
CASES = {
    "KT5": {"kind": "KT", "side": 5}, "DT5": {"kind": "DT", "side": 5},
    "T5": {"kind": "T", "side": 5}, "KM5": {"kind": "KM", "side": 5},
    "DM5": {"kind": "DM", "side": 5}, "M5": {"kind": "M", "side": 5},
    "KM4": {"kind": "KM", "side": 4},
    "KT4-dateline": {"kind": "KT", "side": 4, "escape": "dateline"},
    "DT4-dateline": {"kind": "DT", "side": 4, "escape": "dateline"},
    "T4-dateline": {"kind": "T", "side": 4, "escape": "dateline"},
    "KT6": {"kind": "KT", "side": 6},
    "KT4-p3": {"kind": "KT", "side": 4, "pe_ports": 3},
    "KT5-2s": {"kind": "KT", "side": 5, "routing": "2s"},
    "KM5-2s": {"kind": "KM", "side": 5, "routing": "2s"},
    "KT6-2s": {"kind": "KT", "side": 6, "routing": "2s"},
    "KT4-2s-dateline": {"kind": "KT", "side": 4, "routing": "2s", "escape": "dateline"},
    "KT4-2s-bothties": {"kind": "KT", "side": 4, "routing": "2s", "ties": "both"},
    "KT5-2s-v3": {"kind": "KT", "side": 5, "routing": "2s", "vcs": 3},
    "DT5-hop-by-hop": {"kind": "DT", "side": 5, "routing": "hop-by-hop"},
    "T5-hop-by-hop": {"kind": "T", "side": 5, "routing": "hop-by-hop"},
    "M5-hop-by-hop": {"kind": "M", "side": 5, "routing": "hop-by-hop"},
    "DM5-hop-by-hop": {"kind": "DM", "side": 5, "routing": "hop-by-hop"},
    "KT5-hop-by-hop": {"kind": "KT", "side": 5, "routing": "hop-by-hop"},
    "DT5-lfsr": {"kind": "DT", "side": 5, "ties": "lfsr"},
    "DT4-lfsr-dateline": {"kind": "DT", "side": 4, "ties": "lfsr", "escape": "dateline"},
    # The compact router (2 cycles per hop), under adaptive routing (2S).
    "KT4-2s-compact": {"kind": "KT", "side": 4, "routing": "2s"},
}
#: The (case, simulator) runs of the default suite; the others in the slow tier
#: (Icarus runs the king family in DT4-lfsr-dateline, the diagonal torus, three of the king
#: torus's four directions, under LFSR ties and a dateline; Verilator runs the torus in T5,
#: with its malformed coordinates, and 2S on KT4 with both ties, the 002-kt16 preset's
#: routing).
DEFAULT = {("DT4-lfsr-dateline", "icarus"), ("T5", "verilator"),
           ("KT4-2s-bothties", "verilator")}


def simulate(name: str, simulator: str, tests: dict) -> dict:
    network = KingNetworkConfig.from_dict({**CASES[name], "pipeline": pipeline_of(name)})
    return network_sim.simulate(network, simulator, BUILD / f"king-{name}-{simulator}", tests,
                                family=FAMILY)


@pytest.mark.parametrize("name, simulator",
                         default_only(product(sorted(CASES), runner.SIMULATORS), DEFAULT),
                         indirect=["simulator"])
def test_every_hop_follows_the_model(name, simulator):
    network = KingNetworkConfig.from_dict({**CASES[name], "pipeline": pipeline_of(name)})
    # Adaptive routing: uniform traffic near saturation, so that packets also wait for and
    # take their escape moves (and, with DT's LFSR ties, the ties vary a pair's paths).
    rate = 0.3 if network.adaptive else UNIFORM_RATE
    tests = {"uniform_traffic": {"packets": uniform_packets(simulator), "rate": rate,
                                 "lengths": mixed_lengths(network)},
             "all_pairs": {}}
    if FAMILY.malformed(network, random.Random(1)) is not None:
        tests["malformed_dropped"] = {"packets": 300, "malformed": 30}
    results = simulate(name, simulator, tests)
    uniform = results["uniform_traffic"]
    assert uniform["packets"] == uniform_packets(simulator) and uniform["hops_checked"]
    assert_mixed_lengths(uniform["injected_lengths"], network)
    if network.adaptive:
        by_vc = uniform["hops_by_vc"]
        escape = sum(by_vc.get(str(vc), 0) for vc in range(network.escape_vc_count))
        adaptive = sum(by_vc.values()) - escape
        assert escape > 0 and adaptive > 0, by_vc
    terminals, pes = network.terminal_count, network.pe_ports
    pairs = results["all_pairs"]
    assert pairs["packets"] == terminals * (terminals - 1) and pairs["hops_checked"]
    # Every ordered pair of nodes carries pes * pes terminal pairs (a node to itself: 0 hops).
    summary = distance_summary(network.topology)
    assert pairs["mean_hops"] == pytest.approx(
        pes * pes * summary.distance_sum / (terminals * (terminals - 1)))
    if FAMILY.deterministic(network):  # each link carries the model's paths
        assert_traced_link_packets(pairs["link_heads"], FAMILY, network, network_sim.manifest_of(
            BUILD / f"king-{name}-{simulator}"))
    if "malformed_dropped" in tests:
        assert results["malformed_dropped"]["drop_count"] == 30


def traffic(name: str, network, points: list[dict]) -> list[dict]:
    """Traffic in hardware on Verilator (the C++ program), for tests that take the
    ``verilator`` fixture."""
    results = network_sim.simulate(network, "verilator", BUILD / f"king-traffic-{name}",
                                   {network_sim.TRAFFIC_TEST: {"points": points}},
                                   family=FAMILY)
    return results[network_sim.TRAFFIC_TEST]["points"]


#: The slow tier's (35 s a case; the bubble drains in the twin family's default tests).
@pytest.mark.slow
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize("kind", ["KT", "T"])
def test_saturating_traffic_drains_with_the_bubble(kind, slow_tier):
    """10,000 cycles of uniform and of tornado traffic offered at one flit per PE per cycle
    (beyond saturation) on the 8x8 torus and king torus with the bubble: the watchdog never
    fires, every packet is delivered once, intact, in order, and the network drains. Then
    every other pattern at a moderate load, and all-pairs (exactly 64 x 63 packets). Last, a
    soak with back-pressure: at least 20,000 packets offered beyond saturation to PEs that
    take a flit with probability 0.3 and stop for bursts of up to 32 cycles. In the slow tier
    the link counters also count every link's packets under all-pairs (the default suite
    checks the king family's links by the trace of KT4 and the counters on the 3DT, the fat
    tree and the twisted torus: generating and compiling the counters of 1,280 links is
    half of this test's time)."""
    network = KingNetworkConfig.from_dict({"kind": kind, "side": 8, "escape": "bubble",
                                      "pipeline": PIPELINE})
    rate = 1 / network.max_packet_length
    points = [{"pattern": pattern, "rate": rate, "warmup": 0, "measure": 10_000,
               "drain_limit": 0} for pattern in ("uniform", "tornado")]
    soak = [soak_point(rate, 12_000)]
    others = [{"pattern": pattern, "rate": 0.03, "warmup": 50, "measure": 500}
              for pattern in PATTERNS if pattern not in ("uniform", "tornado", "all-pairs")]
    pairs = {"pattern": "all-pairs", "rate": 1 / 16, "warmup": 0, "measure": 63 * 16,
             "count_links": slow_tier}
    results = traffic(f"{kind}8-bubble", network, points + others + [pairs] + soak)
    for point in results[:2]:
        assert point["packets"] == point["created"] > 0 and not point["errors"]
        # Beyond saturation: far fewer accepted than offered, the rest refused at the source.
        assert point["accepted_flits_per_pe_cycle"] < 0.9
    assert [r["pattern"] for r in results[2:-2]] == [p["pattern"] for p in others]
    assert all(r["packets"] == r["created"] > 0 for r in results[2:-2])
    assert results[-2]["packets"] == 64 * 63
    if slow_tier:
        assert_link_packets(results[-2]["link_loads"], FAMILY, network,
                            network_sim.manifest_of(BUILD / f"king-traffic-{kind}8-bubble"))
    # The program counts every head crossing a link: under all-pairs, minimal routing makes
    # the mean the topology's mean distance.
    assert results[-2]["mean_hops"] == pytest.approx(
        distance_summary(network.topology).distance_sum / (64 * 63))
    # ... and the most hops of a packet its diameter (8 on the torus, 4 on the king torus).
    assert results[-2]["max_hops"] == distance_summary(network.topology).diameter == \
        {"T": 8, "KT": 4}[kind]
    assert_soaked(results[-1])


@pytest.mark.slow  # a Verilator build of the harness
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize("side, cycles", [(4, 10_000), (8, 20_000)])
def test_2s_drains_beyond_saturation(side, cycles):
    """2S hop-by-hop over the bubble escape on KT4 and KT8 (slow), traffic made and checked in
    hardware: 10,000 (20,000) cycles of uniform and of tornado traffic offered at one flit per
    PE per cycle never trip
    the watchdog, and every packet is delivered once, intact, at its destination (a pair's
    packets may overtake each other: the sums of packet hashes sent and received must agree);
    then all-pairs delivers exactly N x (N - 1) packets, and an injected duplicate and a
    rewritten header are caught."""
    network = KingNetworkConfig.from_dict({"kind": "KT", "side": side, "routing": "2s",
                                      "pipeline": PIPELINE})
    nodes = side * side
    rate = 1 / network.max_packet_length
    points = [{"pattern": pattern, "rate": rate, "warmup": 0, "measure": cycles,
               "drain_limit": 0} for pattern in ("uniform", "tornado")]
    pairs = {"pattern": "all-pairs", "rate": 1 / 16, "warmup": 0,
             "measure": (nodes - 1) * 16}
    # The checks can fail: a packet sent twice changes the sums of packet hashes.
    faults = [{"pattern": "uniform", "rate": 0.05, "warmup": 0, "measure": 500, "fault": fault}
              for fault in ("duplicate", "misroute")]
    results = traffic(f"KT{side}-2s", network, points + [pairs] + faults)
    for point in results[:2]:
        assert point["packets"] == point["created"] > 0 and not point["errors"]
        assert point["accepted_flits_per_pe_cycle"] < 0.9
    assert results[2]["packets"] == nodes * (nodes - 1) and not results[2]["errors"]
    duplicate, misroute = results[3:]
    assert duplicate["faults_applied"] == 1 and duplicate["errors"] == {"checksum": 1}
    # The misroute fault rewrites the header of a packet that did reach its terminal: the
    # header check catches it, the hash (of the terminal it reached) rightly does not.
    assert misroute["faults_applied"] == 1 and misroute["errors"] == {"wrong_destination": 1}


@pytest.mark.usefixtures("verilator")
def test_dor_on_t8_without_escape_deadlocks():
    """Plain DOR on the 8x8 torus with one VC and no bubble: tornado traffic at saturation
    fills an x ring whose packets all wait for the next buffer of the same ring, and the
    watchdog reports the deadlock (the model's check finds the cycle too)."""
    network = KingNetworkConfig.from_dict({"kind": "T", "side": 8, "escape": "none",
                                      "pipeline": PIPELINE})
    assert not FAMILY.deadlock(network)["deadlock_free"]
    with pytest.raises(network_sim.SimulationFailed) as failure:
        traffic("T8-none", network, [{"pattern": "tornado", "rate": 1 / network.max_packet_length,
                                      "warmup": 0, "measure": 5000, "watchdog": 2000}])
    assert failure.value.cause == "deadlock", failure.value.summary
    assert_deadlock_report(failure.value.summary)


#: Broadcast cases: (configuration, simulator); KM5 and KT5 on both simulators, KT6 (even
#: side: the even-side rule) and 2S with broadcast on Verilator. KT6 runs in the default
#: suite, the others in the slow tier.
BROADCAST = {
    "KM5-b": ({"kind": "KM", "side": 5, "broadcast": True}, ("icarus", "verilator")),
    "KT5-b": ({"kind": "KT", "side": 5, "broadcast": True}, ("icarus", "verilator")),
    "KT6-b": ({"kind": "KT", "side": 6, "broadcast": True}, ("verilator",)),
    "KT5-2s-b": ({"kind": "KT", "side": 5, "routing": "2s", "broadcast": True},
                 ("verilator",)),
    "KT6-b-compact": ({"kind": "KT", "side": 6, "broadcast": True}, ("verilator",)),
}


@pytest.mark.parametrize("name, simulator", default_only(
    [(name, simulator) for name, (_, sims) in BROADCAST.items() for simulator in sims],
    {("KT6-b", "verilator")}), indirect=["simulator"])
def test_broadcast_reaches_every_router_once(name, simulator):
    """A broadcast from every node, one every 16 cycles, mixed with uniform unicast traffic:
    each copy arrives intact, exactly one at every other router, every link it crossed is
    one the model's forwarding rule crosses (:func:`twinnet.model.king.broadcast_sends`), on
    the broadcast VC; every unicast packet as ever. Then 2,000 cycles of saturating uniform
    traffic of which a tenth are broadcasts drain without tripping the watchdog. Last, uniform
    traffic of broadcasts only (``broadcast_fraction`` 1), of every length from 1 flit to the
    longest: no unicast latency to report, every copy delivered intact."""
    network = KingNetworkConfig.from_dict({**BROADCAST[name][0], "pipeline": pipeline_of(name)})
    nodes = network.topology.node_count
    tests = {"broadcast_traffic": {"rate": 0.01},
             "saturation_drains": {"cycles": 2000, "broadcast_fraction": 0.1},
             "uniform_traffic": {"packets": 60, "rate": 0.01, "broadcast_fraction": 1.0,
                                 "lengths": mixed_lengths(network)}}
    results = network_sim.simulate(network, simulator, BUILD / f"king-{name}-{simulator}",
                                   tests, family=FAMILY)
    sent = results["broadcast_traffic"]
    assert sent["hops_checked"] and sent["broadcasts_sent"] == nodes
    assert sent["broadcast_copies_delivered"] == nodes * (nodes - 1)
    assert sent["packets"] > 0  # unicast packets alongside
    saturated = results["saturation_drains"]
    assert saturated["broadcasts_sent"] > 0
    assert saturated["broadcast_copies_delivered"] == saturated["broadcasts_sent"] * (nodes - 1)
    only = results["uniform_traffic"]
    assert only["packets"] == 0 and only["mean_latency"] is None
    assert only["broadcasts_sent"] == 60
    assert only["broadcast_copies_delivered"] == 60 * (nodes - 1)
    assert_mixed_lengths(only["broadcast_lengths"], network)  # broadcasts of every length


def broadcast_points(nodes: int) -> list[dict]:
    """Points of broadcasts in hardware on a network of ``nodes`` routers with one PE each:
    a fifth of the packets broadcasts at a light and a heavy load, broadcasts only (fraction
    1), a broadcast sent twice, then all-pairs without broadcasts (one simulation: the
    broadcast sequences go on across the points)."""
    return [
        {"pattern": "uniform", "rate": 0.03, "warmup": 100, "measure": 1500,
         "broadcast_fraction": 0.2},
        {"pattern": "uniform", "rate": 0.1, "warmup": 100, "measure": 1000,
         "broadcast_fraction": 0.2},
        {"pattern": "uniform", "rate": 0.02, "warmup": 0, "measure": 600,
         "broadcast_fraction": 1.0},
        {"pattern": "uniform", "rate": 0.02, "warmup": 0, "measure": 300,
         "broadcast_fraction": 1.0, "fault": "duplicate"},
        {"pattern": "all-pairs", "rate": 1 / 16, "warmup": 0, "measure": (nodes - 1) * 16},
    ]


def assert_broadcasts_checked(results: list[dict], network) -> None:
    """What :func:`broadcast_points` must give: every copy delivered once (one at every
    other router), the duplicated broadcast caught at each of them, all-pairs untouched."""
    nodes = network.topology.node_count
    light, heavy, only, duplicate, pairs = results
    for point in (light, heavy, only):
        assert not point["errors"] and point["copies_per_broadcast"] == nodes - 1
        assert point["broadcasts_sent"] > 0
        assert point["broadcast_copies_delivered"] == point["broadcasts_sent"] * (nodes - 1)
        assert point["packets"] == point["created"] - point["broadcasts_sent"]
    # About a fifth of the packets are broadcasts (binomial: within 4 standard deviations).
    for point in (light, heavy):
        share, count = point["broadcasts_sent"] / point["created"], point["created"]
        assert abs(share - 0.2) < 4 * (0.2 * 0.8 / count) ** 0.5
        assert point["packets"] > 0 and point["mean_latency"] > 0
    assert only["packets"] == 0 and only["mean_latency"] is None
    # The first broadcast after reset sent twice: every router but the source's sees its
    # copy twice, the second out of order.
    assert duplicate["faults_applied"] == 1
    assert duplicate["errors"] == {"out_of_order": nodes - 1}
    assert duplicate["broadcasts_sent"] == duplicate["created"] + 1
    assert pairs["packets"] == nodes * (nodes - 1) and pairs["broadcasts_sent"] == 0


@pytest.mark.slow  # 50 s; broadcasts run on the program in test_program_ranks.py
@pytest.mark.usefixtures("verilator")
def test_broadcasts_checked_in_hardware_on_the_program():
    """KT4 with broadcast, traffic and checks in hardware on the C++ program
    (:func:`broadcast_points`): every copy of every broadcast arrives exactly once, intact,
    in order per source, at every other router (:func:`assert_broadcasts_checked`); a
    duplicated broadcast is caught by every sink that receives it. Under all-pairs the hops
    the program counts are the model's: the mean the average distance, the largest the
    diameter (2 on the 4x4 king torus)."""
    network = KingNetworkConfig.from_dict({"kind": "KT", "side": 4, "broadcast": True,
                                      "pipeline": PIPELINE})
    results = traffic("KT4-b", network, broadcast_points(16))
    assert [point["engine"] for point in results] == ["program"] * len(results)
    assert_broadcasts_checked(results, network)
    summary = distance_summary(network.topology)
    assert summary.diameter == 2
    assert results[-1]["max_hops"] == summary.diameter
    assert results[-1]["mean_hops"] == pytest.approx(summary.distance_sum / (16 * 15))


# The slow tier on both simulators: the default suite compares the program with the Verilog
# harness on the torus's unicast traffic (test_traffic_network.py), and checks broadcasts on
# the program (on MPI ranks, test_program_ranks.py) and, through cocotb, on KT6.
@pytest.mark.slow
@pytest.mark.parametrize("simulator", runner.SIMULATORS, indirect=True)
@pytest.mark.usefixtures("verilator")  # the program's counts, to compare with
def test_broadcasts_on_the_verilog_harness_count_what_the_program_counts(simulator):
    """The same points on the Verilog harness through cocotb: the same checks pass, and
    every count is the program's (:func:`test_broadcasts_checked_in_hardware_on_the_program`
    runs them there; the hops only the program counts)."""
    network = KingNetworkConfig.from_dict({"kind": "KT", "side": 4, "broadcast": True,
                                      "pipeline": PIPELINE})
    points = broadcast_points(16)
    results = network_sim.simulate(
        network, simulator, BUILD / f"king-traffic-KT4-b-cocotb-{simulator}",
        {network_sim.TRAFFIC_TEST: {"points": points, "engine": "cocotb"}},
        family=FAMILY)[network_sim.TRAFFIC_TEST]["points"]
    assert [point["engine"] for point in results] == ["cocotb"] * len(results)
    assert_broadcasts_checked(results, network)
    program = traffic("KT4-b", network, points)
    run = ("engine", "wall_seconds", "cycles_per_second", "packet_hops", "mean_hops",
           "max_hops")
    for cocotb, ours in zip(results, program):
        assert {k: v for k, v in cocotb.items() if k not in run} == \
            {k: v for k, v in ours.items() if k not in run}


#: Every kind at side 8 (and 5, odd) with every routing that applies to it.
MATRIX = [(kind, side, routing) for side in (8, 5) for kind in KINDS
          for routing, kinds in ROUTINGS.items() if kind in kinds]


@pytest.mark.slow
@pytest.mark.parametrize("kind, side, routing", MATRIX,
                         ids=[f"{k}{s}-{r}" for k, s, r in MATRIX])
def test_every_kind_and_routing_on_verilator(kind, side, routing, verilator):
    """The acceptance matrix (slow tier): 2,000 uniform packets and 2,000 tornado packets,
    every hop held to the model's relation, every packet delivered once and intact (in order
    per pair under deterministic routing)."""
    network = KingNetworkConfig.from_dict({"kind": kind, "side": side, "routing": routing,
                                      "pipeline": PIPELINE})
    rate = 0.1 if network.adaptive else 0.02
    results = network_sim.simulate(
        network, verilator, BUILD / f"king-matrix-{kind}{side}-{routing}",
        {"uniform_traffic": {"packets": 2000, "rate": rate},
         "load_sweep": {"packets": 2000, "rates": [rate], "pattern": "tornado"}},
        family=FAMILY)
    assert results["uniform_traffic"]["packets"] == 2000
    assert results["uniform_traffic"]["hops_checked"]
    tornado = results["load_sweep"]["points"][0]
    assert tornado["packets"] == 2000 and tornado["hops_checked"]


@pytest.mark.slow
def test_broadcasts_in_saturating_traffic_drain_on_kt8(verilator):
    """KT8 with the bubble (slow): 5,000 cycles in which every PE keeps a packet waiting, a
    tenth of them broadcasts, every copy and packet checked by the scoreboard; the watchdog
    never fires and everything drains."""
    network = KingNetworkConfig.from_dict({"kind": "KT", "side": 8, "broadcast": True,
                                      "pipeline": PIPELINE})
    results = network_sim.simulate(
        network, verilator, BUILD / "king-KT8-b-saturation",
        {"saturation_drains": {"cycles": 5000, "broadcast_fraction": 0.1}}, family=FAMILY)
    saturated = results["saturation_drains"]
    assert saturated["broadcasts_sent"] > 0 and saturated["packets"] > 0
    assert saturated["broadcast_copies_delivered"] == saturated["broadcasts_sent"] * 63
