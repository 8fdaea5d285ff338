"""Simulated cycles per second: traffic in hardware against the cocotb-driven bench.

Two networks of the issue's anchors, each on Verilator, each run three ways one after the
other on this machine:

* ``program``: traffic in hardware (a source and a sink per PE; Python only configures, waits
  and reads counters) run by the C++ program over separately Verilated modules
  (:mod:`twinnet.program.driver`; ``twinnet sim``'s default on Verilator);
* ``harness``: the same traffic harness as one Verilog design driven through cocotb (the
  routers as Verilator hierarchy blocks; what Icarus runs);
* ``cocotb``: :func:`twinnet.sim_tb.network_sim.simulate` with the ``uniform_traffic`` test
  and the link trace (``twinnet sim --check hops``: Python drives every PE every cycle and
  checks every hop).

Cases: 3DT 4×4×4 (preset ``3dt-4x4x4``: configuration D, bubble flow control) at 0.02
packets/PE/cycle, where the issue asks traffic in hardware to be at least 10× faster than the
cocotb path; the 8×8 torus with 2 VCs, 8-flit buffers per VC and 4-flit packets at 0.1 and 0.3
flits/PE/cycle, where BookSim 2 simulates 27,600 and 10,100 cycles/s on this machine (the
issue's anchors; it asks for 10,000 at 0.3); the 16×16 torus alike (BookSim: 4,600 and 2,480);
the 32×32 torus alike at 0.1 (1,024 routers, no anchor); the
64×64 torus in mode bubble at 0.1 (4,096 routers, then the limit; the aim: at least 500 cycles/s,
built in at most 10 minutes). Each build starts from an empty folder and is
timed (generation, Verilator and the C++ compiler); every way then runs ``--repeats`` times on
its build (the same point, the same counts) and the median speed is the one compared, since
a single run on a shared 2-core machine can lose a third of its speed to a neighbour. The
load average at the start of every run is recorded. Writes ``bench/results/sim_speed.json``
(override with ``--out``), with the commit and the tools' versions (``provenance``).

``--booksim PATH`` (a BookSim 2 binary built by the user) also runs BookSim 2 at every load of
the tori, with a configuration written here from the same network: the torus, dimension-order
routing over 2 VCs of 8 flits, 4-flit packets, uniform traffic at the same offered load in
flits per node per cycle, one period of ``--cycles`` (in BookSim's throughput mode: its latency
mode abandons a run beyond saturation, as 16x16 at 0.3 is, after warming up); BookSim's speed
is its simulated cycles ("Time taken is N cycles") per CPU-second of its process, the
program's its cycles per second of the run (one core, or ``--threads`` cores for the
``program_threads_N`` entries: a wall-clock figure), and the result holds their ratio (the
aim: at least 2x). On a loaded machine the wall clock runs on while the program waits for a
core, so the result also holds the program's cycles per CPU-second of its process (threads
summed, from the program run directly on a fixed script: reset, the warm-up, the measured
cycles) and that ratio (``..._cpu_over_booksim``). ``--ways program`` leaves out the two
slower ways. The 64x64 torus (4,096 routers) has no BookSim run: it is in mode bubble,
BookSim's torus uses dateline VCs.

``--instructions N`` also counts the instructions the program executes per simulated cycle
(``valgrind --tool=callgrind``, one thread): its build runs a fixed script (reset, the warm-up's
cycles of the point's uniform load, then N cycles), once as it is and once plain (every model awake
and evaluated before every edge: the program without its shortcuts), and the start-up (the
same script with no cycles) is taken off. Unlike the speeds, the counts do not move with the
machine's load; they say nothing about memory stalls. Usage::

    .venv/bin/python bench/sim_speed.py [--cycles 10000] [--repeats 3]
    .venv/bin/python bench/sim_speed.py --cases torus-8x8,torus-16x16 --ways program \
        --threads 1,2 --booksim ../booksim2/src/booksim
    .venv/bin/python bench/sim_speed.py --cases torus-8x8 --ways program --instructions 2000
"""

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from provenance import provenance

