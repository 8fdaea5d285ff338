"""Generated twin-torus networks on Icarus and Verilator, hop by hop against the model.

Each (network, simulator) case generates the network with link tracing, builds it once in its
own directory under ``build/sim`` and runs the cocotb tests of
:mod:`twinnet.sim_tb.network_cocotb` that the case needs. The scoreboard rebuilds the
configuration from the manifest and compares every packet's hops with
:func:`twinnet.model.twin_routing.path`; the numbers each test measured come back in a JSON
results file.
"""

import re
from pathlib import Path

import pytest
from tiers import default_only, marked
from variants import (
    BUILD,
    PIPELINE,
    UNIFORM_RATE,
    assert_mixed_lengths,
    mixed_lengths,
    uniform_packets,
)

from twinnet.model.twin import TwinTorusTopology
from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.model.twin_routing import path
from twinnet.sim_tb import network_sim, runner

#: The fixed part of a PE-to-PE latency at zero load, as documented in docs/network.md (head
#: accepted at the source PE port → head ejected at the destination); the first router adds
#: its pipeline's cycles, each further one 2 (the compact router's pipeline, the split
#: router's bypass).
LATENCY_CONSTANT = 0


def network(radices, configuration, mode, **sizes) -> TwinNetworkConfig:
    return TwinNetworkConfig.for_topology(TwinTorusTopology(radices, configuration, mode),
                             **{"pipeline": PIPELINE, **sizes})


NETWORKS = {
    f"ndt3-{size}-{name}-{mode}": network(radices, name, mode)
    for size, radices in (("k3", (3, 3, 3)), ("k4", (4, 4, 4)))
    for name in ("D", "A") for mode in ("vc", "bubble")
}
NETWORKS["ndt3-4x4x2-D-bubble"] = network((4, 4, 2), "D", "bubble")
# Plain 2D tori (configuration torus: one router per node), as the papers compare against.
NETWORKS["torus2-4x4-vc"] = network((4, 4), "torus", "vc")
NETWORKS["torus2-5x3-bubble"] = network((5, 3), "torus", "bubble")
# nDT beyond three dimensions, in C_Best (000 Def. 3.5): a 2DT and a 4DT (two radix-2
# dimensions, where both ring neighbours are the same node), both modes, on Verilator.
for _mode in ("vc", "bubble"):
    NETWORKS[f"ndt2-4x4-CBest-{_mode}"] = network((4, 4), "C_Best", _mode)
    NETWORKS[f"ndt4-3x3x2x2-CBest-{_mode}"] = network((3, 3, 2, 2), "C_Best", _mode)
# The compact router (2 cycles per hop): the 5x3 torus in the default suite, 3DT with its
# zero-load latency in the slow tier.
NETWORKS["ndt3-k3-D-bubble-compact"] = network((3, 3, 3), "D", "bubble", pipeline=2)
NETWORKS["torus2-5x3-bubble-compact"] = network((5, 3), "torus", "bubble", pipeline=2)
VERILATOR_ONLY = {name for name in NETWORKS if name.startswith(("ndt2-", "ndt4-"))
                  or name.endswith("-compact")}
#: The slow tier's cases; each is checked in the default suite by a sibling. The default suite
#: runs 3DT 3x3x3 D bubble (every hop, zero-load latency, the build's reuse) on Verilator;
#: radix-4 rings in the torus 4x4 with VCs on Verilator, 5x3 with the bubble on Icarus (the
#: twin family's Icarus case), the compact router on the 5x3 torus. 3DT 3x3x3 A with VCs under
#: saturation takes 70 s, 2DT 4x4 (C_Best) half a minute a mode, 4DT a minute, and 3DT 4x4x4
#: 1 to 2 minutes a case on Icarus and about a minute on Verilator.
SLOW = {(f"ndt3-k4-{name}-{mode}", simulator) for name in ("A", "D")
        for mode in ("vc", "bubble") for simulator in runner.SIMULATORS}
SLOW |= {(f"ndt3-k3-{name}-{mode}", "icarus") for name in ("A", "D") for mode in ("vc", "bubble")}
SLOW |= {(f"ndt3-k3-{name}", "verilator") for name in ("A-bubble", "D-vc", "A-vc")}
SLOW |= {("ndt3-4x4x2-D-bubble", simulator) for simulator in runner.SIMULATORS}
SLOW |= {(f"ndt4-3x3x2x2-CBest-{mode}", "verilator") for mode in ("vc", "bubble")}
SLOW |= {(f"ndt2-4x4-CBest-{mode}", "verilator") for mode in ("vc", "bubble")}
SLOW |= {("torus2-4x4-vc", "icarus"),
         ("torus2-5x3-bubble", "verilator"),
         ("ndt3-k3-D-bubble-compact", "verilator")}
