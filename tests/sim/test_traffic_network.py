"""Traffic generated and checked in hardware (:mod:`twinnet.hdl.traffic`) on whole networks.

Every point ends with every packet delivered exactly once, intact, in order per pair and at
the right terminal (the sinks' error counters are zero and received == injected, or the run
fails). The expected figures are hand calculations.
"""

import asyncio
import json
import re
from pathlib import Path

import pytest
from link_counts import assert_link_packets
from soaks import assert_deadlock_report, assert_soaked, soak_point
from tiers import marked
from twin_crossings import crossings, measured_internal_packets, packets_per_link
from variants import BUILD, PIPELINE

from twinnet.families import family_for
from twinnet.model.fat_tree import FatTreeNetworkConfig
from twinnet.model.traffic import PATTERNS
from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.sim_tb import network_sim, runner


def every_pattern(rate: float, measure: int) -> list[dict]:
    """One point per pattern but all-pairs (each run on its own test's network)."""
    return [{"pattern": name, "rate": rate, "warmup": 50, "measure": measure}
            for name in PATTERNS if name != "all-pairs"]


def run(network, simulator: str, case: str, points: list[dict], engine: str = "auto"
        ) -> list[dict]:
    results = network_sim.simulate(network, simulator, BUILD / f"traffic-{case}-{simulator}",
                                   {network_sim.TRAFFIC_TEST: {"points": points,
                                                               "engine": engine}})
    return results[network_sim.TRAFFIC_TEST]["points"]


# Icarus: the slow tier (110 s).
@pytest.mark.parametrize("simulator", marked(runner.SIMULATORS, {"icarus"}), indirect=True)
def test_torus_zero_load_latency_and_every_pattern(simulator):
    """4x4 torus, DOR: from a node, the ring distances in one dimension are 0, 1, 2, 1, so
    the distances to all 16 nodes sum to 2 x 4 x 4 = 32 links, 32/15 per packet over the 15
    others; a packet crossing D links passes D + 1 routers: the first, from its PE, in the
    pipeline's cycles, the others in 2 (the split router's bypass, or the compact router's
    pipeline), so the mean zero-load latency is 3 + 2 x 32/15 = 109/15 = 7.27 cycles on the
    split router, 2 + 2 x 32/15 = 6.27 on the compact one (on Verilator: its 3,200 cycles
    were half of the Icarus run). Then every pattern once, each completing with
    nothing lost; all-pairs sends exactly 16 x 15. Then the harness's three faults, each
    counted exactly once, and (on Verilator) on/off against Bernoulli injection."""
    network = TwinNetworkConfig.from_dict({"radices": [4, 4], "configuration": "torus",
                                      "mode": "vc", "pipeline": PIPELINE})
    zero_load = [{"pattern": "uniform", "rate": 0.003, "warmup": 200, "measure": 3000}
                 ] if simulator == "verilator" else []
    points = zero_load + every_pattern(0.03, 400 if simulator == "verilator" else 200)
    points.append({"pattern": "all-pairs", "rate": 1 / 32, "warmup": 0, "measure": 15 * 32})
    faults = [{"pattern": "uniform", "rate": 0.03, "warmup": 0, "measure": 400, "fault": name}
              for name in ("misroute", "duplicate", "corrupt")]
    # (Long runs: on Verilator only.)
    bursts = [{"pattern": "uniform", "rate": 0.03, "warmup": 500, "measure": 4000,
               "injection": injection} for injection in ("bernoulli", "onoff")
              if simulator == "verilator"]
    results = run(network, simulator, "torus-4x4-vc", points + faults + bursts)
    assert [r["pattern"] for r in results] == [p["pattern"] for p in points + faults + bursts]
    misroute, duplicate, corrupt = results[len(points):len(points) + 3]
    for quiet in results[:len(zero_load)]:
        assert quiet["measured_packets"] > 100
        # (The first router adds its pipeline's cycles, each further one 2.)
        assert quiet["mean_latency"] == pytest.approx(PIPELINE + 2 * 32 / 15, abs=0.15)
    assert results[len(points) - 1]["packets"] == 16 * 15
    # Transpose: the 4 terminals on the diagonal send nothing, the other 12 send at 0.03.
    transpose = results[len(zero_load) + PATTERNS.index("transpose")]
    assert transpose["created_flits_per_pe_cycle"] == pytest.approx(0.03 * 4 * 12 / 16,
                                                                     rel=0.35)
    # Each injected fault is counted once, by the counter that names it, and nothing else is.
    assert [misroute["errors"], duplicate["errors"], corrupt["errors"]] == [
        {"wrong_destination": 1}, {"out_of_order": 1}, {"corrupt": 1}]
    assert [p["faults_applied"] for p in (misroute, duplicate, corrupt)] == [1, 1, 1]
    assert duplicate["packets"] == duplicate["created"] + 1  # received twice
    assert misroute["packets"] == misroute["created"] and corrupt["packets"] == corrupt["created"]
    if not bursts:
        return
    # On/off injection offers the same average load in bursts of 8 packets sent at the link's
    # rate, so packets wait longer at their sources than under Bernoulli injection.
    bernoulli, onoff = results[-2:]
    for point in (bernoulli, onoff):
        assert point["created_flits_per_pe_cycle"] == pytest.approx(0.03 * 4, rel=0.25)
    assert onoff["mean_total_latency"] > bernoulli["mean_total_latency"] + 1


