"""004 in RTL: what a peripheral twist buys a torus with unequal sides, measured in simulation.

004 shows that the twist t_YX (the Y wrap-around link lands d_x/2 columns further on) shortens
the distances of rectangular tori: 8×4 at t_YX = 4 has diameter 4 instead of 6 and average
distance 2.625 instead of 3.0 (self included); with 12 rows and d_x = 12…48, t_YX = d_x/2
gives the smallest diameter. Here each torus is generated twice, untwisted and twisted, with
the twisted family's minimal dimension-order routing (the record of
:func:`twinnet.model.twist.routing_record`), the bubble escape (or the dateline) with the
004 presets' 4 VCs per link (``--vcs``: each VC a copy of the escape), 4-flit packets and
four packets of buffer per VC, the presets' PEs per router (2 on 8x4, else 1; ``--pe-ports``),
on the router ``--pipeline`` names (the default: split), and swept under uniform traffic on
Verilator (the C++ program of :mod:`twinnet.program.driver`) over ``--seeds``, every
packet checked end to end, with the routers' stall counters
(:mod:`twinnet.hdl.router.stalls`) read at every point.

Cases: the 2a×a torus for a = 4 and 8 (t_YX = 0 and a), and the 12-row family
d_x = 12, 24, 36, 48 (t_YX = 0 and d_x/2). Offered loads are fractions of each untwisted
torus's bound, so that a twisted torus and its plain twin see the same loads. For each pair the
script reports

* the zero-load latency ratio (mean latency at the lowest load, twisted over untwisted) beside
  the ratio of the model's average distances (004's BFS metric, over distinct pairs); a latency
  also has a fixed part (serialisation, injection, ejection) that the twist does not change, so
  the script also sets the latency saved beside the hops saved at the router's cycles per hop;
* the saturation gain: peak accepted throughput (the best load's mean over the seeds),
  twisted over untwisted, beside the ratio of
  the model's bounds for the routing built (one over the largest channel load under uniform
  traffic, :func:`twinnet.model.traffic.channel_loads`).

Writes ``bench/results/twisted.json`` and ``twisted.png`` (with ``--pipeline 2``,
``twisted_compact.*``). Usage::

    .venv/bin/python bench/twisted.py [--cases 8x4,16x8,12x12,24x12,36x12,48x12] [--jobs 2]
        [--seeds 1,2,3] [--pipeline 3] [--vcs 1]
"""

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from fractions import Fraction
from pathlib import Path

from bounds import channel_load_bound
from curves import plot_rows
from peaks import by_load, peak
from provenance import provenance

from twinnet.families.twisted import PRESETS
from twinnet.model.sizes import DEFAULT_PIPELINE, PIPELINE_NAMES, PIPELINES
from twinnet.model.twist import metrics
from twinnet.model.twisted_network import TwistedNetworkConfig
from twinnet.sim_tb import network_sim

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "twisted"
#: Loads as fractions of the untwisted torus's bound, up to past the twisted one's.
LOAD_FRACTIONS = (0.05, 0.3, 0.6, 0.8, 1.0, 1.2, 1.4, 1.7, 2.0, 2.3)
CASES = ("8x4", "16x8", "12x12", "24x12", "36x12", "48x12")
#: What the cases of one results file share: cases measured otherwise are not merged.
SETTINGS = ("escape", "pipeline", "seeds", "buffer_depth", "vcs", "warmup", "measure")


def network_of(radices, twist: int, escape: str = "bubble", buffer_depth: int = 16,
               pipeline: int = DEFAULT_PIPELINE, vcs: int | None = None, pe_ports: int = 1):
    return TwistedNetworkConfig.from_dict({"radices": list(radices),
                                           "twists": {"YX": twist} if twist else {},
                                           "escape": escape, "buffer_depth": buffer_depth,
                                           "pipeline": pipeline, "vcs": vcs,
                                           "pe_ports": pe_ports})