CASES = [(name, simulator) for name in sorted(NETWORKS) for simulator in runner.SIMULATORS
         if simulator == "verilator" or name not in VERILATOR_ONLY]
#: The case whose build the reuse test runs a second time (that test checks its hops too).
REUSED = ("ndt3-k3-D-bubble", "verilator")


def cocotb_tests_for(name: str, simulator: str, slow_tier: bool) -> dict:
    """The cocotb tests a case runs, with their settings (longer ones in the slow tier)."""
    config = NETWORKS[name]
    tests = {"uniform_traffic": {"packets": uniform_packets(simulator), "rate": UNIFORM_RATE,
                                 "lengths": mixed_lengths(config)}}
    if any(k & (k - 1) for k in config.topology.radices) or config.topology.card_count == 1:
        # A digit can be out of range, or (plain torus) the PE bit.
        tests["malformed_dropped"] = {"packets": 400, "malformed": 40}
    if simulator == "verilator" and name in ("ndt3-k4-D-vc", "ndt3-k4-D-bubble",
                                             "ndt3-k3-A-vc", "ndt3-k3-A-bubble"):
        # 2,000 saturating cycles in the default suite (the scoreboard's Python is most of
        # the case's time), 20,000 in the slow tier.
        cycles = 20_000 if slow_tier else 2000
        tests["saturation_drains"] = {"cycles": cycles}
    if simulator == "verilator" and name == "ndt3-k3-D-bubble":
        # Every ordered pair of the 54 PEs, one at a time, in the slow tier; a random sample
        # of 600 in the default suite.
        tests["zero_load_latency"] = {} if slow_tier else {"pairs": 600}
    if simulator == "verilator" and name == "ndt3-k3-D-bubble-compact":
        tests["zero_load_latency"] = {"pairs": 600}  # a random sample
    return tests


def simulate(config: TwinNetworkConfig, simulator: str, case: str, tests: dict) -> dict:
    """Generate, build and run ``tests`` in the case's own build directory."""
    return network_sim.simulate(config, simulator, BUILD / f"{case}-{simulator}", tests)


@pytest.mark.parametrize("name, simulator", marked([case for case in CASES if case != REUSED],
                                             SLOW), indirect=["simulator"])
def test_every_hop_matches_the_model(name, simulator, slow_tier):
    check_every_hop(name, simulator, slow_tier)


def check_every_hop(name: str, simulator: str, slow_tier: bool) -> None:
    """Run the case's cocotb tests (:func:`cocotb_tests_for`) and check what they recorded."""
    config = NETWORKS[name]
    tests = cocotb_tests_for(name, simulator, slow_tier)
    results = simulate(config, simulator, name, tests)
    assert set(results) == set(tests)
    uniform = results["uniform_traffic"]
    assert uniform["packets"] == uniform_packets(simulator) and uniform["hops_checked"]
    assert_mixed_lengths(uniform["injected_lengths"], config)
    if "malformed_dropped" in results:
        assert results["malformed_dropped"]["drop_count"] == 40
    if "saturation_drains" in results:
        # Saturating load: far more packets than a light load would carry, all delivered.
        cycles = tests["saturation_drains"]["cycles"]
        assert results["saturation_drains"]["packets"] > cycles // config.max_packet_length
    if "zero_load_latency" in results:
        twin, pes = config.topology, list(config.topology.pes())
        latencies = results["zero_load_latency"]["latencies"]
        pairs = tests["zero_load_latency"].get("pairs") or len(pes) * (len(pes) - 1)
        assert len(latencies) == pairs
        assert len({(s, d) for s, d, _ in latencies}) == pairs and all(s != d for s, d, _ in
                                                                         latencies)
        wrong = [(s, d, got) for s, d, got in latencies
                 if got != config.pipeline + 2 * (len(path(twin, pes[s], pes[d])) - 1)
                 + LATENCY_CONSTANT]
        assert wrong == []


