"""``twinnet prove``: formal proofs of a router's properties and of its route compute.

Without FAMILY, preset or TOML file (and without family flags) the router is the proofs'
default: a lone five-port router of two VCs per port with the header-routed test routing
(:func:`twinnet.hdl.formal.suite.lone_router`). Otherwise the network comes from the same
preset/TOML/flags as ``twinnet gen`` and each of its router kinds is proven (``--router-kind``
picks one); without a preset or TOML file, packets default to 2 flits and buffers to two
packets, the largest the proofs take. See ``docs/formal.md``.

Exit status (:data:`EXIT_STATUS`): 0 when every property asked for is proven, 1 when a
property failed, 3 when a property is only bounded (unless ``--allow-bounded``), 2 when a tool
is missing or the input is refused. A mutant's router (``--mutant``) is judged as any other:
a caught mutant exits with 1; the JSON's ``mutants`` say which were caught. ``--json`` prints
the whole report in every outcome but refused input.
"""

import os
import sys
import time
import warnings
from pathlib import Path

from twinnet.errors import UsageError
from twinnet.families import family_for
from twinnet.model.sizes import INTERFACE_PARAMETERS, RouterSizes

from . import args as parse
from . import gen_cmd
from .report import Report, add_json_flag

#: Sizes of a family's routers when no preset or TOML file gives them.
PROVE_PACKET_LENGTH = 3
#: The exit status of each outcome (``status`` in the JSON).
EXIT_STATUS = {"proven": 0, "failed": 1, "tool-missing": 2, "error": 2, "bounded": 3}
#: The deepest search ``--bmc-depth`` takes.
MAX_BMC_DEPTH = 40
#: The longest time limit ``--timeout`` takes: a week, in seconds.
MAX_TIMEOUT = 7 * 24 * 3600
#: ``--induction``'s choices: whether each property's induction step is a job of its own
#: (None: as the router's size says).
INDUCTION = {"auto": None, "joint": False, "per-property": True}
#: The most induction steps ``--jobs`` runs at once.
MAX_JOBS = 256


