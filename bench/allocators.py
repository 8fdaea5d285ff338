"""The allocation policies side by side: round robin against iSLIP, on the same networks.

For each case (a paper preset) and each policy (``--allocator`` / ``--iterations``, on the
router the preset names) the script runs ``twinnet sweep --preset NAME --stalls`` on Verilator
at the given offered loads (flits per PE per cycle) over several seeds, every packet checked
end to end, and reports the peak accepted throughput (the best load's mean over the seeds),
its ratio to the round robin's peak in the same run, the routing's bound (:mod:`families`)
and the stall counters at the peak.

Writes ``bench/results/allocators.json``. Usage::

    .venv/bin/python bench/allocators.py [--cases 002-kt16,002-dt16]
        [--policies round-robin,islip1,islip2] [--loads 0.4,0.45,0.5,0.55]
        [--seeds 1,2,3] [--jobs 2]
"""

import argparse
import json
import sys
from pathlib import Path

from peaks import peak_summary
from provenance import provenance
from sweeps import add_arguments

from families import CASES, bound_of, network_of, run_preset

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "allocators"
#: The policies by name: their flags.
POLICIES = {"round-robin": ["--allocator", "round-robin"], "islip1": ["--allocator", "islip"],
            "islip2": ["--allocator", "islip", "--iterations", "2"],
            "islip3": ["--allocator", "islip", "--iterations", "3"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser, "002-kt16,002-dt16", RESULTS / "allocators.json")
    parser.add_argument("--policies", default="round-robin,islip1,islip2")
    parser.add_argument("--loads", default="0.4,0.45,0.5,0.55")
    args = parser.parse_args()
    seeds = [int(seed) for seed in args.seeds.split(",")]
    loads = [float(load) for load in args.loads.split(",")]
    policies = args.policies.split(",")
    for name, known in (("--cases", CASES), ("--policies", POLICIES)):
        given = args.cases.split(",") if name == "--cases" else policies
        unknown = [each for each in given if each not in known]
        if unknown:
            raise SystemExit(f"{name}: unknown {unknown[0]!r}; one of {', '.join(known)}")
    # The round robin first, once: the baseline of the ratios.
    policies = ["round-robin", *(each for each in policies if each != "round-robin")]
    cases = {}
    for preset in args.cases.split(","):
        bound = bound_of(network_of(preset))
        results = {}
        for policy in policies:
            print(f"{preset} {policy}: loads {args.loads}, seeds {args.seeds}",
                  file=sys.stderr, flush=True)
            results[policy] = peak_summary(run_preset(preset, loads, seeds, args.jobs,
                                                      args.warmup, args.measure,
                                                      flags=POLICIES[policy], build=BUILD))
            results[policy]["ratio_to_round_robin"] = (
                results[policy]["peak_accepted"] / results["round-robin"]["peak_accepted"])
            print(f"  peak {results[policy]['peak_accepted']:.4f} at "
                  f"{results[policy]['peak_offered']:.3f} offered (x"
                  f"{results[policy]['ratio_to_round_robin']:.3f}); stalls "
                  + " ".join(f"{reason} {share:.2f}" for reason, share
                             in results[policy]["peak_stall_shares"].items()),
                  file=sys.stderr, flush=True)
        cases[preset] = {"bound": bound, "policies": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"simulator": "verilator", "pattern": "uniform",
                                    "loads": loads, "seeds": seeds, "warmup": args.warmup,
                                    "measure": args.measure, "provenance": provenance(),
                                    "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
