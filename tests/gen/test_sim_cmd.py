"""``twinnet sim`` and ``twinnet demo``: help, errors before anything is built, a real run."""

import json
import re
from pathlib import Path

import pytest
from link_counts import assert_link_packets
from tiers import marked

from twinnet.cli.main import main
from twinnet.sim_tb import runner


@pytest.mark.parametrize("command", ["sim", "demo"])
def test_help(capsys, command):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--simulator", "--packets", "--rate", "--waves", "--no-trace", "--json"):
        assert flag in out


@pytest.mark.parametrize("argv, message", [
    (["--rate", "0"], r"--rate 0: must be above 0 and at most 1"),
    (["--rate", "1.5"], r"--rate 1.5: must be above 0 and at most 1"),
    (["--rate", "0.3"], r"--rate 0.3: must be above 0 and at most 1/4 = 0.25 packets per PE"),
    (["--rate", "1e-9"], r"--rate 1e-9: 2000 packets on 18 PEs would need more than "
                         r"1,000,000 cycles of injection; the rate must be at least 0.000111"),
    (["--packets", "0"], r"--packets must be an integer from 1 to 1000000, not 0"),
    (["--eject-ready", "0"], r"--eject-ready 0: must be a probability from 0.01 to 1"),
    (["--stall-bursts", "4", "--check", "hops"], r"--stall-bursts 4: applies to --check "
                                                 r"end-to-end"),
    (["--stall-bursts", "10001"], r"--stall-bursts must be an integer from 0 to 10000"),
    (["--check", "hops", "--traffic", "tornado"], r"--traffic tornado: --check hops drives "
                                                  r"uniform and all-pairs only"),
    (["--warmup", "-1"], r"--warmup must be an integer from 0 to 1000000, not -1"),
    (["--traffic", "hotspot", "--hotspot-fraction", "2"], r"--hotspot-fraction 2: must be "),
    (["--k", "1"], r"--k must be an integer >= 2, not 1"),
    (["--config", "Q"], r"--config Q: configuration 'Q' is not one of"),
    # 3x3 twin torus: 2 + 2 digit bits, the PE bit and 5 source bits leave no room for the
    # testbench's 4-bit sequence numbers in a 12-bit flit.
    (["--flit-width", "12"], r"--flit-width 12: .* the flit width must be at least 14"),
])
def test_bad_parameters_stop_before_building(tmp_path, capsys, argv, message):
    assert main(["sim", "--n", "2", "--k", "3", *argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("twinnet: ") and err.count("\n") == 1, err
    assert re.search(message, err), err
    assert not any(tmp_path.iterdir()), "nothing may be built for a bad parameter"


def test_simulates_a_small_network_on_icarus(tmp_path, capsys):
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    argv = ["sim", "--radix", "3,2", "--config", "C_Best", "--mode", "vc", "--check", "hops",
            "--simulator", "icarus", "--packets", "60", "--rate", "0.05",
            "--out", str(tmp_path), "--json"]
    status = main(argv)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    data = json.loads(captured.out)
    results = data["results"]
    assert results["packets"] == 60 and results["hops_checked"]
    assert data["traffic"] == {"pattern": "uniform", "packets": 60, "rate": 0.05,
                               "eject_ready": 1.0, "seed": 1, "lengths": [[4, 4, 1.0]]}
    # Offered load is the rate times the packet length (4 flits by default).
    assert results["offered_flits_per_pe_cycle"] == pytest.approx(0.2)
    # Hand bound: a packet crosses at least its source card and its destination card's PE
    # port, 2 cycles per router (docs/network.md), so at least 2 routers = 4 cycles.
    assert results["mean_latency"] >= 4
    assert results["flits"] == 60 * 4
    assert data["network"] == "ndt2_3x2_C_Best_vc"
    assert "generated ndt2_3x2_C_Best_vc: 12 routers" in captured.err  # progress on stderr
    # A second call of the same network reuses the Verilog (no generation, no deadlock
    # check) and the build, and measures the same.
    status = main(argv)
    again = capsys.readouterr()
    assert status == 0, again.err
    assert "reusing the generated ndt2_3x2_C_Best_vc: 12 routers" in again.err
    assert json.loads(again.out)["results"]["mean_latency"] == results["mean_latency"]


def test_the_generation_fingerprint_follows_parameters_and_options():
    from twinnet.model.twin_network import TwinNetworkConfig
    from twinnet.sim_tb.network_sim import generation_fingerprint

    def network(**values):
        return TwinNetworkConfig.from_dict({"radices": [3, 3], "configuration": "torus", **values})

    same = generation_fingerprint(network(), None, trace=True)
    assert generation_fingerprint(network(), None, trace=True) == same
    assert generation_fingerprint(network(), None, trace=False) != same
    assert generation_fingerprint(network(buffer_depth=16), None, trace=True) != same


@pytest.mark.parametrize("cause, summary", [
    ("check", "uniform_traffic: the scoreboard found 3 errors, first: packet (0, 1) corrupted"),
    ("deadlock", "uniform_traffic: deadlock: no flit moved for 2000 cycles"),
])
def test_failed_checks_exit_1_with_one_line(tmp_path, capsys, monkeypatch, cause, summary):
    """A simulation whose scoreboard fails, or that deadlocks, is reported in one line that
    says which, with exit status 1."""
    from twinnet.sim_tb import network_sim

    def failing(*args, **kwargs):
        raise network_sim.SimulationFailed("uniform_traffic", cause, summary)

    monkeypatch.setattr(network_sim, "simulate", failing)
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    assert main(["sim", "--radix", "3,3", "--simulator", "icarus", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (f"twinnet: ndt2_k3_C_Best_bubble on icarus: {summary}; details in "
                       f"{tmp_path / 'ndt2_k3_C_Best_bubble-icarus-traffic' / 'test.log'}")


@pytest.mark.slow  # a minute of Icarus; test_traffic_network.py's watchdog case is the default's
def test_a_deadlock_is_reported_as_one(tmp_path, capsys):
    """Twin DOR without deadlock avoidance (mode none) and one-packet buffers under saturating
    uniform traffic on 3x2x3 (003 Example 6.1's shape) deadlocks: the one line says so and
    names the log, not a scoreboard error."""
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    status = main(["sim", "--radix", "3,2,3", "--config", "D", "--mode", "none", "--check",
                   "hops", "--buffer-depth", "4", "--rate", "0.25", "--packets", "3000",
                   "--simulator", "icarus", "--out", str(tmp_path)])
    err = capsys.readouterr().err.splitlines()
    assert status == 1
    log = tmp_path / "ndt3_3x2x3_D_none_d4-icarus" / "test.log"
    assert re.fullmatch(r"twinnet: ndt3_3x2x3_D_none_d4 on icarus: uniform_traffic: deadlock: "
                        r"no flit moved for 2000 cycles with \d+ packets in flight \(cycle \d+\); "
                        rf"details in {re.escape(str(log))}", err[-1]), err[-1]
    assert "stuck channels" in log.read_text()


def test_fat_tree_all_pairs_reports_hops_and_crossings(tmp_path, capsys):
    """``twinnet sim fat-tree --traffic all-pairs``: every hop checked; mean_hops equals the
    reference model's mean over all ordered pairs; the internal crossings per twin switch are
    001's k**(n+1)/2 = 4 below the last stage of the 2-ary 2-tree, 0 at the last."""
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    from twinnet.model.fat_tree import FatTreeNetworkConfig, router_hops

    status = main(["sim", "fat-tree", "--k", "2", "--n", "2", "--simulator", "icarus",
                   "--check", "hops", "--traffic", "all-pairs", "--out", str(tmp_path), "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    data = json.loads(captured.out)
    assert data["family"] == "fat-tree" and data["network"] == "fattree_k2_n2_optimal_r1"
    results = data["results"]
    assert results["packets"] == 4 * 3 and results["hops_checked"]
    network = FatTreeNetworkConfig.from_dict({"k": 2, "n": 2})
    hops = [len(router_hops(network, s, d)) for s in range(4) for d in range(4) if s != d]
    assert results["mean_hops"] == pytest.approx(sum(hops) / len(hops))
    assert sorted((c["stage"], c["crossings"]) for c in results["internal_crossings"]) == \
        [(0, 4), (0, 4), (1, 0), (1, 0)]


# Verilator in the slow tier (the program's link counters are checked against the model's
# paths in test_traffic_network.py's 3DT case).
@pytest.mark.parametrize("simulator", marked(["verilator", "icarus"], {"verilator"}))
def test_link_loads_are_the_models_paths_and_drawn(tmp_path, capsys, simulator):
    """``twinnet sim --traffic all-pairs --link-loads FILE`` on the 4x4 torus, its link
    counters read by the C++ program on Verilator (which holds them to its own count of the
    links it copies) and through cocotb on Icarus: every link's packets are the model's (each
    ordered pair's path counted on its links), each VC's counts add up to the link's, every
    terminal injects and ejects 15 packets, and the load map and its histogram are written,
    one line per link of the drawing."""
    if runner.missing(simulator):
        pytest.skip(runner.missing(simulator))
    from twinnet.families import family_for
    from twinnet.model.twin_network import TwinNetworkConfig

    picture = tmp_path / "loads.svg"
    status = main(["sim", "torus", "--n", "2", "--k", "4", "--mode", "vc", "--traffic",
                   "all-pairs", "--simulator", simulator, "--link-loads", str(picture),
                   "--out", str(tmp_path), "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    data = json.loads(captured.out)
    assert data["results"]["engine"] == ("program" if simulator == "verilator" else "cocotb")
    assert all(len(load["vc"]) == (2 if "link" in load else 1)
               for load in data["results"]["link_loads"])
    network = TwinNetworkConfig.from_dict(data["parameters"])
    manifest = json.loads(next(Path(data["build_dir"]).glob("rtl/*.manifest.json")).read_text())
    assert_link_packets(data["results"]["link_loads"], family_for(network), network, manifest)
    drawn = picture.read_text()
    assert drawn.count('id="link:') == 2 * 4 * 4  # 16 nodes x 2 dimensions, one per link pair
    assert (tmp_path / "loads-histogram.svg").is_file()


def test_broadcast_fraction_1_on_the_default_engine_is_reported(tmp_path, capsys, monkeypatch):
    """``--broadcast-fraction 1`` reaches the hardware point as given, and a run in which
    every packet was a broadcast (no unicast latency or hops) is reported, not a crash (the
    simulation is replaced by its result here; tests/sim/test_king_network.py runs it)."""
    from twinnet.sim_tb import network_sim

    seen = {}

    def simulated(network, simulator, build_dir, tests, **kwargs):
        point = tests[network_sim.TRAFFIC_TEST]["points"][0]
        seen.update(point)
        return {network_sim.TRAFFIC_TEST: {"points": [{
            **point, "engine": "program", "packets": 0, "created": 40, "overflowed": 0,
            "offered_flits_per_pe_cycle": 0.08, "accepted_flits_per_pe_cycle": 0.9,
            "mean_latency": None, "mean_total_latency": None, "max_latency": 0,
            "measured_packets": 0, "mean_hops": None, "max_hops": None, "refused": 0,
            "broadcasts_sent": 40, "broadcast_copies_delivered": 600,
            "copies_per_broadcast": 15, "cycles": 500, "wall_seconds": 0.1,
            "cycles_per_second": 5000.0}]}}

    monkeypatch.setattr(network_sim, "simulate", simulated)
    if runner.missing("verilator"):
        pytest.skip(runner.missing("verilator"))
    assert main(["sim", "king", "--kind", "KT", "--side", "4", "--broadcast",
                 "--broadcast-fraction", "1", "--out", str(tmp_path)]) == 0
    assert seen["broadcast_fraction"] == 1.0 and seen["pattern"] == "uniform"
    out = capsys.readouterr().out
    assert "40 sent, 600 copies delivered" in out
    assert "no measured unicast packet (every packet was a broadcast)" in out