#: What a point's result says about the simulation rather than the simulated design, and
#: the hops only the program counts.
RUN_KEYS = ("engine", "wall_seconds", "cycles_per_second", "packet_hops", "mean_hops",
            "max_hops", "max_latency", "latency_histogram", "injected_lengths")


def engines_network(family: str):
    """The network the engines are compared on: the 4x4 torus or the 2-ary 3-tree."""
    return TwinNetworkConfig.from_dict({"radices": [4, 4], "configuration": "torus", "mode": "vc",
                                   "pipeline": PIPELINE}) if family == "torus" else \
        FatTreeNetworkConfig.from_dict({"k": 2, "n": 3, "pipeline": PIPELINE})


# The fat tree: the slow tier (its cocotb build is most of 75 s; its program runs below).
@pytest.mark.parametrize("family", marked(["torus", "fat-tree"], {"fat-tree"}))
def test_the_program_counts_what_the_verilog_harness_counts(family, verilator):
    """The C++ program over separately Verilated modules is the Verilog harness cycle for
    cycle: the same points give the same counts and mean latencies on both engines (both on
    Verilator): uniform below and beyond saturation, a permutation, on/off bursts, sinks
    pushing back (refusals and stall bursts), a duplicated packet, a mix of lengths. The
    program, which sees the terminals, also measures each packet's latency: its histogram
    counts every measured packet once. Its sleeping routers and threads change nothing in any
    cycle (:func:`assert_the_same_every_cycle`)."""
    network = engines_network(family)
    points = [{"pattern": "uniform", "rate": 0.05, "warmup": 200, "measure": 1000},
              {"pattern": "uniform", "rate": 0.25, "warmup": 200, "measure": 1000},
              {"pattern": "tornado", "rate": 0.1, "warmup": 100, "measure": 500},
              {"pattern": "uniform", "rate": 0.05, "warmup": 100, "measure": 1000,
               "injection": "onoff", "burst": 4},
              {"pattern": "uniform", "rate": 0.1, "warmup": 100, "measure": 1000,
               "eject_ready": 0.4, "stall_bursts": 16},
              {"pattern": "uniform", "rate": 0.08, "warmup": 100, "measure": 1000,
               "lengths": [[1, 1, 1], [2, 4, 2]]},
              {"pattern": "uniform", "rate": 0.05, "warmup": 0, "measure": 300,
               "fault": "duplicate"}]
    engines = {engine: run(network, verilator, f"{family}-engines-{engine}", points, engine)
               for engine in ("program", "cocotb")}
    assert [p["engine"] for p in engines["program"]] == ["program"] * len(points)
    assert [p["engine"] for p in engines["cocotb"]] == ["cocotb"] * len(points)
    for program, cocotb in zip(engines["program"], engines["cocotb"]):
        assert {k: v for k, v in program.items() if k not in RUN_KEYS} == \
            {k: v for k, v in cocotb.items() if k not in RUN_KEYS}
        # (With the duplicate fault one measured packet arrives twice, under one head word.)
        counted = sum(program["latency_histogram"]) - program["measured_packets"]
        assert counted == 0 or program["fault"] == "duplicate" and counted in (0, 1)
        assert cocotb["max_latency"] is None
    assert engines["program"][1]["overflowed"] > 0  # beyond saturation
    assert engines["program"][-3]["refused"] > 1000  # pushed back
    assert engines["program"][-2]["lengths"] == [[1, 1, 1], [2, 4, 2]]
    assert set(engines["program"][-2]["injected_lengths"]) == {"1", "2", "3", "4"}
    assert engines["program"][-1]["errors"] == {"out_of_order": 1}
    assert_the_same_every_cycle(BUILD / f"traffic-{family}-engines-program-verilator",
                                network_sim.manifest_of(
                                    BUILD / f"traffic-{family}-engines-program-verilator"))