from twinnet.families import presets
from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.program import EXECUTABLE
from twinnet.sim_tb import network_sim

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "sim-speed"
#: name → (network configuration, offered loads in flits per PE per cycle, anchors).
CASES = {
    "3dt-4x4x4": (presets()["3dt-4x4x4"], (0.08,),
                  {"hardware_over_cocotb_at_least": 10, "cocotb_cycles_per_second": 550}),
    "torus-8x8": ({"radices": [8, 8], "configuration": "torus", "mode": "vc",
                   "buffer_depth": 8}, (0.1, 0.3),
                  {"booksim_cycles_per_second": {"0.1": 27_600, "0.3": 10_100},
                   "cocotb_before_cycles_per_second": [670, 970]}),
    "torus-16x16": ({"radices": [16, 16], "configuration": "torus", "mode": "vc",
                     "buffer_depth": 8}, (0.1, 0.3),
                    {"booksim_cycles_per_second": {"0.1": 4_600, "0.3": 2_480}}),
    # 1,024 routers: BookSim 2's network at the size of the
    # papers' largest 2-D torus (003 §7.4). No anchor: the issue's table stops at 16x16.
    "torus-32x32": ({"radices": [32, 32], "configuration": "torus", "mode": "vc",
                     "buffer_depth": 8}, (0.1,), {}),
    # 4,096 routers (the limit when this was written; now 16,384, see bench/sim_scaling.py): the
    # issue asked a build of at most 10 minutes and at least 500 cycles/s at 0.1.
    "torus-64x64": ({"radices": [64, 64], "configuration": "torus", "mode": "bubble"}, (0.1,),
                    {"build_seconds_at_most": 600, "program_cycles_per_second_at_least": 500}),
}
WAYS = ("program", "harness", "cocotb")
#: Cycles of traffic before the measured ones, in every way.
WARMUP = 1000
#: The BookSim 2 settings that match the tori of :data:`CASES` (its names; see its manual).
BOOKSIM = {"topology": "torus", "routing_function": "dim_order", "num_vcs": 2,
           "vc_buf_size": 8, "packet_size": 4, "traffic": "uniform",
           "injection_rate_uses_flits": 1, "sim_type": "throughput", "warmup_periods": 1,
           "max_samples": 1, "sim_count": 1, "wait_for_tail_credit": 0,
           "vc_allocator": "separable_input_first", "sw_allocator": "separable_input_first",
           "alloc_iters": 1, "credit_delay": 2, "routing_delay": 0, "vc_alloc_delay": 1,
           "sw_alloc_delay": 1, "st_final_delay": 1, "input_speedup": 1,
           "output_speedup": 1, "internal_speedup": 1.0}


def _children_cpu_seconds() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(network, build_dir: Path, tests: dict, repeats: int, fresh: bool = True
          ) -> tuple[list, float, list]:
    """Run ``tests`` ``repeats`` times, the first from an empty build folder when ``fresh``;
    return every run's results, the seconds of the first (the build and its simulation) and
    the load average at the start of every run."""
    if fresh:
        shutil.rmtree(build_dir, ignore_errors=True)
    runs, loads, first = [], [], 0.0
    for repeat in range(repeats):
        loads.append(os.getloadavg()[0])
        started = time.perf_counter()
        runs.append(network_sim.simulate(network, "verilator", build_dir, tests, log=True))
        if repeat == 0:
            first = time.perf_counter() - started
    return runs, first, loads


def summary(speeds: list[float], **fields) -> dict:
    """The median of ``speeds`` (cycles/s) with every run's, and ``fields``."""
    return {"cycles_per_second": statistics.median(speeds), "runs_cycles_per_second": speeds,
            **fields}


def hardware_run(network, build_dir: Path, rate: float, cycles: int, engine: str,
                 repeats: int, threads: int = 1) -> dict:
    """Traffic in hardware on ``engine``; the program on ``threads`` threads (a fresh build
    for one thread, the same build for more)."""
    runs, seconds, loads = timed(network, build_dir, {network_sim.TRAFFIC_TEST: {
        "points": [{"pattern": "uniform", "rate": rate, "warmup": WARMUP, "measure": cycles}],
        "engine": engine, "threads": threads}}, repeats, fresh=threads == 1)
    points = [results[network_sim.TRAFFIC_TEST]["points"][0] for results in runs]
    point = points[0]
    return summary([p["cycles_per_second"] for p in points], cycles=point["cycles"],
                   mean_latency=point["mean_latency"],
                   accepted_flits_per_pe_cycle=point["accepted_flits_per_pe_cycle"],
                   build_seconds=seconds - point["wall_seconds"], load_averages=loads)