def register(commands) -> None:
    from twinnet.hdl.formal.mutants import MUTANTS
    from twinnet.hdl.formal.sby import ENGINES, TIMEOUT
    from twinnet.hdl.formal.suite import (
        BMC_DEPTH,
        MAX_BUFFERED_FLITS,
        MAX_PORTS,
        ONE_FLIT_DEPTH,
        PER_PROPERTY_PORTS,
        PROVE_LENGTH_LIMIT,
        ROUTER_DEPTH,
    )

    parser = commands.add_parser(
        "prove", help="prove a router's properties and its route compute (SymbiYosys)",
        description="Prove the properties of a router (credits, buffers, virtual cut-through "
                    "and bubble admission, whole packets per output, routes honoured, drops "
                    "counted once, bad framing dropped and counted, fair allocation, flit "
                    "conservation) by k-induction, and "
                    "its route compute against its family's specification (written from the "
                    "routing's definition, e.g. the papers' formulas; a family without one has "
                    "its routers' properties proven alone). Each property is reported "
                    "proven, failed (with a "
                    "counterexample VCD and its step) or bounded (with the steps checked): "
                    "where induction does not close, bounded model checking searches on to "
                    "--bmc-depth steps for a real counterexample. Exit status 0: all proven; "
                    "1: a property failed; 3: a property only bounded (unless "
                    "--allow-bounded); 2: a tool missing. Packets have 1 to "
                    "--max-packet-length flits, and PEs may break their framing. Without "
                    "FAMILY, preset or TOML file: the default five-port router. Progress "
                    "goes to stderr.",
        epilog="Network flags as for 'twinnet gen'. Limits: "
               f"packets of 1 to --max-packet-length flits, at most {PROVE_LENGTH_LIMIT}, at "
               "most two longest packets per buffer, "
               f"at most {MAX_PORTS} ports and {MAX_BUFFERED_FLITS} buffered flits. "
               f"Mutants: {', '.join(MUTANTS)}.")
    gen_cmd.add_network_args(parser, interfaces=False)
    parser.add_argument("--router-kind", type=parse.name, metavar="KIND",
                        help="prove only this router kind of the network (default: all)")
    parser.add_argument("--mutant", choices=[*MUTANTS, "all"], metavar="NAME",
                        help="build the router with a known bug instead and show which "
                             "property fails: " + ", ".join(MUTANTS) + " or all (those "
                             "that apply: the broadcast ones need a routing that broadcasts, "
                             "e.g. king --broadcast; the route ones the default router)")
    parser.add_argument("--bmc-depth", type=parse.integer, default=BMC_DEPTH, metavar="N",
                        help="where induction does not close, search for a counterexample by "
                             f"bounded model checking to N steps, {ROUTER_DEPTH + 1} to "
                             f"{MAX_BMC_DEPTH} (default {BMC_DEPTH}; the proofs' own base case "
                             f"checks {ROUTER_DEPTH}, {ONE_FLIT_DEPTH} with packets of one "
                             "flit)")
    parser.add_argument("--timeout", type=parse.integer, default=TIMEOUT, metavar="SECONDS",
                        help="each SymbiYosys job's time limit (the proof of a router kind or "
                             "route compute, and the deeper search), 1 to "
                             f"{MAX_TIMEOUT} (default {TIMEOUT}): a job stopped there leaves "
                             "its undecided properties bounded to the steps checked")
    parser.add_argument("--induction", choices=tuple(INDUCTION), default="auto",
                        help="the routers' induction step: joint (one job for all of a "
                             "router's properties), per-property (a job per property, each "
                             "taking the others as assumptions one step late: for routers "
                             "whose joint step does not decide), or auto (per-property for "
                             f"routers of {PER_PROPERTY_PORTS} ports or more; the default)")
    parser.add_argument("--jobs", type=parse.integer, default=None, metavar="N",
                        help="with one induction step per property, N of them at once, 1 to "
                             f"{MAX_JOBS} (default: the number of cores)")
    parser.add_argument("--allow-bounded", action="store_true",
                        help="exit with status 0 when properties are proven or only bounded "
                             "(none failed); without it, bounded exits with status 3")
    parser.add_argument("--solver", choices=tuple(ENGINES),
                        help="SMT solver of the smtbmc engine (default: the first installed "
                             "of " + ", ".join(ENGINES) + ")")
    parser.add_argument("--out", type=parse.path, default=Path("out") / "prove",
                        help="folder for the proofs' work files and counterexample traces "
                             "(default ./out/prove)")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def say(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)


class LoneRouterSizes(RouterSizes):
    """The proofs' lone router's sizes: those of a network's routers, its links bubble ports
    (a buffer holds two packets)."""

    @classmethod
    def bubble(cls, values: dict) -> bool:
        return True


def _router_keys() -> tuple[str, ...]:
    """The router's own parameters (sizes and microarchitecture), which a lone router takes."""
    return tuple(each.name for each in RouterSizes.parameters()
                 if each.name not in INTERFACE_PARAMETERS)


def _family_given(args) -> bool:
    return gen_cmd.flags_given(args, ignore=_router_keys())


