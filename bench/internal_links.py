"""Measured internal-link crossings of 3DT k×k×k under all-pairs, against 003 Tables 7-8.

For each radix k and port configuration (A–J) the script runs::

    twinnet sim twin-torus --radix k,k,k --config C --traffic all-pairs --link-loads FILE.svg

(default mode bubble, default engine: the C++ traffic program on Verilator, every packet
checked end to end) and reads the packets its counters saw on each node's internal link (both
directions). Beside them it records:

* ``brute_force``: the packets on each direction of each internal link when every PE sends one
  packet to every other along 003's DOR, counted by the tests' walk (``tests/twin_crossings.py``,
  written from 003's definitions, not from the model); ``measured_equals_brute_force`` says
  whether every link agrees exactly;
* ``transit``: from that walk, the node-level paths passing *through* a node that use both its
  cards (one path per ordered pair of distinct nodes, as 003 §5 counts them);
* ``paper``: 003 Table 7 (k odd) or Table 8 (k even) for that configuration;
* ``model``: :func:`twinnet.model.twin_analysis.internal_transit_count`.

The measured count is larger than 003's: it counts PE pairs (two PEs per node, so 4 paths per
pair of nodes) and the crossings at the source and destination nodes (a PE whose card does
not hold the first port, or the last port's card not holding the destination PE), and the
two PEs of one node exchange packets over it too: per node, 4 R + 4 (k^3 - 1) + 2 for 003's
R (``tests/model/test_twin_crossings.py`` shows why).

Writes ``bench/results/internal_links.json`` (cases already there are kept unless run again).
Usage::

    .venv/bin/python bench/internal_links.py [--k 3,4] [--configs A,B,...,J]
    .venv/bin/python bench/internal_links.py --table   # the markdown table of the results
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from provenance import provenance

from twinnet.model.twin import TwinTorusTopology
from twinnet.model.twin_analysis import internal_transit_count

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from twin_crossings import (  # noqa: E402 (the tests' brute force, on the path just above)
    crossings,
    packets_per_link,
    paper_transit_paths,
    transit_paths,
)

RESULTS = Path(__file__).resolve().parent / "results" / "internal_links.json"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "internal_links"
CONFIGURATIONS = "ABCDEFGHIJ"


def simulate(k: int, configuration: str) -> dict:
    """One ``twinnet sim`` run; returns its JSON."""
    command = [str(Path(sys.executable).parent / "twinnet"), "sim", "twin-torus",
               "--radix", f"{k},{k},{k}", "--config", configuration, "--traffic", "all-pairs",
               "--link-loads", str(BUILD / f"load-3dt-k{k}-{configuration}.svg"),
               "--out", str(BUILD), "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"k={k} {configuration}: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout)


def measured_per_link(result: dict) -> dict[tuple, int]:
    """``(node, from_card)`` → packets counted on that internal link direction."""
    measured = {}
    for load in result["results"]["link_loads"]:
        if load["channel"] == "internal":
            node, card = load["router"].split("/c")
            measured[tuple(map(int, node.split(","))), int(card)] = load["packets"]
    return measured


def per_node(per_link: dict[tuple, int]) -> dict[tuple, int]:
    nodes = {}
    for (node, _), packets in per_link.items():
        nodes[node] = nodes.get(node, 0) + packets
    return nodes


def span(values) -> list[int]:
    values = list(values)
    return [min(values), max(values)]


def case(k: int, configuration: str) -> dict:
    started = time.perf_counter()
    result = simulate(k, configuration)
    wall = time.perf_counter() - started
    measured = measured_per_link(result)
    counts = crossings(k, configuration)
    expected = packets_per_link(counts)
    transit = transit_paths(counts, k)
    roles = {}
    for (_, _, role), count in counts.items():
        roles[role] = roles.get(role, 0) + count
    return {
        "k": k, "configuration": configuration, "network": result["network"],
        "parameters": result["parameters"], "engine": result["results"]["engine"],
        "packets": result["results"]["packets"],
        "measured_per_node": span(per_node(measured).values()),
        "measured_per_direction": span(measured.values()),
        "brute_force_per_node": span(per_node(expected).values()),
        "brute_force_per_direction": span(expected.values()),
        "measured_equals_brute_force": measured == expected,
        "brute_force_crossings_by_role": roles,
        "transit": span(transit.values()),
        "paper": paper_transit_paths(configuration, k),
        "paper_table": 7 if k % 2 else 8,
        "model": internal_transit_count(TwinTorusTopology((k, k, k), configuration)),
        "wall_seconds": round(wall, 1),
    }


def spanned(values: list[int]) -> str:
    low, high = values
    return f"{low}" if low == high else f"{low}–{high}"


def table(cases: list[dict]) -> str:
    lines = ["| k | config | measured per node | brute force per node | measured = brute force "
             "(every link) | transit per node | 003 Table 7/8 | model |",
             "|---|---|---|---|---|---|---|---|"]
    for c in sorted(cases, key=lambda c: (c["k"], c["configuration"])):
        lines.append(
            f"| {c['k']} | {c['configuration']} | {spanned(c['measured_per_node'])} | "
            f"{spanned(c['brute_force_per_node'])} | "
            f"{'yes' if c['measured_equals_brute_force'] else 'NO'} | {spanned(c['transit'])} | "
            f"{c['paper']} (Table {c['paper_table']}) | {c['model']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", default="3,4", help="radices to run (default 3,4)")
    parser.add_argument("--configs", default=",".join(CONFIGURATIONS))
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--table", action="store_true",
                        help="print the markdown table of --out and run nothing")
    args = parser.parse_args()
    previous = json.loads(args.out.read_text()) if args.out.exists() else {"cases": []}
    if args.table:
        print(table(previous["cases"]))
        return
    cases = {(c["k"], c["configuration"]): c for c in previous["cases"]}
    for k in map(int, args.k.split(",")):
        for configuration in args.configs.split(","):
            if configuration not in CONFIGURATIONS:
                raise SystemExit(f"--configs: {configuration!r} is not one of A–J")
            try:
                cases[k, configuration] = result = case(k, configuration)
            except RuntimeError as error:  # one failed run does not stop the others
                print(error, file=sys.stderr, flush=True)
                continue
            print(f"k={k} {configuration}: measured {spanned(result['measured_per_node'])} "
                  f"per node, brute force {spanned(result['brute_force_per_node'])}, equal: "
                  f"{result['measured_equals_brute_force']}; transit "
                  f"{spanned(result['transit'])}, 003 {result['paper']}, model "
                  f"{result['model']} ({result['wall_seconds']} s)", file=sys.stderr, flush=True)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps({
                "simulator": "verilator", "pattern": "all-pairs",
                "command": "twinnet sim twin-torus --radix k,k,k --config C --traffic all-pairs "
                           "--link-loads FILE.svg",
                "provenance": provenance(),
                "cases": sorted(cases.values(), key=lambda c: (c["k"], c["configuration"]))},
                indent=1))
    print(table(list(cases.values())))


if __name__ == "__main__":
    main()
