"""``twinnet sweep``: points run in parallel here or on a Dask cluster; JSON, CSV and plot."""

import csv
import json

import pytest

from twinnet.cli.main import main
from twinnet.sim_tb import runner

ARGV = ["sweep", "torus", "--radix", "3,3", "--mode", "vc", "--simulator", "icarus",
        "--loads", "0.05,0.2,0.95", "--warmup", "100", "--measure", "400"]


def sweep(tmp_path, capsys, *extra):
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    status = main([*ARGV, *extra, "--out", str(tmp_path), "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out), captured.err


def check(data, tmp_path):
    points = sorted(data["points"], key=lambda p: p["rate"])
    assert [p["offered_flits_per_pe_cycle"] for p in points] == pytest.approx([0.05, 0.2, 0.95])
    # Below saturation a point accepts what it offers (within the Bernoulli noise of 400
    # cycles x 9 PEs); at 0.95 flits per cycle per PE the source queues overflow.
    assert points[0]["accepted_flits_per_pe_cycle"] == pytest.approx(0.05, rel=0.3)
    assert points[2]["overflowed"] > 0
    assert points[0]["mean_latency"] < points[2]["mean_latency"]
    # The model's bound on a 3x3 torus under uniform traffic: 9 PEs, 36 unidirectional
    # links, 12/8 = 1.5 links per packet (ring distances 0, 1, 1 per dimension, 12 in all
    # over the 8 others): 9 x 1.5 / 36 = 0.375 packets per link per unit rate, so the links
    # carry 1/0.375 > 1 flit per PE per cycle: the PE port's 1 is the bound.
    assert data["model_throughput_bound"] == pytest.approx(1.0)
    stem = tmp_path / "torus2_k3_vc-sweep"
    rows = list(csv.DictReader(stem.with_suffix(".csv").open()))
    assert len(rows) == 3
    assert stem.with_suffix(".png").stat().st_size > 1000


# The slow tier's (70 s): the default suite sweeps on local cores in
# test_stall_counters_on_the_program, and checks this sweep's figures on a Dask cluster.
@pytest.mark.slow
def test_sweep_on_local_cores(tmp_path, capsys):
    data, err = sweep(tmp_path, capsys, "--jobs", "2")
    check(data, tmp_path)
    assert "point 3/3 done" in err  # progress on stderr


def test_sweep_on_a_dask_cluster(tmp_path, capsys):
    """On a Dask cluster, with PEs pushing back (the loads stay far below what they take)."""
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        data, _ = sweep(tmp_path, capsys, "--scheduler", cluster.scheduler_address,
                        "--eject-ready", "0.7", "--stall-bursts", "8")
    check(data, tmp_path)
    for point in data["points"]:
        assert (point["eject_ready"], point["stall_bursts"]) == (0.7, 8)
        assert point["refused"] > 0


def test_unreachable_scheduler_is_one_line(tmp_path, capsys):
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    status = main([*ARGV, "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path)])
    err = capsys.readouterr().err.splitlines()
    assert status == 2
    assert err[-1].startswith("twinnet: --scheduler tcp://127.0.0.1:9: cannot connect")


def test_stall_counters_on_the_program(tmp_path, capsys):
    """``--stalls``: each point reports why waiting heads were not allocated. Every waiting
    head-cycle has at most one reason (the rest were granted); at 0.02 flits/PE/cycle packets
    rarely meet, past saturation most waiting head-cycles have a reason."""
    if runner.missing("verilator"):
        pytest.skip(runner.missing("verilator"))
    argv = ["sweep", "torus", "--radix", "3,3", "--mode", "vc", "--simulator", "verilator",
            "--loads", "0.02,0.95", "--warmup", "200", "--measure", "1000", "--stalls"]
    assert main([*argv, "--out", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    points = sorted(json.loads(captured.out)["points"], key=lambda p: p["rate"])
    shares = []
    for point in points:
        stalls = point["stalls"]
        waited = sum(stalls[r] for r in ("arbitration", "output", "credits", "bubble"))
        assert stalls["heads"] > 0 and waited <= stalls["heads"]
        shares.append(waited / stalls["heads"])
    # Below saturation a packet is granted once in each router it crosses: 1 + 1.5 on
    # average on the 3x3 torus (see check()), so the granted head-cycles of the window are
    # about 2.5 per packet created in it.
    low = points[0]["stalls"]
    granted = low["heads"] - sum(low[r] for r in ("arbitration", "output", "credits", "bubble"))
    assert granted == pytest.approx(2.5 * points[0]["measured_packets"], rel=0.25)
    assert shares[0] < 0.1 < 0.5 < shares[1]
    # The same sweep on 2 MPI ranks of the program: every point's figures are the same.
    from twinnet.program.driver import mpi_missing

    if mpi_missing(2):
        pytest.skip(mpi_missing(2))
    assert main([*argv, "--ranks", "2", "--out", str(tmp_path), "--json"]) == 0
    on_ranks = sorted(json.loads(capsys.readouterr().out)["points"], key=lambda p: p["rate"])
    timing = ("wall_seconds", "cycles_per_second")
    assert [{k: v for k, v in p.items() if k not in timing} for p in on_ranks] == [
        {k: v for k, v in p.items() if k not in timing} for p in points]


def test_stall_counters_need_the_program(tmp_path, capsys):
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    status = main([*ARGV, "--stalls", "--out", str(tmp_path)])
    err = capsys.readouterr().err.splitlines()
    assert status == 2
    assert err[-1] == ("twinnet: --stalls: the stall counters are read by the Verilator traffic "
                       "program, not on --simulator icarus")


@pytest.mark.slow  # about 45 s on both cores
def test_knee_of_the_8x8_torus_over_three_seeds(tmp_path, capsys):
    """``--knee 0.01``: from a grid 0.1 apart, bisection brackets the saturation of the 8x8
    torus (DOR, 2 VCs) within 0.01 flits/PE/cycle; the bracket holds by the definition,
    checked here from the points (mean accepted over the 3 seeds below 95 % of the offered
    load above it, not below it); every load has the 3 seeds, with their spread; the knee
    lies below the model's channel-load bound (which the network cannot exceed)."""
    if runner.missing("verilator"):
        pytest.skip(runner.missing("verilator"))
    argv = ["sweep", "torus", "--radix", "8,8", "--mode", "vc", "--loads", "0.2,0.3,0.4,0.5,0.6",
            "--seeds", "1,2,3", "--warmup", "500", "--measure", "2000", "--knee", "0.01",
            "--jobs", "2"]
    assert main([*argv, "--out", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    knee = data["knee"]
    assert knee["located"] and 0 < knee["saturated"] - knee["unsaturated"] <= 0.01
    assert "knee between" in captured.err  # progress of the bisection
    accepted = {}
    for point in data["points"]:
        accepted.setdefault(round(point["offered_flits_per_pe_cycle"], 9), []).append(
            point["accepted_flits_per_pe_cycle"])
    assert all(len(values) == 3 for values in accepted.values())
    assert len(accepted) > 5  # the bisection added loads
    for load, saturated in ((knee["unsaturated"], False), (knee["saturated"], True)):
        values = accepted[round(load, 9)]
        assert (sum(values) / 3 < 0.95 * load) == saturated
    assert all(row["seeds"] == 3 and row["accepted_std"] >= 0 for row in data["loads"])
    assert any(row["accepted_std"] > 0 for row in data["loads"])
    assert knee["unsaturated"] < data["model_throughput_bound"]


@pytest.mark.slow  # 40 s; twinnet sim's link loads run in the default suite
def test_link_loads_of_every_point_and_blocked_cycles(tmp_path, capsys):
    """``--link-loads``: every point reports every link's counts from the link counters; a
    link's flits are the sum over its VCs (the 3x3 torus in mode vc has 2); at 0.02
    flits/PE/cycle no VC's buffer fills (``blocked`` 0 everywhere), past saturation buffers
    fill on the network links and the sources wait at injection; a load map per point."""
    if runner.missing("verilator"):
        pytest.skip(runner.missing("verilator"))
    argv = ["sweep", "torus", "--radix", "3,3", "--mode", "vc", "--simulator", "verilator",
            "--loads", "0.02,0.95", "--warmup", "200", "--measure", "1000", "--jobs", "1",
            "--link-loads", str(tmp_path / "maps" / "loads.svg")]
    (tmp_path / "maps").mkdir()
    assert main([*argv, "--out", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    points = sorted(json.loads(captured.out)["points"], key=lambda p: p["rate"])
    for point in points:
        loads = point["link_loads"]
        assert len(loads) == 9 * 4 + 2 * 9  # 4 channels leave each router; 9 PEs
        for load in loads:
            assert sum(row["flits"] for row in load["vc"]) == load["flits"]
            assert sum(row["packets"] for row in load["vc"]) == load["packets"]
            assert sum(row["blocked"] for row in load["vc"]) == load["blocked"]
            assert len(load["vc"]) == (2 if "link" in load else 1)
        assert sum(load["flits"] for load in loads if load["channel"] == "injection") > 0
    low, high = ([load["blocked"] for load in point["link_loads"]] for point in points)
    assert max(low) == 0
    links = [load for load in points[1]["link_loads"] if "link" in load]
    assert sum(load["blocked"] for load in links) > 0
    assert sum(load["blocked"] for load in points[1]["link_loads"]
               if load["channel"] == "injection") > 0
    for offered in ("0.020", "0.950"):
        assert (tmp_path / "maps" / f"loads-{offered}-s1.svg").is_file()
        assert (tmp_path / "maps" / f"loads-{offered}-s1-histogram.svg").is_file()


def test_a_first_point_that_fails_is_reported_with_the_others(tmp_path, capsys, monkeypatch):
    """The first point builds the network and runs; when it fails (here it deadlocks) the
    sweep still writes its results and ends with one line naming the failure, exit 1 (no
    traceback)."""
    from twinnet.sim_tb import network_sim

    summary = "hardware_traffic: deadlock: nothing moved for 3160 cycles"

    def deadlocked(*args, **kwargs):
        raise network_sim.SimulationFailed("hardware_traffic", "deadlock", summary)

    monkeypatch.setattr(network_sim, "simulate", deadlocked)
    status = main(["sweep", "torus", "--radix", "3,3", "--loads", "0.3", "--out",
                   str(tmp_path)])
    err = capsys.readouterr().err.splitlines()
    assert status == 1 and "Traceback" not in "\n".join(err)
    assert err[-1].startswith(f"twinnet: 1 of 1 points failed, first: {summary} (results in "), \
        err[-1]
    [written] = tmp_path.glob("*-sweep.json")
    assert json.loads(written.read_text())["points"][0]["failure"] == summary


def test_sweep_through_the_interfaces(tmp_path, capsys):
    """``--ni axi-stream``: every point sends frames through the AXI4-Stream interfaces (the
    cocotb test ``load``, every frame checked); loads in flits per PE per cycle, a frame's
    heads counted."""
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    status = main(["sweep", "torus", "--radix", "2,2", "--ni", "axi-stream",
                   "--ni-frame-packets", "2", "--simulator", "icarus", "--loads", "0.1,0.95",
                   "--warmup", "100", "--measure", "1000", "--jobs", "1", "--out",
                   str(tmp_path), "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    data = json.loads(captured.out)
    # By hand: 32-bit flits hold 3-byte beats, packets of up to 4 flits 3 beats, so frames of
    # 1 to 2 x 3 x 3 = 18 bytes: 1 to 6 beats (3 sizes each) take 2, 3, 4, 6, 7, 8 flits with
    # their heads, 5 on average.
    assert data["frames"]["sizes"] == [1, 18] and data["frames"]["mean_flits"] == 5.0
    low, high = sorted(data["points"], key=lambda p: p["rate"])
    assert [low["offered_flits_per_pe_cycle"], high["offered_flits_per_pe_cycle"]] == [0.1, 0.95]
    assert low["rate"] == pytest.approx(0.1 / 5)  # frames per PE per cycle
    # Below saturation a point accepts what it makes (within the Bernoulli noise of 1000
    # cycles x 4 PEs, about 80 frames); at 0.95 the interfaces cannot take it all.
    assert low["made_flits_per_pe_cycle"] == pytest.approx(0.1, rel=0.3)
    assert low["accepted_flits_per_pe_cycle"] == pytest.approx(0.1, rel=0.3)
    assert high["accepted_flits_per_pe_cycle"] < 0.9 * high["made_flits_per_pe_cycle"]
    assert high["mean_latency"] > 2 * low["mean_latency"] > 0
    assert low["measured_frames"] > 40
    files = [tmp_path / f"{data['network']}-sweep.{suffix}" for suffix in ("json", "csv", "png")]
    assert all(path.exists() for path in files)
