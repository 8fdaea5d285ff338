"""Generated twisted tori (004) on Icarus and Verilator, hop by hop against the model.

Every packet's hops are compared with the model's dimension-order path over the minimal record
(:func:`twinnet.model.twisted_network.router_hops`, with the dateline's VCs); every packet is
delivered exactly once, intact, in order per pair (hash sums only with several VCs per link,
where a pair keeps its path but not its order). Under the all-pairs pattern the RTL's mean
hop count must equal the model's average distance over distinct pairs
(:func:`twinnet.model.twist.metrics`, which counts a node to itself: scaled by T/(T-1) for T
terminals, p per router, since terminals on one router are 0 hops apart) and its
largest hop count the model's diameter: minimal routing over the twists, shown in hardware.
"""

import random
import re
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
from twinnet.model.traffic import PATTERNS
from twinnet.model.twist import metrics
from twinnet.model.twisted_network import TwistedNetworkConfig
from twinnet.sim_tb import network_sim, runner

FAMILY = family("twisted")

#: The issue's instances: 8x4 with t_YX = 0 and 4, 6x3 with t_YX = 3, 4x4x2 with one twist,
#: each with the bubble and the dateline.
INSTANCES = {"8x4-t0": ([8, 4], ""), "8x4-tyx4": ([8, 4], "YX=4"),
             "6x3-tyx3": ([6, 3], "YX=3"), "4x4x2-tzx2": ([4, 4, 2], "ZX=2")}
CASES = {f"{name}-{escape}": (radices, twists, escape)
         for name, (radices, twists) in INSTANCES.items() for escape in ("bubble", "dateline")}
# The compact router (2 cycles per hop).
CASES["8x4-tyx4-bubble-compact"] = CASES["8x4-tyx4-bubble"]
#: Several copies of the escape per link (``-v<VCs>``: a pair's path is kept, not its order)
#: and several PEs per router (``-p<PEs>``).
CASES["8x4-tyx4-bubble-v3"] = CASES["8x4-tyx4-bubble"]
CASES["6x3-tyx3-dateline-v4"] = CASES["6x3-tyx3-dateline"]
CASES["4x4x2-tzx2-bubble-v3-p3"] = CASES["4x4x2-tzx2-bubble"]
#: The (case, simulator) runs of the default suite; the others (the 3D twisted torus with
#: several VCs and PEs among them: 54 s; 8x4 with the bubble on Icarus: 44 s) in the slow
#: tier.
DEFAULT = {("8x4-tyx4-dateline", "verilator")}


def network_of(name: str):
    radices, twists, escape = CASES[name]
    vcs, pes = re.search(r"-v(\d+)", name), re.search(r"-p(\d+)", name)
    return TwistedNetworkConfig.from_dict({
        "radices": radices, "twists": twists, "escape": escape,
        "vcs": int(vcs[1]) if vcs else None, "pe_ports": int(pes[1]) if pes else 1,
        "pipeline": pipeline_of(name)})


@pytest.mark.parametrize("name, simulator",
                         default_only(product(sorted(CASES), runner.SIMULATORS), DEFAULT),
                         indirect=["simulator"])
def test_every_hop_follows_the_model(name, simulator):
    network = network_of(name)
    tests = {"uniform_traffic": {"packets": uniform_packets(simulator), "rate": UNIFORM_RATE,
                                 "lengths": mixed_lengths(network)},
             "all_pairs": {}}
    if FAMILY.malformed(network, random.Random(0)) is not None:  # a field can hold a bad value
        tests["malformed_dropped"] = {"packets": 300, "malformed": 30}
    results = network_sim.simulate(network, simulator, BUILD / f"twisted-{name}-{simulator}",
                                   tests, family=FAMILY)
    uniform = results["uniform_traffic"]
    assert uniform["packets"] == uniform_packets(simulator) and uniform["hops_checked"]
    assert_mixed_lengths(uniform["injected_lengths"], network)
    terminals = network.terminal_count
    pairs = results["all_pairs"]
    assert pairs["packets"] == terminals * (terminals - 1) and pairs["hops_checked"]
    # 004's average distance counts a node to itself; terminals on one router are 0 hops apart.
    expected = metrics(network.topology)
    assert pairs["mean_hops"] == pytest.approx(
        float(expected.average_distance) * terminals / (terminals - 1))
    assert pairs["max_hops"] == expected.diameter
    assert_traced_link_packets(pairs["link_heads"], FAMILY, network, network_sim.manifest_of(
        BUILD / f"twisted-{name}-{simulator}"))
    if "malformed_dropped" in tests:
        assert results["malformed_dropped"]["drop_count"] == 30


