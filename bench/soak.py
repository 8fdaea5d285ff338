"""Soaks with back-pressure on the fast engine: at least a million checked packets per family.

For every family's default network and every paper preset, traffic generated and checked in
hardware on the C++ program over Verilated modules (:mod:`twinnet.program.driver`),
in rounds of six points, each offered beyond saturation or in bursts and each drained to the
last packet:

- uniform at one flit per PE per cycle, PEs taking every flit (``eject_ready`` 1), 0.7 and 0.3;
- uniform at one flit per PE per cycle with stall bursts of up to 32 cycles;
- uniform on/off bursts (8 packets on average at the port's rate, 0.5 flits per PE per cycle
  on average), ``eject_ready`` 0.7;
- tornado (adversarial for every family here) at one flit per PE per cycle, ``eject_ready``
  0.7 and stall bursts of up to 16 cycles.

Every packet is checked exactly once, intact, at the right PE, in order per pair where the
routing is deterministic (else by the sums of packet hashes): a point with an error or a
watchdog stop fails the soak. A family's networks share its million packets: the first round
measures how fast each delivers, a second round (new seeds) makes up the rest.

Then, per family, on its smallest network and on the Verilog harness through cocotb (the
program injects only ``duplicate``), each fault of :data:`twinnet.hdl.traffic.FAULTS` in its
own run, with back-pressure: each must be counted exactly once, by the counter that names it
(under adaptive routing a duplicate shows as the hash sums differing), and nothing else.

Writes ``bench/results/soak.json`` (packets, packet-hops, cycles, errors, wall time per point,
network and family; the commit and tool versions) and prints one line per family. Usage::

    .venv/bin/python bench/soak.py [--families twin-torus,king] [--networks default,ft-4x2]
        [--packets 1000000] [--jobs 2]
    .venv/bin/python bench/soak.py --table    # the tables of docs/results.md
"""

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from provenance import provenance

from twinnet.cli.gen_cmd import network_from_words
from twinnet.families import family_for, family_words, presets

RESULTS = Path(__file__).resolve().parent / "results"
BUILD = Path(__file__).resolve().parents[1] / "build" / "bench" / "soak"
#: Cycles of each point of the first round.
FIRST_ROUND = 2000
#: Errors a fault run must count (ordered routing, adaptive routing).
FAULT_COUNTS = {"misroute": ({"wrong_destination": 1}, {"wrong_destination": 1}),
                "duplicate": ({"out_of_order": 1}, {"checksum": 1}),
                "corrupt": ({"corrupt": 1}, {"corrupt": 1})}


def network_of(family: str, preset: str | None):
    return network_from_words([family] + (["--preset", preset] if preset else []))


def cases(families, networks) -> list[dict]:
    """Every family's default network and every preset, as (family, label, network); a
    preset that is a family's default network joins its label."""
    found = {}

    def add(family: str, label: str, network) -> None:
        if network.name in found:
            found[network.name]["label"] += f", {label}"
        else:
            found[network.name] = {"family": family, "label": label, "network": network}

    for family in families:
        if "default" in networks:
            add(family, f"{family} default", network_of(family, None))
        for preset, values in presets().items():
            if preset in networks:
                network = network_of(values["family"], preset)
                if family_for(network).name == family:
                    add(family, preset, network)
    return list(found.values())


def points(network, cycles: int, seed: int) -> list[dict]:
    """One round (see the module docstring)."""
    full = 1 / network.max_packet_length
    base = {"warmup": 0, "measure": cycles, "drain_limit": 0, "seed": seed}
    return [
        {**base, "pattern": "uniform", "rate": full, "eject_ready": 1.0},
        {**base, "pattern": "uniform", "rate": full, "eject_ready": 0.7},
        {**base, "pattern": "uniform", "rate": full, "eject_ready": 0.3},
        {**base, "pattern": "uniform", "rate": full, "stall_bursts": 32},
        {**base, "pattern": "uniform", "rate": 0.5 * full, "injection": "onoff", "burst": 8,
         "eject_ready": 0.7},
        {**base, "pattern": "tornado", "rate": full, "eject_ready": 0.7, "stall_bursts": 16},
    ]


