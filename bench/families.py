"""Every family under uniform traffic with its paper preset, against its routing's bound.

For each case (a family and the preset that carries its paper's settings) the script runs
``twinnet sweep --preset NAME --stalls`` on Verilator at offered loads that are fractions of
the routing's channel-load bound (:mod:`bounds`; under adaptive routing the mean-load bound of
minimal paths), over three seeds, every packet checked end to end. Per case it reports the
peak accepted throughput (the best load's mean over the seeds), its share of the bound
(capped at the PE port's one flit per cycle), and the stall counters at the peak
(:mod:`twinnet.hdl.router.stalls`): why waiting packets were not allocated. With
``--link-loads`` it then runs the peak's load again on every seed with link counters
(``twinnet sweep --link-loads``) and records how busy each class of channel was there
(``peak_link_loads``: per channel and port name, the mean and largest share of cycles its
links carried a flit, and the cycles a packet waited for them), so that a gap to the bound
can be placed: on the links the bound counts, or elsewhere.

Writes ``bench/results/families.json``. Usage::

    .venv/bin/python bench/families.py [--cases 003-bubble,003-torus,ft-4x3,004-16x8,002-t16,...]
        [--seeds 1,2,3] [--jobs 2] [--link-loads]
"""

import argparse
import json
import sys
from pathlib import Path

from bounds import channel_load_bound
from peaks import peak_summary
from provenance import provenance
from sweeps import add_arguments, run

from twinnet.cli.gen_cmd import network_from_words
from twinnet.families import family_for
from twinnet.model.traffic import throughput_bound

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "families"
#: Each family's paper preset (the king family's three networks of 002 Table 3).
CASES = {"003-bubble": "twin-torus", "003-torus": "torus", "ft-4x3": "fat-tree",
         "004-16x8": "twisted", "002-t16": "king", "002-dt16": "king", "002-kt16": "king"}
#: Offered loads as fractions of the bound.
LOAD_FRACTIONS = (0.6, 0.75, 0.85, 0.95, 1.05)


def network_of(preset: str):
    return network_from_words([CASES[preset], "--preset", preset])


def bound_of(network) -> float:
    """The routing's bound in flits per PE per cycle, before the PE port's cap."""
    family = family_for(network)
    if family.deterministic(network):
        return channel_load_bound(network)

    def paths(source, destination):
        return [(router, port) for router, port, _ in family.hops(network, source,
                                                                   destination)]

    # throughput_bound caps at 1; with several PEs per router the mean-load bound per PE is
    # below 1 anyway on the networks here.
    return throughput_bound(paths, family.terminal_count(network), "uniform", balanced=True)


def run_preset(preset: str, loads, seeds, jobs: int, warmup: int, measure: int, *,
               flags=(), build: Path = BUILD) -> dict:
    """``twinnet sweep --stalls --json`` of ``preset`` (with ``flags`` after it)."""
    return run([CASES[preset], "--preset", preset, *flags], loads, seeds, jobs, warmup,
               measure, build)


def link_classes(points: list[dict]) -> dict:
    """The links of ``points`` (one run each, with ``link_loads``) by channel and port name
    (``network X+``, ``internal i0``, ``injection``...): how many, the mean and largest
    ``busy`` over the links and runs, the ``blocked`` cycles per link and run; and the
    busiest link of all."""
    classes, busiest = {}, None
    for point in points:
        for link in point["link_loads"]:
            name = " ".join(filter(None, (link["channel"], str(link.get("port", "")))))
            classes.setdefault(name, []).append(link)
            if busiest is None or link["busy"] > busiest["busy"]:
                busiest = {"seed": point["seed"], **{key: link[key] for key in link
                                                     if key != "vc"}}
    runs = len(points)
    return {"classes": {name: {"links": len(links) // runs,
                               "mean_busy": sum(link["busy"] for link in links) / len(links),
                               "max_busy": max(link["busy"] for link in links),
                               "mean_blocked": sum(link["blocked"] for link in links)
                               / len(links)}
                        for name, links in sorted(classes.items())},
            "busiest": busiest}


def summary(preset: str, data: dict, bound: float, seeds) -> dict:
    best = peak_summary(data)
    return {"preset": preset, "family": CASES[preset], "seeds": seeds, "bound": bound,
            "reachable_bound": min(1.0, bound), **best,
            "share_of_bound": best["peak_accepted"] / min(1.0, bound)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser, ",".join(CASES), RESULTS / "families.json")
    parser.add_argument("--link-loads", action="store_true",
                        help="run each case's peak load again with link counters")
    args = parser.parse_args()
    seeds = [int(seed) for seed in args.seeds.split(",")]
    previous = json.loads(args.out.read_text())["cases"] if args.out.exists() else {}
    cases = {}
    for preset in args.cases.split(","):
        if preset not in CASES:
            raise SystemExit(f"--cases: unknown case {preset!r}; the cases are "
                             f"{', '.join(CASES)}")
        network = network_of(preset)
        bound = bound_of(network)
        loads = [min(1.0, fraction * min(1.0, bound)) for fraction in LOAD_FRACTIONS]
        print(f"{preset}: {network.name}, bound {bound:.3f} flits/PE/cycle",
              file=sys.stderr, flush=True)
        data = run_preset(preset, loads, seeds, args.jobs, args.warmup, args.measure)
        cases[preset] = result = summary(preset, data, bound, seeds)
        if args.link_loads:
            print(f"{preset}: link loads at {result['peak_offered']:.3f} offered",
                  file=sys.stderr, flush=True)
            again = run_preset(preset, [result["peak_offered"]], seeds, args.jobs,
                               args.warmup, args.measure,
                               flags=("--link-loads", str(BUILD / f"{preset}-links.svg")))
            result["peak_link_loads"] = link_classes(again["points"])
        print(f"{preset}: peak {result['peak_accepted']:.3f} at {result['peak_offered']:.3f} "
              f"offered, {100 * result['share_of_bound']:.0f} % of the bound; stalls "
              + " ".join(f"{reason} {share:.2f}"
                         for reason, share in result["peak_stall_shares"].items()),
              file=sys.stderr, flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"simulator": "verilator", "pattern": "uniform",
                                    "load_fractions_of_bound": LOAD_FRACTIONS,
                                    "warmup": args.warmup, "measure": args.measure,
                                    "provenance": provenance(),
                                    "cases": {**previous, **cases}}, indent=1))


if __name__ == "__main__":
    main()