def assert_the_same_every_cycle(build_dir: Path, manifest: dict) -> None:
    """The program's shortcuts change no count in any cycle: plain (every model awake and
    evaluated before every clock edge), with its shortcuts (sleeping routers, models
    evaluated between edges only when an input that reaches an output changed), and both on
    two threads, the harness's counters, each router's flits held and each link's flits read
    the same after every cycle: a light load with idle routers, a burst beyond
    saturation in which the sinks refuse a quarter of the flits offered every other cycle (a
    sink's ready follows its refusal rate within the cycle: the path the program evaluates
    between edges), the drain."""
    from twinnet.program import EXECUTABLE
    from twinnet.program.driver import ProgramHarness

    executable = build_dir / "program" / EXECUTABLE
    scale = 1 << manifest["traffic"]["rate_bits"]

    async def drive(harness, key) -> list:
        seen = []
        for name, value in (("pattern", 0), ("seed", 7), ("rate", scale // 50),
                            ("enable", 0), ("measure", 1)):
            harness.set(name, value)
        await harness.reset()
        harness.set("enable", 1)
        for rate, refused, cycles in ((scale // 50, 0, 300), (scale // 2, scale // 4, 150),
                                      (0, 0, 150)):
            harness.set("rate", rate)
            for cycle in range(cycles):
                harness.set("refuse_rate", refused * (cycle % 2))
                await harness.cycles(1)
                seen.append((harness.read(), harness.held(), harness.links()))
                asleep.setdefault(key, []).append(harness.asleep())
        return seen

    runs, asleep = {}, {}
    for key in ((1, True), (1, False), (2, False), (2, True)):
        harness = ProgramHarness(executable, *key)
        try:
            runs[key] = asyncio.run(drive(harness, key))
        finally:
            harness.close()
    reference = runs[1, True]
    assert reference[-1][0]["received"] > 100  # traffic went through
    assert max(asleep[1, True]) == 0
    assert max(asleep[1, False][:300]) > 0  # routers slept under the light load
    for key, seen in runs.items():
        for cycle, (expected, got) in enumerate(zip(reference, seen)):
            assert got == expected, f"threads {key[0]}, plain {key[1]}: cycle {cycle} differs"


@pytest.mark.slow  # about a minute; the fat tree's hops run in test_fat_tree_network.py
def test_fat_tree_link_loads_and_a_short_soak_on_the_program(verilator):
    """The 2-ary 3-tree on the program: under all-pairs every link carries exactly the
    model's paths; then a short soak with back-pressure (8 PEs, 50,000 cycles; the twin
    tori's is the 3DT's below)."""
    network = engines_network("fat-tree")
    pairs, soak = run(network, verilator, "ft-2x3-program",
                      [{"pattern": "all-pairs", "rate": 1 / 32, "warmup": 0,
                        "measure": 31 * network.max_packet_length, "count_links": True},
                       soak_point(1 / network.max_packet_length, 50_000)], "program")
    assert_link_packets(pairs["link_loads"], family_for(network), network,
                        network_sim.manifest_of(BUILD / "traffic-ft-2x3-program-verilator"))
    assert_soaked(soak)


@pytest.mark.slow  # 75 s of Icarus
def test_fat_tree_all_pairs_and_saturation_on_icarus(icarus):
    """The 2-ary 3-tree of twin switches: all pairs (8 x 7 packets), then a saturating uniform
    load (every source queue fills up, packets are refused at the source, none is lost in the
    network) that drains, then every other pattern."""
    network = FatTreeNetworkConfig.from_dict({"k": 2, "n": 3, "pipeline": PIPELINE})
    results = run(network, icarus, "ft-2x3", [
        {"pattern": "all-pairs", "rate": 1 / 32, "warmup": 0, "measure": 7 * 32},
        {"pattern": "uniform", "rate": 0.25, "warmup": 300, "measure": 1000},
        *every_pattern(0.05, 200)])
    assert results[0]["packets"] == 8 * 7
    assert [r["pattern"] for r in results[2:]] == [p for p in PATTERNS if p != "all-pairs"]
    saturated = results[1]
    assert saturated["overflowed"] > 0
    assert 0 < saturated["accepted_flits_per_pe_cycle"] < 1


@pytest.mark.slow  # 80 s; the model counts 003's 85 packets a link by brute force by default
def test_3dt_under_saturation_on_verilator(verilator):
    """3DT 3x3x3 in configuration D, bubble flow control, every PE offering a flit per cycle
    for 5,000 cycles: the network keeps delivering (no watchdog) and drains completely; then
    every pattern at a moderate load (54 terminals: the fixed patterns' non-power-of-two
    mappings of docs/traffic.md); last, a short soak with back-pressure (20,000 packets or
    more)."""
    network = TwinNetworkConfig.from_dict({"radices": [3, 3, 3], "configuration": "D",
                                      "mode": "bubble", "pipeline": PIPELINE})
    results = run(network, verilator, "3dt-3x3x3", [
        {"pattern": "uniform", "rate": 0.25, "warmup": 1000, "measure": 5000},
        {"pattern": "tornado", "rate": 0.25, "warmup": 1000, "measure": 2000},
        *every_pattern(0.03, 500),
        {"pattern": "all-pairs", "rate": 1 / 16, "warmup": 0, "measure": 53 * 16,
         "count_links": True},
        soak_point(1 / network.max_packet_length, 14_000)])
    for point in results[:2]:
        assert point["packets"] > 5000 and point["overflowed"] > 0
    assert [r["pattern"] for r in results[2:-1]] == list(PATTERNS)
    assert results[-2]["packets"] == 54 * 53
    assert_link_packets(results[-2]["link_loads"], family_for(network), network,
                        network_sim.manifest_of(BUILD / "traffic-3dt-3x3x3-verilator"))
    # Each direction of each internal link: the brute force of 003's DOR (85 packets at k 3).
    internal = measured_internal_packets(results[-2]["link_loads"])
    assert internal == packets_per_link(crossings(3, "D"))
    assert set(internal.values()) == {85}
    assert_soaked(results[-1])


# Icarus: the slow tier (54 PEs all-pairs through cocotb; the program runs it above).
@pytest.mark.slow
def test_3dt_link_counters_on_icarus(icarus):
    """3DT 3x3x3 in configuration D under all-pairs through cocotb on Icarus: the link
    counters of the Verilog harness count on every link, internal links included, the
    packets of the model's paths (the program's are checked above)."""
    network = TwinNetworkConfig.from_dict({"radices": [3, 3, 3], "configuration": "D",
                                      "mode": "bubble", "pipeline": PIPELINE})
    (pairs,) = run(network, icarus, "3dt-3x3x3-links", [
        {"pattern": "all-pairs", "rate": 1 / 16, "warmup": 0, "measure": 53 * 16,
         "count_links": True}])
    assert pairs["packets"] == 54 * 53 and pairs["engine"] == "cocotb"
    assert_link_packets(pairs["link_loads"], family_for(network), network,
                        network_sim.manifest_of(BUILD / "traffic-3dt-3x3x3-links-icarus"))


def test_the_watchdog_stops_a_deadlocked_torus_with_one_line(verilator):
    """The 4x4 torus with one VC and no bubble (a deadlock the model finds) under saturating
    uniform traffic on the C++ program: the watchdog stops the run with one line naming the
    cycle, the packets in flight and the routers holding flits; those flits are the packets
    in flight and part of the queued ones (a packet stuck while being injected)."""
    network = TwinNetworkConfig.from_dict({"radices": [4, 4], "configuration": "torus",
                                      "mode": "none", "pipeline": PIPELINE})
    with pytest.raises(network_sim.SimulationFailed) as failure:
        run(network, verilator, "torus-4x4-none",
            [{"pattern": "uniform", "rate": 0.25, "warmup": 0, "measure": 20_000,
              "watchdog": 2000}], "program")
    assert failure.value.cause == "deadlock", failure.value.summary
    assert_deadlock_report(failure.value.summary)
    found = re.search(r"(\d+) packets in flight and (\d+) queued.* hold (\d+) flits",
                      failure.value.summary)
    in_flight, queued, flits = map(int, found.groups())
    length = network.max_packet_length
    # Injected packets not received are whole in the network, or partly ejected; a queued
    # packet may be partly injected.
    assert flits <= in_flight * length + queued * (length - 1)
    assert flits > (in_flight - 16) * length  # at most one packet per PE partly ejected


def test_a_failure_crosses_process_boundaries():
    """A failed point in a sweep's worker process reaches the parent whole."""
    import pickle

    failure = network_sim.SimulationFailed("hardware_traffic", "deadlock", "no packet moved")
    copy = pickle.loads(pickle.dumps(failure))
    assert (copy.test, copy.cause, copy.summary) == (failure.test, failure.cause, failure.summary)


@pytest.mark.slow
@pytest.mark.usefixtures("verilator")
def test_a_deadlock_with_waves_leaves_the_waveform_beside_its_log(tmp_path, capsys):
    """``twinnet sim --waves`` on the deadlocking 4x4 torus: the run goes through the Verilog
    harness, stops with the watchdog's line, and the waveform (ending with the cycles before
    the stop) and the log sit in the folder the line names. Slow tier (a traced build)."""
    from twinnet.cli.main import main

    status = main(["sim", "torus", "--n", "2", "--k", "4", "--mode", "none", "--rate", "0.25",
                   "--packets", "20000", "--waves", "--out", str(tmp_path)])
    err = capsys.readouterr().err.splitlines()
    assert status == 1
    assert "deadlock: nothing moved for" in err[-1]
    folder = Path(re.search(r"details in (\S+)/test\.log", err[-1]).group(1))
    assert (folder / "test.log").exists() and (folder / "dump.vcd").stat().st_size > 0


def test_the_verilog_harness_is_generated_only_for_the_cocotb_engine(tmp_path):
    """The engine is chosen before generation: the program needs no Verilog harness top (its
    manifest says so); Icarus, waveforms or the link faults do."""
    from twinnet.gen.generate import generate_network
    from twinnet.program.driver import chosen

    point = {"pattern": "uniform", "rate": 0.05}
    assert chosen("auto", "verilator", False, 32, [point])
    assert not chosen("auto", "icarus", False, 32, [point])
    assert not chosen("auto", "verilator", True, 32, [point])
    assert not chosen("auto", "verilator", False, 32, [{**point, "fault": "corrupt"}])
    assert not chosen("auto", "verilator", False, 62, [point])  # wider than the program's
    assert not chosen("cocotb", "verilator", False, 32, [point])
    network = TwinNetworkConfig.from_dict({"radices": [3, 3], "configuration": "torus",
                                      "mode": "bubble"})
    for harness in (False, True):
        files = generate_network(network, tmp_path / str(harness), traffic=True,
                                 harness=harness)
        traffic = json.loads(files[-1].read_text())["traffic"]
        names = {path.name for path in files}
        assert (f"{network.name}_traffic.v" in names) == harness
        assert traffic["verilog"] == (f"{network.name}_traffic.v" if harness else None)
        assert traffic["tables"] == f"{network.name}_traffic.hpp"
        assert {traffic["program"], traffic["engine"], traffic["tables"]} <= names
        assert bool(traffic["ports"]) == harness


@pytest.mark.slow  # two builds of the 4x4 torus
def test_input_buffers_in_block_ram_change_no_cycle(verilator):
    """``buffer_memory = "block"`` reads each input VC buffer synchronously, a cycle ahead
    (block RAM on an FPGA): the 4x4 torus counts exactly what it counts with the buffers in
    LUT RAM, below and beyond saturation, with sinks pushing back and with packets of several
    lengths, every packet delivered once, intact and in order (the harness checks)."""
    points = [{"pattern": "uniform", "rate": 0.05, "warmup": 100, "measure": 600},
              {"pattern": "uniform", "rate": 0.25, "warmup": 100, "measure": 600},
              {"pattern": "uniform", "rate": 0.1, "warmup": 100, "measure": 600,
               "eject_ready": 0.4, "stall_bursts": 16, "lengths": [[1, 1, 1], [2, 4, 2]]}]
    found = {}
    for memory in ("lut", "block"):
        network = TwinNetworkConfig.from_dict({"radices": [4, 4], "configuration": "torus",
                                               "mode": "vc", "pipeline": PIPELINE,
                                               "buffer_memory": memory})
        found[memory] = run(network, verilator, f"torus-buffers-{memory}", points, "program")
    assert found["block"][1]["overflowed"] > 0  # beyond saturation
    for lut, block in zip(found["lut"], found["block"], strict=True):
        assert block["packets"] > 100 and not block["errors"]
        assert {k: v for k, v in block.items() if k not in RUN_KEYS} == \
            {k: v for k, v in lut.items() if k not in RUN_KEYS}