def cocotb_run(network, build_dir: Path, rate: float, cycles: int, pes: int,
               repeats: int) -> dict:
    runs, seconds, loads = timed(network, build_dir, {"uniform_traffic": {
        "packets": round(rate * pes * cycles), "rate": rate}}, repeats)
    uniforms = [results["uniform_traffic"] for results in runs]
    uniform = uniforms[0]
    simulated = uniform["cycles"] / uniform["cycles_per_second"]
    return summary([u["cycles_per_second"] for u in uniforms], cycles=uniform["cycles"],
                   mean_latency=uniform["mean_latency"], build_seconds=seconds - simulated,
                   load_averages=loads)


def booksim_run(binary: Path, folder: Path, radices, load: float, cycles: int,
                repeats: int) -> dict:
    """BookSim 2 on the torus ``radices`` at ``load`` flits per node per cycle (see the module
    docstring); the median of ``repeats`` runs' simulated cycles per CPU-second."""
    folder.mkdir(parents=True, exist_ok=True)
    settings = {**BOOKSIM, "k": radices[0], "n": len(radices), "injection_rate": load,
                "sample_period": cycles}
    config = folder / f"torus-{'x'.join(map(str, radices))}-{load}.cfg"
    config.write_text("".join(f"{key} = {value};\n" for key, value in settings.items()))
    speeds, cycles_run = [], None
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        # (BookSim 2 exits with status 255 when its simulation succeeded: what it printed
        # says whether it ran.)
        done = subprocess.run([str(binary), str(config)], capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        taken = re.findall(r"Time taken is (\d+) cycles", done.stdout)
        if not taken:
            raise RuntimeError(f"BookSim 2 did not run {config}: {done.stdout[-500:]}"
                               f"{done.stderr[-500:]}")
        cycles_run = int(taken[-1])
        speeds.append(cycles_run / seconds)
    return summary(speeds, cycles=cycles_run, config=settings)


def program_script(manifest: dict, rate: float, warmup: int, cycles: int) -> str:
    """Commands for the program: uniform traffic at ``rate`` packets per PE per cycle, reset
    (2 cycles), ``warmup`` cycles, then ``cycles`` measured ones; the controls alone when both
    are 0 (the start-up)."""
    scale = 1 << manifest["traffic"]["rate_bits"]
    controls = {"rate": min(scale - 1, round(rate * scale)), "pattern": 0, "seed": 1,
                "enable": 0, "measure": 0}
    lines = [f"set {name} {value}" for name, value in controls.items()]
    if warmup or cycles:
        lines += ["set rst 1", "run 2", "set rst 0", "set enable 1", f"run {warmup}",
                  "set measure 1", f"run {cycles}", "read"]
    return "\n".join([*lines, "quit"]) + "\n"


def callgrind(executable: Path, script: str, *arguments: str) -> int:
    """The instructions ``executable`` runs on ``script`` (its stdin) under callgrind."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           str(executable), *arguments], input=script, capture_output=True,
                          text=True, check=True)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def cpu_speed(build_dir: Path, rate: float, cycles: int, threads: int, repeats: int) -> dict:
    """The program built in ``build_dir`` run directly on :func:`program_script`'s commands
    (``cycles`` after the warm-up) on ``threads`` threads: its cycles per CPU-second (of its
    process, threads summed; the start-up taken off), the median of ``repeats`` runs."""
    manifest = network_sim.manifest_of(build_dir)
    command = [str(build_dir / "program" / EXECUTABLE), str(threads)]

    def cpu_seconds(script: str) -> float:
        before = _children_cpu_seconds()
        subprocess.run(command, input=script, capture_output=True, text=True, check=True)
        return _children_cpu_seconds() - before

    start = cpu_seconds(program_script(manifest, rate, 0, 0))
    speeds = [(WARMUP + cycles + 2)
              / (cpu_seconds(program_script(manifest, rate, WARMUP, cycles)) - start)
              for _ in range(repeats)]
    return {"cycles_per_cpu_second": statistics.median(speeds),
            "runs_cycles_per_cpu_second": speeds}


def instructions(build_dir: Path, rate: float, cycles: int) -> dict:
    """Instructions per simulated cycle of the program built in ``build_dir`` (see the module
    docstring), with its shortcuts and plain."""
    manifest = network_sim.manifest_of(build_dir)
    executable = build_dir / "program" / EXECUTABLE
    result = {"warmup": WARMUP, "cycles": cycles}
    for key, arguments in (("instructions_per_cycle", ["1"]),
                           ("plain_instructions_per_cycle", ["1", "plain"])):
        start = callgrind(executable, program_script(manifest, rate, 0, 0), *arguments)
        total = callgrind(executable, program_script(manifest, rate, WARMUP, cycles),
                          *arguments)
        result[key] = (total - start) / (WARMUP + cycles + 2)
    return result


def _valgrind_version() -> str:
    return subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--ways", default=",".join(WAYS),
                        help=f"comma-separated, from {', '.join(WAYS)}")
    parser.add_argument("--booksim", type=Path, metavar="PATH",
                        help="a BookSim 2 binary: also run it on the tori and compare")
    parser.add_argument("--threads", default="1",
                        help="comma-separated thread counts of the program way (each after "
                             "the first on the same build), e.g. 1,2")
    parser.add_argument("--instructions", type=int, default=0, metavar="N",
                        help="also count the program's instructions per cycle over N cycles "
                             "under callgrind (needs valgrind)")
    parser.add_argument("--out", type=Path, default=RESULTS / "sim_speed.json")
    args = parser.parse_args()
    ways = args.ways.split(",")
    thread_counts = [int(count) for count in args.threads.split(",")]
    if not thread_counts or thread_counts[0] != 1:
        parser.error(f"--threads {args.threads}: start with 1 (the build's first run)")
    if not ways or not set(ways) <= set(WAYS):
        parser.error(f"--ways {args.ways}: give some of {', '.join(WAYS)}")
    if args.instructions and ("program" not in ways or shutil.which("valgrind") is None):
        parser.error("--instructions needs --ways with program and valgrind on PATH")
    if args.booksim is not None and not (args.booksim.is_file()
                                         and os.access(args.booksim, os.X_OK)):
        parser.error(f"--booksim {args.booksim}: not an executable file (build BookSim 2 "
                     "and give its src/booksim)")
    result = {"simulator": "verilator", "cpus": os.cpu_count(), "cycles": args.cycles,
              "valgrind": _valgrind_version() if args.instructions else None,
              "repeats": args.repeats, "threads": thread_counts, "provenance": provenance(),
              "cases": {}}
    for name in args.cases.split(","):
        config, loads, anchors = CASES[name]
        network = TwinNetworkConfig.from_dict({key: value for key, value in config.items()
                                          if key != "family"})
        pes, length = network.topology.pe_count, network.max_packet_length
        runs = {}
        for load in loads:
            rate = load / length
            run = {}
            if "program" in ways:
                for threads in thread_counts:
                    key = "program" if threads == 1 else f"program_threads_{threads}"
                    run[key] = hardware_run(network, BUILD / name / "program", rate,
                                            args.cycles, "program", args.repeats, threads)
                    run[key].update(cpu_speed(BUILD / name / "program", rate, args.cycles,
                                              threads, args.repeats))
                if args.instructions:
                    run["program"].update(instructions(BUILD / name / "program", rate,
                                                       args.instructions))
            if "harness" in ways:
                run["harness"] = hardware_run(network, BUILD / name / "harness", rate,
                                              args.cycles, "cocotb", args.repeats)
            if "cocotb" in ways:
                run["cocotb"] = cocotb_run(network, BUILD / name / "cocotb", rate,
                                           args.cycles, pes, args.repeats)
                for way in ("program", "harness"):
                    if way in run:
                        run[f"ratio_{way}_over_cocotb"] = (run[way]["cycles_per_second"] /
                                                           run["cocotb"]["cycles_per_second"])
            if args.booksim is not None and network.topology.card_count == 1 \
                    and network.topology.mode == "vc":  # BookSim's torus: dateline VCs
                run["booksim"] = booksim_run(args.booksim, BUILD / name / "booksim",
                                             network.topology.radices, load, args.cycles,
                                             args.repeats)
                for key in [key for key in run if key.startswith("program")]:
                    run[f"ratio_{key}_over_booksim"] = (run[key]["cycles_per_second"] /
                                                        run["booksim"]["cycles_per_second"])
                    if "cycles_per_cpu_second" in run[key]:
                        run[f"ratio_{key}_cpu_over_booksim"] = (
                            run[key]["cycles_per_cpu_second"]
                            / run["booksim"]["cycles_per_second"])
            runs[str(load)] = run
            print(f"{name} at {load} flits/PE/cycle: " + ", ".join(
                f"{way} {run[way]['cycles_per_second']:.0f} cycles/s" for way in run
                if not way.startswith("ratio_")) + "".join(
                f"; {key.removeprefix('ratio_')} {value:.2f}x" for key, value in run.items()
                if key.startswith("ratio_")), file=sys.stderr)
        result["cases"][name] = {"network": network.name, "pes": pes, "anchors": anchors,
                                 "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
