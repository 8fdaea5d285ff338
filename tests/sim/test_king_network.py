"""Generated king-family networks (002's M, DM, KM, T, DT, KT) on Icarus and Verilator.

Every packet's hops are compared with the reference model's path
(:func:`twinnet.model.king_network.router_hops`: the routing record recomputed at each router,
its first port in vector order, with the dateline's VCs); every packet is delivered exactly
once, intact, in order per pair. Under the all-pairs pattern the RTL's mean hop count must be
the topology's average distance over distinct pairs, from the model's breadth-first search
(:func:`twinnet.model.king.distance_summary`, which counts a node to itself: scaled by
N/(N-1), and with several PEs per router weighted by the PE pairs): minimal routing shown
in hardware.
"""

import os
import random
from pathlib import Path

import pytest

from twinnet.gen.families import FAMILIES
from twinnet.model.king import distance_summary
from twinnet.model.king_network import king_network_from_dict
from twinnet.model.traffic import PATTERNS
from twinnet.sim_tb import network_sim, runner

BUILD = Path(__file__).resolve().parents[2] / "build" / "sim"
FAMILY = FAMILIES["king"]

#: name → configuration: every kind with its routing, bubble and dateline on the tori, at
#: side 5 (odd; coordinates 5 to 7 are malformed) and 4.
CASES = {
    "KT5": {"kind": "KT", "side": 5}, "DT5": {"kind": "DT", "side": 5},
    "T5": {"kind": "T", "side": 5}, "KM5": {"kind": "KM", "side": 5},
    "DM5": {"kind": "DM", "side": 5}, "M5": {"kind": "M", "side": 5},
    "KT4-dateline": {"kind": "KT", "side": 4, "escape": "dateline"},
    "DT4-dateline": {"kind": "DT", "side": 4, "escape": "dateline"},
    "T4-dateline": {"kind": "T", "side": 4, "escape": "dateline"},
    "KT6": {"kind": "KT", "side": 6},
    "KT4-p3": {"kind": "KT", "side": 4, "pe_ports": 3},
}
#: The (case, simulator) runs of the default suite; the others with TWINNET_SLOW_TESTS=1.
DEFAULT = {("KT5", "icarus"), ("DT5", "icarus"), ("KM5", "verilator"),
           ("KT4-dateline", "verilator"), ("T5", "verilator"), ("KT4-p3", "verilator")}


def simulate(name: str, simulator: str, tests: dict) -> dict:
    reason = runner.missing(simulator)
    if reason:
        pytest.skip(reason)
    network = king_network_from_dict(CASES[name])
    return network_sim.simulate(network, simulator, BUILD / f"king-{name}-{simulator}", tests,
                                family=FAMILY)


@pytest.mark.parametrize("simulator", runner.SIMULATORS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_hop_follows_the_model(name, simulator):
    if (name, simulator) not in DEFAULT and not os.environ.get("TWINNET_SLOW_TESTS"):
        pytest.skip("slow case: set TWINNET_SLOW_TESTS=1 to run it")
    network = king_network_from_dict(CASES[name])
    tests = {"uniform_traffic": {"packets": 2000, "rate": 0.02}, "all_pairs": {}}
    if FAMILY.malformed(network, random.Random(1)) is not None:
        tests["malformed_dropped"] = {"packets": 300, "malformed": 30}
    results = simulate(name, simulator, tests)
    uniform = results["uniform_traffic"]
    assert uniform["packets"] == 2000 and uniform["hops_checked"]
    terminals, pes = network.terminal_count, network.pe_ports
    pairs = results["all_pairs"]
    assert pairs["packets"] == terminals * (terminals - 1) and pairs["hops_checked"]
    # Every ordered pair of nodes carries pes * pes terminal pairs (a node to itself: 0 hops).
    summary = distance_summary(network.topology)
    assert pairs["mean_hops"] == pytest.approx(
        pes * pes * summary.distance_sum / (terminals * (terminals - 1)))
    if "malformed_dropped" in tests:
        assert results["malformed_dropped"]["drop_count"] == 30


def traffic(name: str, network, points: list[dict]) -> list[dict]:
    """Traffic in hardware on Verilator (the C++ program)."""
    reason = runner.missing("verilator")
    if reason:
        pytest.skip(reason)
    results = network_sim.simulate(network, "verilator", BUILD / f"king-traffic-{name}",
                                   {network_sim.TRAFFIC_TEST: {"points": points}},
                                   family=FAMILY)
    return results[network_sim.TRAFFIC_TEST]["points"]


@pytest.mark.parametrize("kind", ["KT", "T"])
def test_saturating_traffic_drains_with_the_bubble(kind):
    """20,000 cycles of uniform and of tornado traffic offered at one flit per PE per cycle
    (beyond saturation) on the 8x8 torus and king torus with the bubble: the watchdog never
    fires, every packet is delivered once, intact, in order, and the network drains. Then
    every other pattern at a moderate load, and all-pairs (exactly 64 x 63 packets)."""
    network = king_network_from_dict({"kind": kind, "side": 8, "escape": "bubble"})
    rate = 1 / network.packet_length
    points = [{"pattern": pattern, "rate": rate, "warmup": 0, "measure": 20_000,
               "drain_limit": 0} for pattern in ("uniform", "tornado")]
    others = [{"pattern": pattern, "rate": 0.03, "warmup": 50, "measure": 500}
              for pattern in PATTERNS if pattern not in ("uniform", "tornado", "all-pairs")]
    pairs = {"pattern": "all-pairs", "rate": 1 / 16, "warmup": 0, "measure": 63 * 16}
    results = traffic(f"{kind}8-bubble", network, points + others + [pairs])
    for point in results[:2]:
        assert point["packets"] == point["created"] > 0 and not point["errors"]
        # Beyond saturation: far fewer accepted than offered, the rest refused at the source.
        assert point["accepted_flits_per_pe_cycle"] < 0.9
    assert [r["pattern"] for r in results[2:-1]] == [p["pattern"] for p in others]
    assert all(r["packets"] == r["created"] > 0 for r in results[2:-1])
    assert results[-1]["packets"] == 64 * 63


def test_dor_on_t8_without_escape_deadlocks():
    """Plain DOR on the 8x8 torus with one VC and no bubble: tornado traffic at saturation
    fills an x ring whose packets all wait for the next buffer of the same ring, and the
    watchdog reports the deadlock (the model's check finds the cycle too)."""
    network = king_network_from_dict({"kind": "T", "side": 8, "escape": "none"})
    assert not FAMILY.deadlock(network)["deadlock_free"]
    with pytest.raises(network_sim.SimulationFailed) as failure:
        traffic("T8-none", network, [{"pattern": "tornado", "rate": 1 / network.packet_length,
                                      "warmup": 0, "measure": 5000, "watchdog": 2000}])
    assert failure.value.kind == "deadlock", failure.value.summary
