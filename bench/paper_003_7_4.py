"""003 §7.4 in RTL: the 3DT torus against the 2D torus with the same (or nearly the same) PEs.

The paper (003 §7.4) compares, with the same router, the 2D torus of 4-port cards and the 3DT
torus of two 4-port cards per node (configuration D) at 64 PEs (8×8 against 4×4×2), 128
(16×8 against 4×4×4), 256 (16×16 against 8×4×4 and the 250-PE 5×5×5) and 1,024 (32×32
against 8×8×8), under uniform traffic, and finds the 3DT torus ahead above 128 PEs: with
bubble flow control about 15 % more throughput; only at 64 PEs is the 2D torus better.

Here every network is generated with the traffic harness and swept over offered loads on
Verilator (the C++ program of :mod:`twinnet.program.driver`), every packet checked
end to end, with 003 §7.1's router settings (the presets ``003-bubble`` and ``003-vc``:
4-flit packets; one 128-flit buffer per link with bubble flow control, or 2 VCs of 32 flits).
Writes ``bench/results/paper_003_7_4.json`` (per network every point and the peak accepted
throughput; per size the 3DT networks' peak over the 2D torus's) and ``paper_003_7_4.png``.
Usage::

    .venv/bin/python bench/paper_003_7_4.py [--sizes 64,128,256,1024] [--mode bubble]
"""

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from curves import plot_rows

from twinnet.families import presets
from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.sim_tb import network_sim

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "paper-003-7-4"
#: PEs → the 2D torus first, then its 3DT counterparts (003 §7.4.1).
SIZES = {64: ["2d-8x8", "3dt-4x4x2"], 128: ["2d-16x8", "3dt-4x4x4"],
         256: ["2d-16x16", "3dt-8x4x4", "3dt-5x5x5"], 1024: ["2d-32x32", "3dt-8x8x8"]}
LOADS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
#: 003 §7.4.3: with bubble flow control the 3DT torus gets about 15 % more throughput than
#: its 2D torus above 128 PEs; at 64 PEs the 2D torus is better.
PAPER = {"bubble_3dt_gain_percent_above_128_pes": 15, "better_at_64_pes": "2D"}


def run(preset: str, mode: str, loads, warmup: int, measure: int) -> dict:
    router = {key: presets()[f"003-{mode}"][key] for key in ("mode", "max_packet_length",
                                                          "buffer_depth")}
    config = {key: value for key, value in presets()[preset].items() if key != "family"}
    network = TwinNetworkConfig.from_dict({**config, **router})
    points = [{"pattern": "uniform", "rate": load / network.max_packet_length, "seed": 1,
               "warmup": warmup, "measure": measure, "drain_limit": 20_000}
              for load in loads]
    results = network_sim.simulate(network, "verilator", BUILD / network.name,
                                   {network_sim.TRAFFIC_TEST: {"points": points}}, log=True)
    points = results[network_sim.TRAFFIC_TEST]["points"]
    return {"preset": preset, "network": network.name, "pes": network.topology.pe_count,
            "points": points,
            "peak_accepted": max(p["accepted_flits_per_pe_cycle"] for p in points)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="64,128,256,1024")
    parser.add_argument("--mode", default="bubble", choices=("bubble", "vc"))
    parser.add_argument("--loads", default=",".join(map(str, LOADS)))
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--measure", type=int, default=3000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS / "paper_003_7_4.json")
    args = parser.parse_args()
    loads = [float(x) for x in args.loads.split(",")]
    sizes = [int(x) for x in args.sizes.split(",")]
    runs = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {preset: pool.submit(run, preset, args.mode, loads, args.warmup,
                                       args.measure)
                   for size in sizes for preset in SIZES[size]}
        for preset, future in futures.items():
            runs[preset] = result = future.result()
            print(f"{preset} ({result['pes']} PEs): peak accepted "
                  f"{result['peak_accepted']:.3f} flits/PE/cycle", file=sys.stderr, flush=True)
    summary = {}
    for size in sizes:
        torus, *twins = SIZES[size]
        base = runs[torus]["peak_accepted"]
        summary[str(size)] = {
            "2d": {"preset": torus, "peak_accepted": base},
            "3dt": {preset: {"peak_accepted": runs[preset]["peak_accepted"],
                             "pes": runs[preset]["pes"],
                             "gain_over_2d_percent":
                                 100 * (runs[preset]["peak_accepted"] / base - 1)}
                    for preset in twins}}
    result = {"simulator": "verilator", "mode": args.mode, "loads": loads,
              "warmup": args.warmup, "measure": args.measure,
              "router": presets()[f"003-{args.mode}"], "paper": PAPER, "summary": summary,
              "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    _plot(result, args.out.with_suffix(".png"), sizes)
    print(json.dumps(summary, indent=1))


def _plot(result: dict, path: Path, sizes) -> None:
    plot_rows(path, [(f"{size} PEs, {result['mode']}", [
        (preset, result["runs"][preset]["points"], {}) for preset in SIZES[size]])
        for size in sizes])


if __name__ == "__main__":
    main()