#: 003 Example 6.1 needs two nodes in Y. Buffers of one packet per VC (the smallest virtual
#: cut-through allows) let the cycle of full buffers form at once.
EXAMPLE_6_1 = {"radices": (3, 2, 3), "buffer_depth": 4}


def test_plain_twin_dor_deadlocks_and_the_watchdog_reports_it(icarus):
    """003 Example 6.1 in mode none: type-2 traffic closes the Y rings through the internal
    links. The watchdog must fire and name the Y+ links and internal links of the cycle."""
    config = network(EXAMPLE_6_1["radices"], "D", "none",
                     buffer_depth=EXAMPLE_6_1["buffer_depth"])
    results = simulate(config, icarus, "deadlock-6.1-none",
                       {"deadlock_pattern": {"example": "6.1", "cycles": 3000,
                                             "watchdog": 300}})
    outcome = results["deadlock_pattern"]
    assert outcome["deadlocked"], "Example 6.1 traffic drained without deadlock"
    report = outcome["report"]
    assert "stuck channels" in report
    # In configuration D the Y+ port sits on card 0 and Y- on card 1: the stuck packets hold
    # Y+ links (card 0) and internal links from card 1 to card 0.
    assert re.search(r"/c0 Y\+ vc0: \d+ packets", report), report
    assert re.search(r"/c1 I vc0: \d+ packets", report), report


#: Example 6.1's traffic (the deadlock above) with the bubble in the default suite; with the
#: VCs, and 6.2's on 3x3x3, in the slow tier (the model shows 6.2's cycle in mode none,
#: ``test_twin_analysis``).
@pytest.mark.parametrize("mode, example, depth", default_only(
    [("vc", "6.1", 4), ("bubble", "6.1", 8), ("vc", "6.2", 4), ("bubble", "6.2", 8)],
    {("bubble", "6.1", 8)}))
def test_deadlock_free_modes_drain_the_same_patterns(mode, example, depth, verilator):
    """The same traffic with the VCs of 003 §6.3.1 (same one-packet buffers) or bubble flow
    control (two-packet buffers, the least it allows) drains completely. (On Verilator:
    about half the time Icarus took; the deadlock itself is shown on Icarus above.)"""
    radices = EXAMPLE_6_1["radices"] if example == "6.1" else (3, 3, 3)
    config = network(radices, "D", mode, buffer_depth=depth)
    results = simulate(config, verilator, f"deadlock-{example}-{mode}",
                       {"deadlock_pattern": {"example": example, "cycles": 1000,
                                             "watchdog": 300}})
    assert not results["deadlock_pattern"]["deadlocked"]


def _stamps(folder: Path) -> dict:
    return {path.name: path.stat().st_mtime_ns for path in folder.iterdir() if path.is_file()}


#: The 432-PE case (its top file is well above 1 MB) takes about five minutes on one core: the
#: default suite checks the reuse on 3DT 3x3x3 (the every-hop case :data:`REUSED`), the big
#: network in the slow tier.
REUSE_CASES = {"ndt3-k3-D-bubble": ((3, 3, 3), 0), "ndt3-k6-D-bubble": ((6, 6, 6), 1_000_000)}


@pytest.mark.parametrize("case", default_only(sorted(REUSE_CASES), {REUSED[0]}))
def test_a_network_on_verilator_and_its_build_is_reused(case, verilator, slow_tier):
    """Every hop checked, then a second run of the unchanged network reuses the build: the
    generated files keep their time stamps and the Verilated binary is not rebuilt. 3DT 6x6x6
    is 432 PEs on 432 cards."""
    radices, top_size = REUSE_CASES[case]
    config = network(radices, "D", "bubble")
    if case == REUSED[0]:
        check_every_hop(*REUSED, slow_tier)
    else:
        results = simulate(config, verilator, case,
                           {"uniform_traffic": {"packets": 4000, "rate": 0.01}})
        assert results["uniform_traffic"]["packets"] == 4000
    build = BUILD / f"{case}-verilator"
    assert (build / "rtl" / f"{config.name}.v").stat().st_size > top_size
    rtl, binary = _stamps(build / "rtl"), (build / config.name).stat().st_mtime_ns
    again = simulate(config, verilator, case,
                     {"uniform_traffic": {"packets": 200, "rate": 0.01, "seed": 2}})
    assert again["uniform_traffic"]["packets"] == 200
    assert _stamps(build / "rtl") == rtl
    assert (build / config.name).stat().st_mtime_ns == binary, "the build was not reused"