def targets_from_args(args) -> tuple[str, list]:
    """The name of what is proven and its :class:`~twinnet.hdl.formal.suite.Target` list."""
    from amaranth.hdl import UnusedElaboratable

    from twinnet.hdl.formal.suite import Target, lone_router

    if not _family_given(args):
        from twinnet.model.sizes import RouterSizes

        given = {each.name: getattr(args, each.name) for each in RouterSizes.parameters()
                 if each.name in _router_keys() and getattr(args, each.name) is not None}
        # The networks' checks and limits (through the sizes' declarations), on the lone
        # router's own default packet length, its links bubble ports.
        checked = LoneRouterSizes.checked(
            {"max_packet_length": PROVE_PACKET_LENGTH, **given},
            {"max_packet_length": f"the lone router's packets ({PROVE_PACKET_LENGTH} flits)",
             **{each.name: each.flag for each in RouterSizes.parameters()}})
        sizes = {key: checked[key] for key in given}
        from twinnet.hdl.flit import FlitFormat
        from twinnet.hdl.header_route import header_layout

        try:
            target = lone_router(**sizes)
            FlitFormat(target.config, header_layout(target.config))  # the header fits
        except (TypeError, ValueError) as error:
            flags = " ".join(f"--{key.replace('_', '-')} {value}" for key, value in sizes.items())
            raise UsageError(f"{flags}: {error}") from None
        return target.name, [target]
    if args.preset is None and args.toml is None:
        if args.max_packet_length is None:
            args.max_packet_length = PROVE_PACKET_LENGTH
        if args.buffer_depth is None:
            args.buffer_depth = 2 * args.max_packet_length
    network = gen_cmd.network_from_args(args)
    family = family_for(network)
    kinds = family.netlist(network).kinds
    spec = family.specification(network)
    # The proofs use the kinds' configurations and route computes; the kinds' own routers
    # are never elaborated.
    warnings.filterwarnings("ignore", category=UnusedElaboratable)
    if args.router_kind is not None:
        if args.router_kind not in kinds:
            raise UsageError(f"--router-kind {args.router_kind}: {network.name} has router "
                             f"kinds {', '.join(kinds)}")
        kinds = {args.router_kind: kinds[args.router_kind]}
    return network.name, [Target(name, router.config,
                                 lambda config, port, router=router: router.route_computes[port],
                                 spec, broadcast=router.broadcast_vc is not None)
                          for name, router in kinds.items()]


def run(args) -> Report:
    from twinnet.hdl.formal import sby, suite
    from twinnet.hdl.formal.mutants import MUTANTS
    from twinnet.model import checks

    bmc_depth = checks.check_int("--bmc-depth", args.bmc_depth, minimum=suite.ROUTER_DEPTH + 1,
                                 maximum=MAX_BMC_DEPTH)
    timeout = checks.check_int("--timeout", args.timeout, minimum=1, maximum=MAX_TIMEOUT)
    jobs = (min(os.cpu_count() or 1, MAX_JOBS) if args.jobs is None
            else checks.check_int("--jobs", args.jobs, minimum=1, maximum=MAX_JOBS))
    name, targets = targets_from_args(args)
    mutants = [args.mutant] if args.mutant not in (None, "all") else []
    if args.mutant == "all":  # those that apply to every router proven
        mutants = [mutant for mutant in MUTANTS
                   if all(suite.applies(target, mutant) for target in targets)]
    for target in targets:
        for mutant in mutants:
            if not suite.applies(target, mutant):
                needs = (("a routing that broadcasts (e.g. king --broadcast)", "routing")
                         if MUTANTS[mutant].broadcast else ("the default router",
                                                            "route compute"))
                raise UsageError(f"--mutant {mutant}: needs {needs[0]}; {target.name} has "
                                 f"another {needs[1]}")
    sizes = []
    if args.preset is not None or args.toml is not None:
        # A preset's own buffers and packets may be too large to prove: its routers are
        # proven at smaller ones, and the report says which.
        shrunk = [suite.proof_sizes(target) for target in targets]
        targets = [target for target, _ in shrunk]
        sizes = [{"unit": f"router {target.name}", **change}
                 for target, change in shrunk if change is not None]
    for target in targets:
        suite.check_size(target)
    started = time.perf_counter()
    try:
        sby.check_tools(args.solver)
        print(f"twinnet prove: {name} ({', '.join(t.name for t in targets)})",
              file=sys.stderr, flush=True)
        report = suite.run(targets, args.out / name, mutants=mutants, bmc_depth=bmc_depth,
                           engine=args.solver, timeout=timeout, progress=say,
                           split=INDUCTION[args.induction], jobs=jobs)
    except (sby.ToolMissing, sby.ProverError) as error:
        status = "tool-missing" if isinstance(error, sby.ToolMissing) else "error"
        report = {"properties": [], "mutants": [], "skipped": [], "error": str(error)}
        message = f"prove: {error}"
    else:
        status, message = _outcome(report, allow_bounded=args.allow_bounded)
    report.update(name=name, status=status, bmc_depth=bmc_depth, timeout=timeout, sizes=sizes,
                  induction=args.induction,
                  seconds=round(time.perf_counter() - started, 1))
    code = EXIT_STATUS[status]
    if status == "bounded" and args.allow_bounded:
        code = 0
    text = describe(report) if "error" not in report else ""
    return Report(text, report, status=code, message=message)