def pe_ports_of(case: str, given: int | None) -> int:
    """PEs per router: ``given``, else the case's 004 preset's (8x4: 2, so that the twisted
    torus, whose links can carry 1.19 flits per node and cycle, is not capped by one PE
    port), else 1."""
    if given is not None:
        return given
    return PRESETS.get(f"004-{case}", {}).get("pe_ports", 1)


def average_distance(network) -> Fraction:
    """004's average distance over distinct pairs (its BFS figure includes a node to itself)."""
    nodes = network.topology.node_count
    return metrics(network.topology).average_distance * nodes / (nodes - 1)


def run(network, loads, seeds, warmup: int, measure: int) -> dict:
    points = [{"pattern": "uniform", "rate": load / network.max_packet_length, "seed": seed,
               "warmup": warmup, "measure": measure, "drain_limit": 40_000}
              for load in loads for seed in seeds]
    results = network_sim.simulate(network, "verilator", BUILD / network.name,
                                   {network_sim.TRAFFIC_TEST: {"points": points}}, log=True,
                                   stalls=True)
    points = results[network_sim.TRAFFIC_TEST]["points"]
    lowest = by_load(points)[0]
    return {"network": network.name, "radices": list(network.topology.radices),
            "twists": network.to_dict()["twists"],
            "points": points, **peak(points),
            "zero_load_latency": sum(p["mean_latency"] for p in lowest) / len(lowest),
            "cycles_per_second": [p["cycles_per_second"] for p in points]}


