"""Packets of several sizes against packets of one size, at the same offered flits.

For each case (a network) the script runs ``twinnet sweep --stalls`` on Verilator, every packet
checked end to end, at offered loads (flits per PE per cycle) that are fractions of the
routing's channel-load bound (:mod:`bounds`), over several seeds, with three mixes:

- ``fixed4``: every packet 4 flits (routers for packets of up to 4);
- ``bimodal15``: BookSim's ``packet_size = {{1,5}}; packet_size_rate = {{1,1}}`` (half the
  packets of 1 flit, half of 5: a mean of 3; routers for packets of up to 5), the shape of
  request and reply traffic;
- ``bimodal15-room``: the same with L - 1 = 4 more flits per input buffer. The routers reserve
  room for the longest packet (docs/router.md); a router that read a length field in the head
  would need room for the packet's own length only. A buffer of D + L - 1 flits under the
  longest-packet rule admits a packet in every state in which a buffer of D under a
  length-aware rule would (L free of D + L - 1 when at most D - 1 are taken; the length-aware
  rule needs l >= 1 free of D), so this mix's peak bounds what the length field could gain.

Per case and mix it reports the peak accepted throughput (the best load's mean over the
seeds) and its ratio to ``fixed4``'s in the same run, and ``bimodal15-room``'s ratio to
``bimodal15``'s. With ``--booksim BINARY`` it runs BookSim 2 beside the 8 x 8 torus
(``bench/booksim/torus-8x8.cfg``: its input-queued router, wormhole, ``dim_order``, 2 VCs of 10
flits), ``fixed4`` and ``bimodal15`` at the same loads and seeds, and reports its peaks the
same way.

Writes ``bench/results/packet_sizes.json`` (cases not run keep their entries) and its
latency-throughput curves, ``packet_sizes.png`` (each load's mean over the seeds; ``--plot``
only redraws them from the JSON). Usage::

    .venv/bin/python bench/packet_sizes.py [--cases torus-8x8,3dt-4x4x4]
        [--mixes fixed4,bimodal15,bimodal15-room] [--seeds 1,2,3] [--jobs 2]
        [--booksim path/to/booksim] [--plot]
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from curves import plot_rows
from peaks import by_load, peak_summary
from provenance import provenance
from sweeps import add_arguments, bound_loads, run

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "packet_sizes"
#: BookSim 2's settings for the 8 x 8 torus (the bench adds the lengths, load and seed).
BOOKSIM_CONFIG = Path(__file__).resolve().parent / "booksim" / "torus-8x8.cfg"
#: Each case: its network's words, before the mix's. The 8 x 8 torus is BookSim's
#: (dimension order, two dateline VCs of 10 flits); the 3DT of 003 with the bubble, its buffers
#: 10 flits for every mix (two packets of 5, as the bubble needs).
CASES = {"torus-8x8": ["torus", "--radix", "8,8", "--mode", "vc", "--buffer-depth", "10"],
         "3dt-4x4x4": ["twin-torus", "--preset", "3dt-4x4x4", "--buffer-depth", "10"]}
#: The mixes: the lengths' flags, and flits added to each case's buffer depth.
MIXES = {"fixed4": (["--packet-lengths", "4"], 0),
         "bimodal15": (["--packet-lengths", "1,5", "--packet-length-weights", "1,1"], 0),
         "bimodal15-room": (["--packet-lengths", "1,5", "--packet-length-weights", "1,1"], 4)}
#: Offered loads as fractions of the bound.
LOAD_FRACTIONS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def words_of(case: str, mix: str) -> list[str]:
    """The network and mix flags of ``case`` under ``mix`` (its buffer depth grown)."""
    words = list(CASES[case])
    flags, extra = MIXES[mix]
    depth = words.index("--buffer-depth") + 1
    words[depth] = str(int(words[depth]) + extra)
    return [*words, *flags]


def booksim_run(binary: Path, mix: str, load: float, seed: int, folder: Path) -> dict:
    """One BookSim 2 run of the 8 x 8 torus under ``mix`` (its overall accepted flits per
    node per cycle, and the mean packet size it accepted)."""
    lengths = {"fixed4": "packet_size = 4;\n",
               "bimodal15": "packet_size = {{1,5}};\npacket_size_rate = {{1,1}};\n"}[mix]
    config = folder / f"{mix}-{load:.4f}-s{seed}.cfg"
    config.write_text(BOOKSIM_CONFIG.read_text() + lengths
                      + f"injection_rate = {load};\nseed = {seed};\n")
    # (BookSim 2 exits with status 255 when its simulation succeeded: what it printed says
    # whether it ran.)
    done = subprocess.run([str(binary), str(config)], capture_output=True, text=True)
    overall = done.stdout.partition("====== Overall Traffic Statistics ======")[2]
    found = {key: re.search(rf"^{label} average = ([-\d.eE+]+)", overall, re.M)
             for key, label in (("accepted_flits", "Accepted flit rate"),
                                ("packet_size", "Accepted packet size"))}
    if not all(found.values()):
        raise RuntimeError(f"BookSim {config}: no overall statistics; it printed "
                           f"{(done.stdout + done.stderr).strip()[-300:]!r}")
    return {"mix": mix, "offered": load, "seed": seed,
            **{key: float(match[1]) for key, match in found.items()}}


def booksim_peaks(rows: list[dict]) -> dict:
    """BookSim's rows: per mix the best load's mean accepted flits over the seeds, and its
    ratio to ``fixed4``'s."""
    peaks = {}
    for mix in sorted({row["mix"] for row in rows}):
        by_load = {}
        for row in rows:
            if row["mix"] == mix:
                by_load.setdefault(row["offered"], []).append(row["accepted_flits"])
        offered, accepted = max(((load, sum(a) / len(a)) for load, a in by_load.items()),
                                key=lambda item: item[1])
        peaks[mix] = {"peak_accepted": accepted, "peak_offered": offered,
                      "peak_accepted_seeds": by_load[offered]}
    for peak in peaks.values():
        peak["ratio_to_fixed4"] = peak["peak_accepted"] / peaks["fixed4"]["peak_accepted"]
    return peaks