def _outcome(report: dict, *, allow_bounded: bool) -> tuple[str, str]:
    """The run's status (a key of :data:`EXIT_STATUS`) and the line that explains it. A
    mutant's router is judged as any other (a caught mutant has a failed property); a mutant
    that fails no property is named in the line."""
    props = report["properties"]
    missed = [m["name"] for m in report["mutants"] if m.get("caught") is False]
    note = f"; mutant(s) {', '.join(missed)} failed no property" if missed else ""
    failed = [p for p in props if p["verdict"] == "failed"]
    if failed:
        return "failed", (f"prove: {failed[0]['unit']}: {failed[0]['name']} failed at step "
                          f"{failed[0]['depth']}; counterexample {failed[0]['trace']}{note}")
    bounded = [p for p in props if p["verdict"] == "bounded"]
    if bounded:
        names = ", ".join(f"{p['unit']}: {p['name']}" for p in bounded[:3])
        more = f" and {len(bounded) - 3} more" if len(bounded) > 3 else ""
        why = (f"stopped at the time limit (--timeout) with {bounded[0]['depth']} steps checked"
               if bounded[0]["stopped"] == "timeout" else
               "induction did not close and no counterexample was found in "
               f"{bounded[0]['depth']} steps")
        return "bounded", (f"prove: only bounded ({names}{more}): {why}"
                           + ("" if allow_bounded else "; --allow-bounded accepts it") + note)
    return "proven", f"prove: {note[2:]}" if missed else ""


def describe(report: dict) -> str:
    """One line per property: unit, name, verdict (with depth), engine, seconds, trace."""
    lines = []
    for prop in report["properties"]:
        verdict = {"proven": "proven", "bounded": f"bounded ({prop['depth']} steps)",
                   "failed": f"failed (step {prop['depth']})"}[prop["verdict"]]
        if prop["stopped"] == "timeout":
            verdict += ", time limit"
        line = (f"{prop['unit']:<24} {prop['name']:<36} {verdict:<18} {prop['engine']:<14} "
                f"{prop['seconds']:>7.1f} s")
        if prop["trace"]:
            line += f"  trace {prop['trace']}" + (" (bounded model checking)"
                                                  if prop["found_by"] == "bmc" else "")
        elif prop["induction_trace"]:
            line += f"  induction failed: {prop['induction_trace']}"
        lines.append(line)
    for change in report["sizes"]:
        given, proven = change["given"], change["proven"]
        lines.append(f"{change['unit']:<24} proven at packets of 1 to "
                     f"{proven['max_packet_length']} flits and buffers of "
                     f"{'/'.join(map(str, proven['buffer_depths']))} (its own: "
                     f"{given['max_packet_length']}, "
                     f"{'/'.join(map(str, given['buffer_depths']))})")
    for skipped in report["skipped"]:
        lines.append(f"{skipped['unit']:<24} not proven: {skipped['reason']}")
    for mutant in report["mutants"]:
        if "caught" in mutant:
            caught = (f"fails {', '.join(mutant['failed'])}" if mutant["caught"]
                      else "fails nothing")
            lines.append(f"mutant {mutant['name']}: {caught}")
    lines.append(f"{report['name']}: {report['seconds']:.1f} s")
    return "\n".join(lines)
