"""Simulated cycles per second: traffic in hardware against the cocotb-driven bench.

The issue's anchor configuration: the 8×8 torus (configuration ``torus``, 2 VCs, mode ``vc``,
8-flit buffers per VC, 4-flit packets) under uniform traffic at 0.1 and 0.3 flits per PE per
cycle, on Verilator, in two ways one after the other:

* ``cocotb``: :func:`twinnet.sim_tb.network_sim.simulate` with the ``uniform_traffic`` test and
  the link trace (``twinnet sim --check hops``: Python drives every PE every cycle and checks
  every hop);
* ``hardware``: the traffic harness (``twinnet sim``'s default): a source and a sink per PE
  in the design, Python only configures, waits and reads counters.

Both measure over a comparable window (``--cycles`` injection cycles). The ratio
``hardware / cocotb`` is computed in this script on this machine; the load average at the
start of each run is recorded with it. Anchors quoted in the JSON: BookSim 2 on the same
machine and configuration, 27,600 cycles/s at 0.1 and 10,100 at 0.3; the cocotb path before
this work, 670–970.

Writes ``bench/results/traffic_speed.json`` (override with ``--out``). Usage::

    .venv/bin/python bench/traffic_speed.py [--cycles 10000]
"""

import argparse
import json
import os
import sys
from pathlib import Path

from twinnet.model.network import twin_network_from_dict
from twinnet.sim_tb import network_sim

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "traffic-speed"
LOADS = (0.1, 0.3)
ANCHORS = {"booksim_cycles_per_second": {"0.1": 27_600, "0.3": 10_100},
           "cocotb_before_cycles_per_second": [670, 970]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=RESULTS / "traffic_speed.json")
    args = parser.parse_args()
    network = twin_network_from_dict({"radices": [8, 8], "configuration": "torus",
                                      "mode": "vc", "buffer_depth": 8})
    pes, length = 64, network.packet_length
    runs = {}
    for load in LOADS:
        rate = load / length
        load_average = os.getloadavg()[0]
        hardware = network_sim.simulate(
            network, "verilator", BUILD / "hardware",
            {network_sim.TRAFFIC_TEST: {"points": [
                {"pattern": "uniform", "rate": rate, "warmup": 1000,
                 "measure": args.cycles}]}}, log=True)[network_sim.TRAFFIC_TEST]["points"][0]
        cocotb_load = os.getloadavg()[0]
        cocotb = network_sim.simulate(
            network, "verilator", BUILD / "cocotb",
            {"uniform_traffic": {"packets": round(rate * pes * args.cycles), "rate": rate}},
            log=True)["uniform_traffic"]
        runs[str(load)] = {
            "hardware": {"cycles_per_second": hardware["cycles_per_second"],
                         "cycles": hardware["cycles"], "mean_latency": hardware["mean_latency"],
                         "accepted_flits_per_pe_cycle":
                             hardware["accepted_flits_per_pe_cycle"],
                         "load_average": load_average},
            "cocotb": {"cycles_per_second": cocotb["cycles_per_second"],
                       "cycles": cocotb["cycles"], "mean_latency": cocotb["mean_latency"],
                       "load_average": cocotb_load},
            "ratio_hardware_over_cocotb": hardware["cycles_per_second"]
            / cocotb["cycles_per_second"],
            "ratio_hardware_over_booksim": hardware["cycles_per_second"]
            / ANCHORS["booksim_cycles_per_second"][str(load)],
        }
        ratio = runs[str(load)]["ratio_hardware_over_cocotb"]
        print(f"load {load}: hardware {hardware['cycles_per_second']:.0f} cycles/s, cocotb "
              f"{cocotb['cycles_per_second']:.0f} ({ratio:.1f}x); "
              f"BookSim {ANCHORS['booksim_cycles_per_second'][str(load)]}", file=sys.stderr)
    result = {"network": network.name, "simulator": "verilator", "cpus": os.cpu_count(),
              "cycles": args.cycles, "anchors": ANCHORS, "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
