"""003 §7.3 in RTL: configuration D against the other nine on 3DT 4×4×4 (128 PEs).

The paper (003 §7.1, §7.3) simulates every port configuration A–J of the 3DT 4×4×4 torus under
uniform traffic with 4-flit packets and 128-flit physical buffers, and finds configuration D's
throughput 10–23 % above the others with bubble flow control. Here every configuration is
generated with the traffic harness and swept over offered loads on Verilator, every packet
checked end to end (:mod:`twinnet.hdl.traffic`). Router settings, as close to 003 §7.1 as the
RTL allows (the presets ``003-bubble`` and ``003-vc``):

* ``bubble``: one VC per link with a 128-flit buffer (the paper: 128 flits on every external
  link and the PE link; its internal link has 4 VCs of 32 flits, ours one VC of 128);
* ``vc``: the 2 VCs of 003 §6.3.1 with 32 flits each (the paper uses 4 VCs of 32 flits, 8 of
  16 on the internal link of A, B, E, F).

Per configuration and mode, the points (every load, once per seed) run one after the other in
one simulation (each after a reset), on the router ``--pipeline`` names (default: split),
with the routers' stall counters read at every point; two configurations run at once. Writes
``bench/results/paper_003_7_3.json`` (per configuration: every point, the peak accepted
throughput — the best load's mean over the seeds — beside the channel-load bound of its
routing, and D's gain over each other configuration; ``_compact`` in the name with
``--pipeline 2``, ``_vc`` with only the vc mode) and ``paper_003_7_3.png``. Usage::

    .venv/bin/python bench/paper_003_7_3.py [--modes bubble,vc] [--loads 0.1,0.2,...]
        [--seeds 1,2,3] [--pipeline 3]
"""

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bounds import channel_load_bound
from curves import plot_rows
from peaks import peak
from provenance import provenance

from twinnet.families import presets
from twinnet.model.sizes import DEFAULT_PIPELINE, PIPELINE_NAMES, PIPELINES
from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.sim_tb import network_sim

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "paper-003-7-3"
CONFIGURATIONS = "ABCDEFGHIJ"
LOADS = (0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6)
#: 003 §7.3.3: with bubble flow control on 128 PEs, D's throughput is 10-23 % above the rest.
PAPER = {"bubble_128_pe_gain_percent": [10, 23]}


def network_of(configuration: str, mode: str, pipeline: int):
    preset = {key: value for key, value in presets()[f"003-{mode}"].items() if key != "family"}
    return TwinNetworkConfig.from_dict({**preset, "configuration": configuration,
                                   "pipeline": pipeline})


def run(configuration: str, mode: str, loads, seeds, warmup: int, measure: int,
        pipeline: int) -> dict:
    network = network_of(configuration, mode, pipeline)
    points = [{"pattern": "uniform", "rate": load / network.max_packet_length, "seed": seed,
               "warmup": warmup, "measure": measure, "drain_limit": 50_000}
              for load in loads for seed in seeds]
    results = network_sim.simulate(network, "verilator", BUILD / network.name,
                                   {network_sim.TRAFFIC_TEST: {"points": points}}, log=True,
                                   stalls=True)
    points = results[network_sim.TRAFFIC_TEST]["points"]
    bound, best = channel_load_bound(network), peak(points)
    return {"configuration": configuration, "mode": mode, "network": network.name,
            "points": points, **best, "channel_load_bound": bound,
            "share_of_bound": best["peak_accepted"] / min(1, bound)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default="bubble")
    parser.add_argument("--loads", default=",".join(map(str, LOADS)))
    parser.add_argument("--seeds", default="1,2,3", help="seeds per load (default 1,2,3)")
    parser.add_argument("--pipeline", type=int, choices=PIPELINES, default=DEFAULT_PIPELINE,
                        help="the router: 3 (split, default) or 2 (compact)")
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--measure", type=int, default=3000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    loads = [float(x) for x in args.loads.split(",")]
    seeds = [int(x) for x in args.seeds.split(",")]
    modes = args.modes.split(",")
    if args.out is None:
        name = "paper_003_7_3" + ("_vc" if modes == ["vc"] else "")
        if args.pipeline != DEFAULT_PIPELINE:
            name += f"_{PIPELINE_NAMES[args.pipeline]}"
        args.out = RESULTS / f"{name}.json"
    runs = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {(c, m): pool.submit(run, c, m, loads, seeds, args.warmup, args.measure,
                                       args.pipeline)
                   for m in modes for c in CONFIGURATIONS}
        for (configuration, mode), future in futures.items():
            runs[f"{mode}/{configuration}"] = result = future.result()
            print(f"{mode} {configuration}: peak accepted {result['peak_accepted']:.3f} "
                  f"flits/PE/cycle, {100 * result['share_of_bound']:.0f} % of the bound "
                  f"{result['channel_load_bound']:.3f}", file=sys.stderr, flush=True)
    summary = {}
    for mode in modes:
        peak = {c: runs[f"{mode}/{c}"]["peak_accepted"] for c in CONFIGURATIONS}
        gains = {c: 100 * (peak["D"] / peak[c] - 1) for c in CONFIGURATIONS if c != "D"}
        b_to_j = [gain for c, gain in gains.items() if c != "A"]
        summary[mode] = {"peak_accepted": peak, "d_gain_percent": gains,
                         "d_gain_range_percent": [min(gains.values()), max(gains.values())],
                         "d_gain_over_b_to_j_percent": [min(b_to_j), max(b_to_j)],
                         "share_of_bound": {c: runs[f"{mode}/{c}"]["share_of_bound"]
                                            for c in CONFIGURATIONS}}
    result = {"topology": "3DT 4x4x4 (128 PEs)", "simulator": "verilator", "loads": loads,
              "seeds": seeds, "pipeline": args.pipeline, "warmup": args.warmup,
              "measure": args.measure,
              "buffers": {mode: presets()[f"003-{mode}"]["buffer_depth"] for mode in modes},
              "paper": PAPER, "summary": summary, "runs": runs, "provenance": provenance()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    _plot(result, args.out.with_suffix(".png"), modes)
    print(json.dumps(summary, indent=1))


def _plot(result: dict, path: Path, modes) -> None:
    plot_rows(path, [(f"3DT 4x4x4, {mode}", [
        (configuration, result["runs"][f"{mode}/{configuration}"]["points"],
         dict(linewidth=2.5, color="black") if configuration == "D" else {})
        for configuration in CONFIGURATIONS]) for mode in modes], legend_columns=2)


if __name__ == "__main__":
    main()
