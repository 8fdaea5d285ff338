"""``twinnet sweep``: points run in parallel here or on a Dask cluster; JSON, CSV and plot."""

import csv
import json

import pytest

from twinnet.gen.cli import main
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


def test_sweep_on_local_cores(tmp_path, capsys):
    data, err = sweep(tmp_path, capsys, "--jobs", "2")
    check(data, tmp_path)
    assert "point 3/3 done" in err  # progress on stderr


def test_sweep_on_a_dask_cluster(tmp_path, capsys):
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        data, _ = sweep(tmp_path, capsys, "--scheduler", cluster.scheduler_address)
    check(data, tmp_path)


def test_unreachable_scheduler_is_one_line(tmp_path, capsys):
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    status = main([*ARGV, "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path)])
    err = capsys.readouterr().err.splitlines()
    assert status == 2
    assert err[-1].startswith("twinnet: --scheduler tcp://127.0.0.1:9: cannot connect")