@pytest.mark.slow  # 45 s a case; test_twin_network.py's bubble drains by default
@pytest.mark.parametrize("escape", ["bubble", "dateline", "bubble-v3"])
def test_saturating_traffic_drains(escape, verilator):
    """8x4 with t_YX = 4 (``-v3``: three VCs per link, each its own bubble): 20,000 cycles of
    uniform traffic offered at one flit per PE per cycle never trip the watchdog, every packet
    arrives once, intact (in order with one VC); then every other pattern at a moderate load
    (32 terminals); all-pairs, where every link carries the packets the model's paths put on
    it (and with three VCs every VC carries some); last, a soak with back-pressure (at least
    20,000 packets, PEs taking a flit with probability 0.3 and stopping for bursts of up to
    32 cycles). The dateline and the three VCs run in the slow tier."""
    network = network_of(f"8x4-tyx4-{escape}")
    saturating = {"pattern": "uniform", "rate": 1 / network.max_packet_length, "warmup": 0,
                  "measure": 20_000, "drain_limit": 0}
    others = [{"pattern": pattern, "rate": 0.03, "warmup": 50, "measure": 500}
              for pattern in PATTERNS if pattern not in ("uniform", "all-pairs")]
    pairs = {"pattern": "all-pairs", "rate": 1 / 16, "warmup": 0, "measure": 31 * 16,
             "count_links": True}
    soak = soak_point(saturating["rate"], 24_000)
    build = BUILD / f"twisted-traffic-{escape}"
    results = network_sim.simulate(network, verilator, build,
                                   {network_sim.TRAFFIC_TEST: {"points": [saturating, *others,
                                                                          pairs, soak]}},
                                   family=FAMILY)[network_sim.TRAFFIC_TEST]["points"]
    assert results[0]["packets"] == results[0]["created"] > 10_000
    assert [r["pattern"] for r in results[1:-2]] == [p["pattern"] for p in others]
    assert results[-2]["packets"] == 32 * 31
    assert_link_packets(results[-2]["link_loads"], FAMILY, network,
                        network_sim.manifest_of(build))
    # Every VC carried packets: injections and turns took the copies.
    per_vc = [sum(load["vc"][vc]["packets"] for load in results[-2]["link_loads"]
                  if "link" in load) for vc in range(network.vc_count)]
    assert all(per_vc), per_vc
    assert_soaked(results[-1])


def test_a_twisted_ring_without_escape_deadlocks(verilator):
    """One VC and no bubble: the twisted Y cycles of 8x4 (t_YX = 4) fill under saturating
    uniform traffic and the watchdog reports it; the model's check finds the cycle too."""
    network = TwistedNetworkConfig.from_dict({"radices": [8, 4], "twists": "YX=4",
                                         "escape": "none", "pipeline": PIPELINE})
    assert not FAMILY.deadlock(network)["deadlock_free"]
    with pytest.raises(network_sim.SimulationFailed) as failure:
        network_sim.simulate(network, verilator, BUILD / "twisted-traffic-none",
                             {network_sim.TRAFFIC_TEST: {"points": [
                                 {"pattern": "uniform", "rate": 1 / network.max_packet_length,
                                  "warmup": 0, "measure": 20_000, "watchdog": 2000}]}},
                             family=FAMILY)
    assert failure.value.cause == "deadlock", failure.value.summary
    assert_deadlock_report(failure.value.summary)
