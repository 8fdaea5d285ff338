"""Twin-torus networks: generation cost, simulation speed and the latency/throughput curve.

Three measurements, each optional (``--only``):

* ``generation``: generate 3DT k = 4, 6, 8 (128, 432 and 1,024 cards; configuration D,
  bubble) each in a fresh Python process, recording wall time, CPU time and peak memory (the
  process's maximum resident set, which includes Amaranth's built-in Yosys). The k = 4 run is
  the baseline of the ``per_card_ratio`` column: cost per card relative to k = 4.
* ``speed``: simulate uniform random traffic on 3DT 4×4×4 (D, bubble) on Icarus and on
  Verilator, without the link trace (the scoreboard still checks every packet end to end),
  recording build time, simulated cycles and cycles per second; Icarus is the baseline of the
  ``speedup`` column.
* ``sweep``: for 3DT 4×4×4 and the plain 2D 16×8 torus with the same 128 PEs (the comparison
  of paper 003 §7.4), one Verilator simulation each that offers uniform traffic at increasing
  rates and records mean latency against accepted throughput, plotted to
  ``twin_network_sweep.png``.

Writes ``bench/results/twin_network.json`` (override with ``--out``). Usage::

    .venv/bin/python bench/twin_network.py [--only generation,speed,sweep] [--sizes 4,6,8]
        [--packets 4000] [--rates 0.02,0.05,...]
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from twinnet.model.twin import TwinTorusTopology
from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.sim_tb import network_sim, runner

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench"

#: Run in a fresh process per size: generate, then print wall/CPU time and peak memory.
GENERATE_CHILD = """
import json, resource, sys, time
from twinnet.gen.generate import generate_network as generate
from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.model.twin import TwinTorusTopology
k, out = int(sys.argv[1]), sys.argv[2]
network = TwinNetworkConfig.for_topology(TwinTorusTopology((k, k, k), "D", "bubble"))
started, cpu = time.perf_counter(), time.process_time()
files = generate(network, out)
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_seconds": time.perf_counter() - started,
                  "cpu_seconds": time.process_time() - cpu,
                  "peak_rss_mib": usage.ru_maxrss / 1024,
                  "verilog_bytes": sum(f.stat().st_size for f in files if f.suffix == ".v")}))
"""


def network(k: int) -> TwinNetworkConfig:
    return TwinNetworkConfig.for_topology(TwinTorusTopology((k, k, k), "D", "bubble"))


def measure_generation(sizes: list[int]) -> dict:
    results = {}
    for k in sizes:
        cards = 2 * k ** 3
        print(f"generation: 3DT k={k} ({cards} cards)", file=sys.stderr, flush=True)
        out = BUILD / f"generate-k{k}"
        child = subprocess.run([sys.executable, "-c", GENERATE_CHILD, str(k), str(out)],
                               check=True, capture_output=True, text=True)
        entry = {"cards": cards, **json.loads(child.stdout.strip().splitlines()[-1])}
        print(f"  {entry['wall_seconds']:.1f} s, {entry['peak_rss_mib']:.0f} MiB",
              file=sys.stderr)
        results[f"k{k}"] = entry
    base = results.get(f"k{sizes[0]}")
    for entry in results.values():
        entry["per_card_ratio"] = (entry["wall_seconds"] / entry["cards"]) / \
            (base["wall_seconds"] / base["cards"])
    return results


def measure_speed(packets: int, rate: float) -> dict:
    results = {}
    for simulator in ("icarus", "verilator"):
        reason = runner.missing(simulator)
        if reason:
            results[simulator] = {"skipped": reason}
            continue
        print(f"speed: 3DT 4x4x4 on {simulator}", file=sys.stderr, flush=True)
        started = time.perf_counter()
        recorded = network_sim.simulate(
            network(4), simulator, BUILD / f"speed-{simulator}",
            {"uniform_traffic": {"packets": packets, "rate": rate}}, trace=False, log=True)
        total = time.perf_counter() - started
        uniform = recorded["uniform_traffic"]
        results[simulator] = {
            "build_and_generate_seconds": total - uniform["wall_seconds"],
            "simulated_cycles": uniform["cycles"], "packets": uniform["packets"],
            "sim_wall_seconds": uniform["wall_seconds"],
            "cycles_per_second": uniform["cycles_per_second"],
            "mean_latency": uniform["mean_latency"]}
        print(f"  {uniform['cycles_per_second']:.0f} cycles/s", file=sys.stderr)
    if "cycles_per_second" in results.get("icarus", {}):
        base = results["icarus"]["cycles_per_second"]
        for entry in results.values():
            if "cycles_per_second" in entry:
                entry["speedup"] = entry["cycles_per_second"] / base
    return results


def measure_sweep(packets: int, rates: list[float], plot: Path) -> dict:
    """Latency against accepted throughput for 3DT 4x4x4 and the plain 2D 16x8 torus with the
    same 128 PEs (003 §7.4), both with bubble flow control, on Verilator."""
    networks = {"3dt-4x4x4": network(4),
                "2d-16x8": TwinNetworkConfig.for_topology(
                    TwinTorusTopology((16, 8), "torus", "bubble"))}
    results = {}
    for label, config in networks.items():
        print(f"sweep: {label} on verilator, rates {rates}", file=sys.stderr, flush=True)
        recorded = network_sim.simulate(
            config, "verilator", BUILD / f"sweep-{config.name}",
            {"load_sweep": {"packets": packets, "rates": rates}}, trace=False, log=True)
        results[label] = {"network": config.name, "points": recorded["load_sweep"]["points"]}
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {**results, "plot": None}
    figure, axes = plt.subplots(figsize=(6.5, 4.2))
    for (label, entry), marker in zip(results.items(), "os"):
        points = entry["points"]
        axes.plot([p["accepted_flits_per_pe_cycle"] for p in points],
                  [p["mean_total_latency"] for p in points], marker + "-", label=label)
    axes.set_xlabel("accepted throughput (flits/PE/cycle)")
    axes.set_ylabel("mean latency incl. source queueing (cycles)")
    axes.set_title("128 PEs, uniform traffic, bubble flow control, 4-flit packets")
    axes.set_yscale("log")
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(plot, dpi=120)
    return {**results, "plot": plot.name}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="generation,speed,sweep",
                        help="comma-separated: generation, speed, sweep")
    parser.add_argument("--sizes", default="4,6,8", help="3DT radices to generate")
    parser.add_argument("--packets", type=int, default=4000,
                        help="packets per speed run and per sweep point")
    parser.add_argument("--rate", type=float, default=0.02,
                        help="packets per PE per cycle for the speed runs")
    parser.add_argument("--rates", default="0.01,0.02,0.04,0.06,0.08,0.10,0.12,0.15,0.2",
                        help="packets per PE per cycle for the sweep")
    parser.add_argument("--out", type=Path, default=RESULTS / "twin_network.json")
    args = parser.parse_args(argv)
    only = args.only.split(",")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results = {}
    if "generation" in only:
        results["generation"] = measure_generation([int(k) for k in args.sizes.split(",")])
    if "speed" in only:
        results["speed"] = measure_speed(args.packets, args.rate)
    if "sweep" in only:
        results["sweep"] = measure_sweep(args.packets, [float(r) for r in args.rates.split(",")],
                                         args.out.with_name("twin_network_sweep.png"))
    args.out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
