"""The split router with the bypass against the split router: latency and throughput.

The bypass (the split router's own, ``--bypass``/``--no-bypass``, docs/router.md) allocates
a head that arrives on a link while its VC has no packet waiting in its arrival cycle: 2
cycles per link hop instead of 3. For each
case (a network) the script runs ``twinnet sweep --stalls`` on Verilator, every packet
checked end to end, with and without the bypass, at the same offered loads (fractions of the
routing's channel-load bound, :mod:`bounds`, and a light load) and seeds. Per case and
variant it reports the peak accepted throughput (the best load's mean over the seeds) and the
mean packet latency at the lightest load, and the bypass's ratios of both to the split
router's in the same run.

Writes ``bench/results/bypass.json`` (cases not run keep their entries). Usage::

    .venv/bin/python bench/bypass.py [--cases torus-8x8,3dt-4x4x4,...,002-kt16]
        [--seeds 1,2,3] [--jobs 2]
"""

import argparse
import json
import sys
from pathlib import Path

from peaks import by_load, peak_summary
from provenance import provenance
from sweeps import add_arguments, bound_loads, run

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "bypass"
#: Each case: its network's words. A network of every family: the 8 x 8 torus with two
#: dateline VCs, the 3DT of 003 with the bubble (its cards' internal links bypass too), the
#: fat tree of twin switches (their internal links too), 004's 8 x 4 twisted torus and the
#: king torus KT8 under 2S adaptive routing; and, run only when named, 002's KT16, whose
#: router is the largest (256 routers of 10 ports).
CASES = {"torus-8x8": ["torus", "--radix", "8,8", "--mode", "vc"],
         "3dt-4x4x4": ["twin-torus", "--preset", "3dt-4x4x4"],
         "ft-4x3": ["fat-tree", "--preset", "ft-4x3"],
         "004-8x4": ["twisted", "--preset", "004-8x4"],
         "kt8-2s": ["king", "--side", "8", "--routing", "2s", "--vcs", "2"],
         "002-kt16": ["king", "--preset", "002-kt16"]}
#: The cases run without ``--cases``.
DEFAULT_CASES = ("torus-8x8", "3dt-4x4x4", "ft-4x3", "004-8x4", "kt8-2s")
#: The variants: the flags each adds.
VARIANTS = {"split": ["--no-bypass"], "bypass": ["--bypass"]}
#: Offered loads as fractions of the bound; the first, light, gives the latency.
LOAD_FRACTIONS = (0.1, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def light_latency(points: list[dict]) -> float:
    """The mean packet latency (cycles) at the lightest load, over the seeds."""
    group = by_load(points)[0]
    return sum(point["mean_latency"] for point in group) / len(group)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser, ",".join(DEFAULT_CASES), RESULTS / "bypass.json")
    args = parser.parse_args()
    seeds = [int(seed) for seed in args.seeds.split(",")]
    unknown = [case for case in args.cases.split(",") if case not in CASES]
    if unknown:
        raise SystemExit(f"--cases: unknown {unknown[0]!r}; one of {', '.join(CASES)}")
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    cases = {}
    for case in args.cases.split(","):
        bound, loads = bound_loads(CASES[case], LOAD_FRACTIONS)
        results = {}
        for variant, flags in VARIANTS.items():
            words = [*CASES[case], *flags]
            print(f"{case} {variant}: {' '.join(words)}; loads "
                  + ",".join(f"{load:.3f}" for load in loads), file=sys.stderr, flush=True)
            result = peak_summary(run(words, loads, seeds, args.jobs, args.warmup,
                                      args.measure, BUILD / f"{case}-{variant}"))
            result.update(words=words, light_latency=light_latency(result["points"]))
            results[variant] = result
            print(f"  peak {result['peak_accepted']:.4f} at {result['peak_offered']:.3f} "
                  f"offered; latency at {loads[0]:.3f}: {result['light_latency']:.2f} cycles",
                  file=sys.stderr, flush=True)
        split, bypass = results["split"], results["bypass"]
        cases[case] = {"bound": bound, "loads": loads, "variants": results,
                       "provenance": provenance(),
                       "peak_ratio": bypass["peak_accepted"] / split["peak_accepted"],
                       "light_latency_ratio": bypass["light_latency"] / split["light_latency"]}
        print(f"  bypass / split: peak x{cases[case]['peak_ratio']:.3f}, light-load latency "
              f"x{cases[case]['light_latency_ratio']:.3f}", file=sys.stderr, flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"simulator": "verilator", "pattern": "uniform",
                                    "load_fractions_of_bound": LOAD_FRACTIONS,
                                    "seeds": seeds, "warmup": args.warmup,
                                    "measure": args.measure, "provenance": provenance(),
                                    "cases": {**previous.get("cases", {}), **cases}},
                                   indent=1))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
