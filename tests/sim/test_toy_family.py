"""A toy family (a ring, ``toy_ring.py``: under 100 lines) plugged into the framework without
editing shared code: the shared generator, top, bench, scoreboard and driver generate it, check
every hop against its model relation and drop its malformed headers."""

import sys
from pathlib import Path

from toy_ring import Ring, RingFamily

from twinnet.sim_tb import network_sim

BUILD = Path(__file__).resolve().parents[2] / "build" / "sim"


def test_a_ring_plugs_in(monkeypatch, icarus):
    # The cocotb process imports the plug-in the manifest names (toy_ring.RingFamily).
    here = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", ":".join(filter(None, [here, *sys.path])))
    ring = Ring(5)
    results = network_sim.simulate(ring, icarus, BUILD / "toy-ring5-icarus", {
        "uniform_traffic": {"packets": 400, "rate": 0.05},
        "malformed_dropped": {"packets": 100, "malformed": 10},
        "all_pairs": {}}, family=RingFamily())
    assert results["uniform_traffic"]["packets"] == 400
    assert results["uniform_traffic"]["hops_checked"]
    assert results["malformed_dropped"]["drop_count"] == 10
    # All pairs on a 5-ring: distances 1, 2, 3, 4 from every source, mean 2.5.
    assert results["all_pairs"]["packets"] == 20 and results["all_pairs"]["mean_hops"] == 2.5
