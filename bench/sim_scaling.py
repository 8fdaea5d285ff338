"""The C++ traffic program on threads and MPI ranks: simulated cycles per second against one
thread, the same answers on every partition.

Each case's network is generated once with its traffic program and built twice (plain, and
with MPI); each way then runs the same fixed command stream (uniform traffic at the case's
load: reset, the warm-up, ``--cycles`` measured ones, ``read``): the plain build on each of
``--threads`` (one thread is the baseline) and the MPI build on each of ``--ranks`` of one
thread (``mpirun --oversubscribe``: on a machine with fewer cores than ranks the ranks share
them). The answer of ``read`` (every count, latency, histogram bin, hop and stall counter) must
be the baseline's, or the script stops. Speeds are the median of ``--repeats`` runs, wall clock
(threads and ranks wait for each other every cycle); the ratio to the baseline is reported,
with the links the ranks' regions cut (:func:`twinnet.program.tables.locality`), the load
average at the start of each run and the largest process's peak memory (a rank's, under
``mpirun``). Generation and build times and peak memory are recorded too. Writes
``bench/results/sim_scaling.json`` (override with ``--out``) with the commit and the tools'
versions. (``bench/results/ranks.json`` and ``ranks-16k.json`` were written by this script
before it took threads, with the baseline labelled ``one process``.) Usage::

    .venv/bin/python bench/sim_scaling.py [--cases torus-32x32,king-16] [--threads 1,2]
        [--ranks 2,4] [--cycles 5000]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import ROOT, provenance  # noqa: E402
from sim_speed import program_script  # noqa: E402

#: name: (network words, offered load in packets per PE per cycle)
CASES = {
    "torus-32x32": (["torus", "--radix", "32,32"], 0.025),
    "king-16": (["king", "--kind", "KT", "--side", "16"], 0.02),
    "twin-4x4x4": (["twin-torus", "--radix", "4,4,4"], 0.02),
    # The networks and loads of issue 50's thread table: the 64x64 torus at 0.02 and 0.08
    # flits/PE/cycle, the 16x16 torus in mode vc at 0.1 (4-flit packets)
    "torus-64x64-low": (["torus", "--radix", "64,64"], 0.005),
    "torus-64x64-high": (["torus", "--radix", "64,64"], 0.02),
    "torus-16x16-vc": (["torus", "--radix", "16,16", "--mode", "vc"], 0.025),
    # 16,384 routers, the tori's limit (48-bit flits: the head's route and source take 29 bits)
    "torus-128x128": (["torus", "--radix", "128,128", "--flit-width", "48"], 0.01),
    "3dt-16x16x32": (["twin-torus", "--radix", "16,16,32", "--flit-width", "48"], 0.01),
    "king-128": (["king", "--kind", "KT", "--side", "128", "--flit-width", "48"], 0.01),
}
WARMUP = 500


def build(words: list[str], folder: Path) -> tuple[dict, Path, Path, dict]:
    """The network generated and its program built plain and with MPI; the manifest, both
    executables, the times, and the peak memory of this process, which generates."""
    from twinnet.cli.gen_cmd import network_from_words
    from twinnet.families import family_for
    from twinnet.gen.generate import generate_network
    from twinnet.gen.manifest import Manifest
    from twinnet.program import driver

    network = network_from_words(words)
    started = time.perf_counter()
    files = generate_network(network, folder / "rtl", family=family_for(network),
                             traffic=True, harness=False)  # (the program needs no Verilog top)
    generated = time.perf_counter()
    manifest = json.loads(files[-1].read_text())
    plain = driver.build(folder / "rtl", folder / "build", Manifest.of(manifest))
    built = time.perf_counter()
    mpi = driver.build(folder / "rtl", folder / "build", Manifest.of(manifest), mpi=True)
    return manifest, plain, mpi, {
        "generate_seconds": generated - started, "build_seconds": built - generated,
        "build_mpi_seconds": time.perf_counter() - built,
        "generate_peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def cut(words: list[str], ranks: int) -> dict:
    """The links between the regions of ``ranks`` ranks, and the PEs of each region."""
    from twinnet.cli.gen_cmd import network_from_words
    from twinnet.families import family_for
    from twinnet.program.tables import locality

    network = network_from_words(words)
    netlist = family_for(network).netlist(network)
    number = {router.label: i for i, router in enumerate(netlist.routers)}
    place = {router: i for i, router in enumerate(locality(netlist))}

    def rank(label: str) -> int:
        return place[number[label]] * ranks // len(netlist.routers)

    return {"links_cut": sum(rank(link.source) != rank(link.target) for link in netlist.links),
            "links": len(netlist.links),
            "pes": [sum(rank(t.router) == r for t in netlist.terminals) for r in range(ranks)]}


#: GNU time, to read the peak memory of the largest process a command runs (a child forked
#: from this process would report this process's size as its own; GNU time's child is forked
#: from a small process). None: not installed (apt-get install time), no memory figures.
GNU_TIME = "/usr/bin/time" if Path("/usr/bin/time").is_file() else None


def timed(command: list[str], script: str) -> tuple[float, str, float, float | None]:
    """Wall seconds, the ``read`` answer, the load average at the start, and the peak memory
    in MiB of the largest process the command ran (None without GNU time)."""
    load = os.getloadavg()[0]
    with tempfile.NamedTemporaryFile("r") as memory:
        wrapper = [GNU_TIME, "-f", "%M", "-o", memory.name] if GNU_TIME else []
        started = time.perf_counter()
        done = subprocess.run([*wrapper, *command], input=script, capture_output=True,
                              text=True, check=True)
        seconds = time.perf_counter() - started
        peak = int(memory.read().split()[-1]) / 1024 if GNU_TIME else None
    return seconds, done.stdout.strip().splitlines()[-1], load, peak


def main() -> None:
    from twinnet.program import driver

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--cycles", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path,
                        default=ROOT / "bench" / "results" / "sim_scaling.json")
    args = parser.parse_args()
    threads_list = [int(t) for t in args.threads.split(",")]
    if threads_list[0] != 1:
        sys.exit("--threads: the first must be 1 (the baseline)")
    ranks_list = [int(r) for r in args.ranks.split(",") if r]
    if driver.mpi_missing(max(ranks_list, default=1)):
        sys.exit(driver.mpi_missing(max(ranks_list)))
    result = {"provenance": provenance(), "cycles": args.cycles, "warmup": WARMUP,
              "repeats": args.repeats, "cores": os.cpu_count(), "cases": {}}
    for name in args.cases.split(","):
        words, rate = CASES[name]
        # (cases of one network share its build: the first such case's folder)
        first = next(other for other, (network, _) in CASES.items() if network == words)
        folder = ROOT / "build" / "bench-ranks" / first
        manifest, plain, mpi, times = build(words, folder)
        script = program_script(manifest, rate, WARMUP, args.cycles)
        case = {"network": words, "rate_packets_per_pe_cycle": rate, **times, "ways": {}}
        ways = [(f"{threads} thread{'s' if threads > 1 else ''}", [str(plain), str(threads)],
                 1, threads) for threads in threads_list] + [
            (f"{ranks} ranks", [*driver.launch(ranks), str(mpi), "1"], ranks, 1)
            for ranks in ranks_list]
        reference = None
        for label, command, ranks, threads in ways:
            runs = [timed(command, script) for _ in range(args.repeats)]
            answers = {answer for _, answer, _, _ in runs}
            if reference is None:
                reference = answers.pop() if len(answers) == 1 else sys.exit(
                    f"{name}: one thread answered differently between runs")
            elif answers != {reference}:
                sys.exit(f"{name}, {label}: the counts differ from one thread's")
            seconds = statistics.median(s for s, _, _, _ in runs)
            way = {"ranks": ranks, "threads": threads,
                   "cycles_per_second": (WARMUP + args.cycles + 2) / seconds,
                   "runs_seconds": [s for s, _, _, _ in runs],
                   "load_average": [load for _, _, load, _ in runs],
                   "peak_rss_mib": runs[0][3] and max(memory for _, _, _, memory in runs)}
            if ranks > 1:
                way.update(cut(words, ranks))
            case["ways"][label] = way
            print(f"{name}, {label}: {way['cycles_per_second']:.0f} cycles/s", file=sys.stderr)
        baseline = case["ways"]["1 thread"]["cycles_per_second"]
        for way in case["ways"].values():
            way["speed_over_one_thread"] = way["cycles_per_second"] / baseline
        case["read"] = reference
        result["cases"][name] = case
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