def compare(plain: dict, twisted: dict, plain_net, twisted_net, hop_latency: int) -> dict:
    """The pair's ratios, twisted over untwisted (below 1: the twist shortens; above 1 for
    throughput: the twist carries more)."""
    distances = [float(average_distance(net)) for net in (plain_net, twisted_net)]
    latencies = [run["zero_load_latency"] for run in (plain, twisted)]
    bounds = [plain["model_bound"], twisted["model_bound"]]
    return {"average_distance": distances, "average_distance_ratio": distances[1] / distances[0],
            "diameter": [metrics(net.topology).diameter for net in (plain_net, twisted_net)],
            "zero_load_latency": latencies, "zero_load_latency_ratio": latencies[1] / latencies[0],
            "latency_saved": latencies[0] - latencies[1],
            "hop_latency_saved": hop_latency * (distances[0] - distances[1]),
            "model_bound": bounds, "model_bound_ratio": bounds[1] / bounds[0],
            # A PE port takes one flit per cycle: the bound a run can reach.
            "reachable_bound_ratio": min(1, bounds[1]) / min(1, bounds[0]),
            "peak_accepted": [plain["peak_accepted"], twisted["peak_accepted"]],
            "saturation_gain": twisted["peak_accepted"] / plain["peak_accepted"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES),
                        help="tori as DXxDY; each runs untwisted and with t_YX = DX/2")
    parser.add_argument("--escape", choices=("bubble", "dateline"), default="bubble")
    parser.add_argument("--vcs", type=int, default=PRESETS["004-16x8"]["vcs"],
                        help="VCs per link, each a copy of the escape (default: the 004 "
                             "presets', %(default)s)")
    parser.add_argument("--pe-ports", type=int, default=None,
                        help="PEs per router (default: the case's 004 preset's, else 1)")
    parser.add_argument("--buffer-depth", type=int, default=16,
                        help="flits per VC per input port (default four packets)")
    parser.add_argument("--pipeline", type=int, choices=PIPELINES, default=DEFAULT_PIPELINE,
                        help="the router: 3 (split, default) or 2 (compact)")
    parser.add_argument("--seeds", default="1,2,3", help="seeds per load (default 1,2,3)")
    parser.add_argument("--warmup", type=int, default=2000)
    parser.add_argument("--measure", type=int, default=5000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None,
                        help="default bench/results/twisted.json (twisted_compact.json with "
                             "--pipeline 2); the cases of an existing file that are not run "
                             "again are kept")
    args = parser.parse_args()
    seeds = [int(seed) for seed in args.seeds.split(",")]
    if args.out is None:
        suffix = "" if args.pipeline == DEFAULT_PIPELINE else f"_{PIPELINE_NAMES[args.pipeline]}"
        args.out = RESULTS / f"twisted{suffix}.json"
    cases = {case: tuple(int(d) for d in case.split("x")) for case in args.cases.split(",")}
    nets = {(case, twist): network_of(radices, twist, args.escape, args.buffer_depth,
                                      args.pipeline, args.vcs, pe_ports_of(case, args.pe_ports))
            for case, radices in cases.items() for twist in (0, radices[0] // 2)}
    bounds = {key: channel_load_bound(net) for key, net in nets.items()}
    print("model bounds: " + ", ".join(f"{net.name} {bounds[key]:.3f}"
                                       for key, net in nets.items()), file=sys.stderr, flush=True)
    runs = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = {}
        for (case, twist), net in nets.items():
            plain_bound = bounds[(case, 0)]
            loads = [round(fraction * plain_bound, 4) for fraction in LOAD_FRACTIONS]
            futures[(case, twist)] = pool.submit(run, net, loads, seeds, args.warmup,
                                                 args.measure)
        for key, future in futures.items():
            runs[key] = result = future.result()
            result["model_bound"] = bounds[key]
            print(f"{result['network']}: zero-load latency {result['zero_load_latency']:.2f}, "
                  f"peak accepted {result['peak_accepted']:.3f} flits/PE/cycle (model bound "
                  f"{bounds[key]:.3f})", file=sys.stderr, flush=True)
    pairs = {}
    for case, radices in cases.items():
        twist = radices[0] // 2
        pairs[case] = compare(runs[(case, 0)], runs[(case, twist)], nets[(case, 0)],
                              nets[(case, twist)], args.pipeline)
        pairs[case].update(pe_ports=nets[(case, 0)].pe_ports, commit=provenance()["commit"])
        pair = pairs[case]
        print(f"{case}, t_YX = {twist}: distance ratio {pair['average_distance_ratio']:.3f}, "
              f"zero-load latency ratio {pair['zero_load_latency_ratio']:.3f} (saved "
              f"{pair['latency_saved']:.2f} cycles; hops saved x {args.pipeline}: "
              f"{pair['hop_latency_saved']:.2f}), saturation gain "
              f"{pair['saturation_gain']:.3f} (model {pair['model_bound_ratio']:.3f})",
              file=sys.stderr, flush=True)
    result = {"simulator": "verilator", "escape": args.escape, "pipeline": args.pipeline,
              "seeds": seeds, "provenance": provenance(),
              "max_packet_length": nets[next(iter(nets))].max_packet_length,
              "buffer_depth": args.buffer_depth, "vcs": nets[next(iter(nets))].vc_count,
              "warmup": args.warmup,
              "measure": args.measure, "load_fractions_of_untwisted_bound": LOAD_FRACTIONS,
              "runs": {runs[key]["network"]: runs[key] for key in runs}, "pairs": pairs}
    if args.out.exists():  # keep the cases not run again, measured with the same settings
        previous = json.loads(args.out.read_text())
        if all(previous.get(key) == result[key] for key in SETTINGS):
            for case, pair in previous["pairs"].items():
                if case not in pairs:
                    pairs[case] = pair
                    result["runs"].update({name: run for name, run in previous["runs"].items()
                                           if run["radices"] == list(map(int, case.split("x")))})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    plot_rows(args.out.with_suffix(".png"), [(
        f"{case} torus, uniform",
        [(run["network"], run["points"], {}) for run in result["runs"].values()
         if run["radices"] == list(map(int, case.split("x")))]) for case in result["pairs"]])
    keys = ("average_distance_ratio", "zero_load_latency_ratio", "latency_saved",
            "hop_latency_saved", "saturation_gain", "model_bound_ratio", "reachable_bound_ratio")
    print(json.dumps({case: {key: pair[key] for key in keys} for case, pair in pairs.items()},
                     indent=1))


if __name__ == "__main__":
    main()