def run_points(label: str, network, engine: str, points_: list[dict], run: str) -> list[dict]:
    """The points on ``engine`` (Verilator), building the network once per engine."""
    from twinnet.sim_tb import network_sim

    build = BUILD / f"{network.name}-{engine}"
    results = network_sim.simulate(network, "verilator", build,
                                   {network_sim.TRAFFIC_TEST: {"points": points_,
                                                               "engine": engine}},
                                   family=family_for(network), run_dir=build / run, log=True)
    return results[network_sim.TRAFFIC_TEST]["points"]


def summary(point: dict) -> dict:
    keys = ("pattern", "rate", "seed", "injection", "eject_ready", "stall_bursts", "fault",
            "faults_applied", "errors", "packets", "packet_hops", "mean_hops", "refused",
            "overflowed", "accepted_flits_per_pe_cycle", "mean_latency", "cycles",
            "wall_seconds", "cycles_per_second")
    return {key: point.get(key) for key in keys}


def soak(case: dict, target: int) -> dict:
    """Rounds on one network until it has delivered ``target`` packets; a failed point
    (an error the sinks counted, a watchdog stop) ends it with ``failure``."""
    from twinnet.sim_tb import network_sim

    network, label = case["network"], case["label"]
    started = time.perf_counter()
    done, failure = [], None
    try:
        done += [summary(p) for p in run_points(label, network, "program",
                                                points(network, FIRST_ROUND, 1), "round1")]
        delivered = sum(p["packets"] for p in done)
        if delivered < target:
            per_cycle = delivered / sum(p["cycles"] for p in done)
            cycles = math.ceil((target - delivered) / per_cycle / len(done) * 1.1)
            done += [summary(p) for p in run_points(label, network, "program",
                                                    points(network, cycles, 2), "round2")]
    except network_sim.SimulationFailed as error:
        failure = error.summary
    manifest = network_sim.manifest_of(BUILD / f"{network.name}-program")
    return {"family": case["family"], "label": label, "network": network.name,
            "routers": len(manifest["routers"]), "pes": manifest["derived"]["pe_count"],
            "points": done, **totals(done), "failure": failure,
            "errors": totals(done)["errors"] + (failure is not None),
            "wall_seconds": time.perf_counter() - started}


def totals(done: list[dict]) -> dict:
    return {"packets": sum(p["packets"] for p in done),
            "packet_hops": sum(p["packet_hops"] or 0 for p in done),
            "cycles": sum(p["cycles"] for p in done),
            "errors": sum(sum(p["errors"].values()) for p in done if p["fault"] == "none")}


def faults(case: dict) -> dict:
    """Each fault in its own run on the Verilog harness (cocotb), with back-pressure."""
    network = case["network"]
    ordered = family_for(network).in_order(network)
    base = {"pattern": "uniform", "rate": 0.3 / network.max_packet_length, "warmup": 0,
            "measure": 600, "eject_ready": 0.7, "stall_bursts": 8}
    results = run_points(case["label"], network, "cocotb",
                         [{**base, "fault": fault} for fault in FAULT_COUNTS], "faults")
    runs = []
    for fault, point in zip(FAULT_COUNTS, results):
        expected = FAULT_COUNTS[fault][0 if ordered else 1]
        runs.append({"fault": fault, "applied": point["faults_applied"],
                     "errors": point["errors"], "expected": expected,
                     "counted_exactly": point["faults_applied"] == 1
                     and point["errors"] == expected, "packets": point["packets"]})
    return {"family": case["family"], "label": case["label"], "network": network.name,
            "runs": runs}