def plot(result: dict, path: Path) -> None:
    """The curves of every case and mix of ``result``: per load, the mean over the seeds."""
    rows = []
    for case, entry in result["cases"].items():
        curves = []
        for mix, measured in entry["mixes"].items():
            points = [{key: sum(p[key] for p in group) / len(group)
                       for key in ("offered_flits_per_pe_cycle", "accepted_flits_per_pe_cycle",
                                   "mean_latency")}
                      for group in by_load(measured["points"])]
            curves.append((mix, points, {}))
        rows.append((case, curves))
    plot_rows(path, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser, ",".join(CASES), RESULTS / "packet_sizes.json")
    parser.add_argument("--mixes", default=",".join(MIXES))
    parser.add_argument("--booksim", type=Path, metavar="BINARY",
                        help="BookSim 2's executable: run it beside the 8 x 8 torus")
    parser.add_argument("--plot", action="store_true",
                        help="only redraw the curves from --out")
    args = parser.parse_args()
    if args.plot:
        plot(json.loads(args.out.read_text()), args.out.with_suffix(".png"))
        return
    seeds = [int(seed) for seed in args.seeds.split(",")]
    mixes = args.mixes.split(",")
    for name, known, given in (("--cases", CASES, args.cases.split(",")),
                               ("--mixes", MIXES, mixes)):
        unknown = [each for each in given if each not in known]
        if unknown:
            raise SystemExit(f"{name}: unknown {unknown[0]!r}; one of {', '.join(known)}")
    # fixed4 first: the baseline of the ratios.
    mixes = ["fixed4", *(mix for mix in mixes if mix != "fixed4")]
    # Cases not run again keep their results (and BookSim's unless it runs again).
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    cases = {}
    for case in args.cases.split(","):
        # One set of loads for every mix: the bound of the fixed-length network's routing
        # (the paths, and so the bound in flits, do not depend on the lengths).
        bound, loads = bound_loads(CASES[case], LOAD_FRACTIONS)
        results = {}
        for mix in mixes:
            words = words_of(case, mix)
            print(f"{case} {mix}: {' '.join(words)}; loads "
                  + ",".join(f"{load:.3f}" for load in loads), file=sys.stderr, flush=True)
            results[mix] = result = peak_summary(run(words, loads, seeds, args.jobs,
                                                     args.warmup, args.measure,
                                                     BUILD / f"{case}-{mix}"))
            result["words"] = words
            result["ratio_to_fixed4"] = (result["peak_accepted"]
                                         / results["fixed4"]["peak_accepted"])
            if mix == "bimodal15-room" and "bimodal15" in results:
                result["ratio_to_bimodal15"] = (result["peak_accepted"]
                                                / results["bimodal15"]["peak_accepted"])
            print(f"  peak {result['peak_accepted']:.4f} at {result['peak_offered']:.3f} "
                  f"offered (x{result['ratio_to_fixed4']:.3f} of fixed4); stalls "
                  + " ".join(f"{reason} {share:.2f}"
                             for reason, share in result["peak_stall_shares"].items()),
                  file=sys.stderr, flush=True)
        cases[case] = {"bound": bound, "loads": loads, "mixes": results}
    booksim = previous.get("booksim")
    if args.booksim is not None and "torus-8x8" in cases:
        folder = BUILD / "booksim"
        folder.mkdir(parents=True, exist_ok=True)
        rows = []
        for mix in ("fixed4", "bimodal15"):
            for load in cases["torus-8x8"]["loads"]:
                for seed in seeds:
                    rows.append(booksim_run(args.booksim, mix, load, seed, folder))
                    print(f"BookSim {mix} {load:.3f} seed {seed}: accepted "
                          f"{rows[-1]['accepted_flits']:.4f}", file=sys.stderr, flush=True)
        booksim = {"case": "torus-8x8", "config": BOOKSIM_CONFIG.read_text(), "rows": rows,
                   "peaks": booksim_peaks(rows)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"simulator": "verilator", "pattern": "uniform",
                                    "load_fractions_of_bound": LOAD_FRACTIONS,
                                    "seeds": seeds, "warmup": args.warmup,
                                    "measure": args.measure, "provenance": provenance(),
                                    "cases": {**previous.get("cases", {}), **cases},
                                    "booksim": booksim}, indent=1))
    plot(json.loads(args.out.read_text()), args.out.with_suffix(".png"))
    print(f"wrote {args.out} and {args.out.with_suffix('.png')}", file=sys.stderr)


if __name__ == "__main__":
    main()