def table(data: dict) -> str:
    """The Markdown tables of docs/results.md: per family, then per network."""
    lines = ["| family | networks | packets | packet-hops | cycles | errors | faults counted "
             "exactly | wall |", "|---|---|---|---|---|---|---|---|"]
    for f in data["families"]:
        lines.append(f"| {f['family']} | {f['networks']} | {f['packets']:,} | "
                     f"{f['packet_hops']:,} | {f['cycles']:,} | {f['errors']} | "
                     f"{f['faults_counted_exactly']} | {f['wall_seconds'] / 60:.0f} min |")
    lines += ["", "| network | routers | PEs | packets | mean hops | refused flits | errors |",
              "|---|---|---|---|---|---|---|"]
    for n in data["networks"]:
        refused = sum(p["refused"] or 0 for p in n["points"])
        hops = n["packet_hops"] / n["packets"] if n["packets"] else 0
        lines.append(f"| {n['label']} ({n['network']}) | {n['routers']} | {n['pes']} | "
                     f"{n['packets']:,} | {hops:.2f} | {refused:,} | {n['errors']}"
                     + (f": {n['failure']}" if n.get("failure") else "") + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=",".join(family_words()))
    parser.add_argument("--networks", default=",".join(["default", *presets()]),
                        help="'default' and preset names (default: all)")
    parser.add_argument("--packets", type=int, default=1_000_000,
                        help="packets per family, shared by its networks")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-faults", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS / "soak.json")
    parser.add_argument("--table", action="store_true",
                        help="print the Markdown tables of the results in --out and stop")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(args.out.read_text())))
        return 0
    measured_with = provenance()  # the code that runs, not the commit at the end
    families = args.families.split(",")
    chosen = cases(families, set(args.networks.split(",")))
    share = {family: sum(c["family"] == family for c in chosen) for family in families}
    started = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        soaks = {c["label"]: pool.submit(soak, c, math.ceil(args.packets / share[c["family"]]))
                 for c in chosen}
        smallest = {}
        for c in chosen:
            size = family_for(c["network"]).terminal_count(c["network"])
            if c["family"] not in smallest or size < smallest[c["family"]][0]:
                smallest[c["family"]] = (size, c)
        fault_runs = {} if args.no_faults else {
            family: pool.submit(faults, c) for family, (_, c) in smallest.items()}
        networks = []
        for label, future in soaks.items():
            networks.append(future.result())
            n = networks[-1]
            print(f"  {label}: {n['packets']:,} packets, {n['errors']} errors, "
                  f"{n['wall_seconds']:.0f} s", file=sys.stderr, flush=True)
        fault_results = [future.result() for future in fault_runs.values()]
    per_family = []
    for family in families:
        mine = [n for n in networks if n["family"] == family]
        if not mine:
            continue
        faults_ok = [r["counted_exactly"] for f in fault_results if f["family"] == family
                     for r in f["runs"]]
        per_family.append({"family": family, "networks": len(mine),
                           "packets": sum(n["packets"] for n in mine),
                           "packet_hops": sum(n["packet_hops"] for n in mine),
                           "cycles": sum(n["cycles"] for n in mine),
                           "errors": sum(n["errors"] for n in mine),
                           "faults_counted_exactly": f"{sum(faults_ok)}/{len(faults_ok)}",
                           "wall_seconds": sum(n["wall_seconds"] for n in mine)})
    data = {"bench": "soak", **measured_with, "packets_per_family": args.packets,
            "wall_seconds": time.perf_counter() - started, "families": per_family,
            "networks": networks, "faults": fault_results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1))
    for f in per_family:
        print(f"{f['family']}: {f['packets']:,} packets ({f['packet_hops']:,} packet-hops, "
              f"{f['cycles']:,} cycles) on {f['networks']} networks, {f['errors']} errors, "
              f"faults counted exactly {f['faults_counted_exactly']}, "
              f"{f['wall_seconds']:.0f} s")
    return 0 if all(f["errors"] == 0 for f in per_family) and all(
        r["counted_exactly"] for f in fault_results for r in f["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
