"""What ``twinnet prove`` proves: the units of a router kind, their sizes and limits, and the
runs of :mod:`.sby` that give their verdicts.

A :class:`Target` is one router kind: its configuration and its route computes. Its units
are the router's property set (:mod:`.router`) and, when it has a specification (its family's
:attr:`~twinnet.families.Family.route_spec`), the route compute's (:mod:`.route_spec`).
"""

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from twinnet.model.sizes import default_depth

from ..config import PortConfig, RouterConfig
from ..header_route import HeaderRouteCompute
from . import sby
from .compact import CompactRouterProof
from .mutants import MUTANTS
from .route_spec import RouteComputeProof, header_spec
from .router import RouterProof
from .stages import FormalRouter

#: Induction depth of the router's property set (it closes at 3 on the default router).
ROUTER_DEPTH = 4
#: The depth tried first with packets of one flit, where every flit is a whole packet: the
#: induction closes at 2 there (the default router's, 002-dt16's), and a base case of two
#: steps decides routers whose fourth step takes too long (002-kt16's took over 40 minutes
#: at step 3).
ONE_FLIT_DEPTH = 2


#: Routers of this many ports or more (the largest the proofs take) have each property's
#: induction step proven in a job of its own (:func:`~.sby.split_verdicts`): on the 10-port
#: 002 king torus router the one job of all properties was undecided after 2 hours 20
#: minutes. Smaller routers keep the one job, faster on the default router (one model to
#: prepare, not twenty) and measured on the 9-port KT8 router with broadcast.
PER_PROPERTY_PORTS = 10


def per_property(config: RouterConfig) -> bool:
    """Whether the proof of a router of ``config`` has a job per property's induction step
    by default."""
    return config.port_count >= PER_PROPERTY_PORTS


def router_depth(config: RouterConfig) -> int:
    """The induction depth of the property set of a router of ``config``."""
    return ONE_FLIT_DEPTH if config.max_packet_length == 1 else ROUTER_DEPTH

#: Induction depth of a route compute's proof (it has no state: any depth closes; at depth 2
#: the base case also checks a step after the first).
ROUTE_DEPTH = 2
#: Steps of the bounded model checking that follows where induction does not close: a bug
#: whose first failing step is past the base case's is found up to this step.
BMC_DEPTH = 10
#: The largest router the proof takes: ports, longest packet, and buffered flits in all.
MAX_PORTS, PROVE_LENGTH_LIMIT, MAX_BUFFERED_FLITS = 10, 4, 96


@dataclass
class Target:
    """A router kind to prove: ``name``, ``config`` (its :class:`RouterConfig`),
    ``route_compute``, the factory ``(config, in_port) -> RouteCompute`` of its router, and
    ``spec``, the specification its route computes are proven against (a function as
    :class:`~.route_spec.RouteComputeProof` takes; None: they are not proven), and
    ``broadcast``: its routing replicates broadcasts."""

    name: str
    config: RouterConfig
    route_compute: object
    spec: object = None
    broadcast: bool = False

    def route_computes(self) -> list:
        """One route compute per input port."""
        return [self.route_compute(self.config, port) for port in range(self.config.port_count)]


def lone_router(*, max_packet_length: int = 3, buffer_depth: int | None = None,
                flit_width: int = 8, **microarchitecture) -> Target:
    """The default router of the proofs: four link ports of two VCs (bubble ports, so that
    both admission rules are exercised) and a PE port of two VCs, buffers of two packets,
    with the header-routed test routing (:class:`HeaderRouteCompute`: any output, VC and
    bubble flag a header names). ``microarchitecture``: :class:`RouterConfig`'s ``pipeline``,
    ``allocator``, ``iterations``, ``switch_inputs``, ``hold``."""
    depth = default_depth(max_packet_length) if buffer_depth is None else buffer_depth
    ports = tuple([PortConfig("network", 2, depth, bubble=depth >= 2 * max_packet_length,
                              name=name) for name in ("Xp", "Xm", "Yp", "Ym")]
                  + [PortConfig("pe", 2, depth, name="PE")])
    config = RouterConfig(flit_width, max_packet_length, ports, drop_count_width=4,
                          **microarchitecture)
    return Target("router5", config, HeaderRouteCompute, header_spec)


def check_size(target: Target) -> None:
    """Raise ``ValueError`` (one line) for a router the proof does not take."""
    config = target.config
    name = target.name
    if not 1 <= config.max_packet_length <= PROVE_LENGTH_LIMIT:
        raise ValueError(f"{name}: the longest packet must be 1 to {PROVE_LENGTH_LIMIT} flits "
                         f"to prove, not {config.max_packet_length}")
    for index, port in enumerate(config.ports):
        if port.buffer_depth > 2 * config.max_packet_length:
            raise ValueError(f"{name}: port {index} buffers {port.buffer_depth} flits; the "
                             f"proofs take at most two packets ({2 * config.max_packet_length}) "
                             f"per VC (see docs/formal.md)")
    flits = sum(port.vc_count * port.buffer_depth for port in config.ports)
    if config.port_count > MAX_PORTS or flits > MAX_BUFFERED_FLITS:
        raise ValueError(f"{name}: {config.port_count} ports buffering {flits} flits is too "
                         f"large to prove in reasonable time (at most {MAX_PORTS} ports and "
                         f"{MAX_BUFFERED_FLITS} flits; see docs/formal.md)")


#: The longest packet a router is proven at when its own sizes are too large to prove.
SHRUNK_LENGTH_LIMIT = 3


def _sizes(config: RouterConfig) -> dict:
    return {"max_packet_length": config.max_packet_length,
            "buffer_depths": sorted({port.buffer_depth for port in config.ports})}


def proof_sizes(target: Target) -> tuple[Target, dict | None]:
    """``target`` at sizes the proofs take: itself if :func:`check_size` takes it, else the
    same router (ports, VCs, bubble flags, microarchitecture, routing) with packets of 1 to
    L' flits and buffers of two such packets, L' the largest of its own longest packet and
    :data:`SHRUNK_LENGTH_LIMIT` down to 1 that fits. Returns the target and, when shrunk,
    ``{"given": ..., "proven": ...}`` (``max_packet_length``, ``buffer_depths``). Raises
    ``ValueError`` (one line) for a router no size makes provable."""
    try:
        check_size(target)
        return target, None
    except ValueError:
        pass
    config = target.config
    for length in range(min(config.max_packet_length, SHRUNK_LENGTH_LIMIT), 0, -1):
        ports = tuple(dataclasses.replace(port, buffer_depth=2 * length)
                      for port in config.ports)
        shrunk = dataclasses.replace(target, config=dataclasses.replace(
            config, max_packet_length=length, ports=ports))
        try:
            check_size(shrunk)
        except ValueError as error:
            reason = error
            continue
        return shrunk, {"given": _sizes(config), "proven": _sizes(shrunk.config)}
    raise reason


def _router(target: Target, mutant: str | None):
    cls = FormalRouter if mutant is None else MUTANTS[mutant].router
    return cls(target.config, target.route_compute)


def prove_router(target: Target, workdir: Path, *, mutant: str | None = None,
                 bmc_depth: int = BMC_DEPTH, engine: str | None = None,
                 timeout: int = sby.TIMEOUT, progress=None, split: bool | None = None,
                 jobs: int = 1) -> list:
    """The router property set of ``target`` (with bug ``mutant``, checked as the router
    itself is): its verdicts. ``split``: a job per property's induction step (None: as
    :func:`per_property` says), ``jobs`` of them at once. With packets of one flit the
    proof is first tried at
    :data:`ONE_FLIT_DEPTH`; unless every property is proven there, the usual flow at
    :data:`ROUTER_DEPTH` decides (and searches deeper where induction does not close). A
    first try stopped at its time limit is the verdict: the deeper induction would take
    longer still, and no deeper search follows a time limit."""
    unit = f"router {target.name}" + (f" [{mutant}]" if mutant else "")
    invariants = mutant is None or MUTANTS[mutant].invariants
    proof = CompactRouterProof if target.config.pipeline == 2 else RouterProof
    top = proof(_router(target, mutant), unit, invariants=invariants, spec=target.spec)
    depth = router_depth(target.config)
    split = per_property(target.config) if split is None else split
    if depth < ROUTER_DEPTH:
        found = sby.prove(top, top.ports(), top.properties, workdir / "short", depth=depth,
                          engine=engine, timeout=timeout, progress=progress, split=split,
                          jobs=jobs)
        if (all(v.verdict == "proven" for v in found)
                or any(v.stopped == "timeout" for v in found)):
            return found
    return sby.prove(top, top.ports(), top.properties, workdir, depth=ROUTER_DEPTH,
                     bmc_depth=bmc_depth, engine=engine, timeout=timeout, progress=progress,
                     split=split, jobs=jobs)


def prove_route(target: Target, workdir: Path, *, bmc_depth: int = BMC_DEPTH,
                engine: str | None = None, timeout: int = sby.TIMEOUT,
                progress=None) -> list | None:
    """The route compute of ``target`` against its specification (combinational: induction
    covers every input); None when it has no specification."""
    if target.spec is None:
        return None
    top = RouteComputeProof(target.route_computes(), target.spec, f"route {target.name}")
    return sby.prove(top, top.ports(), top.properties, workdir, depth=ROUTE_DEPTH,
                     bmc_depth=bmc_depth, engine=engine, timeout=timeout, progress=progress)


def applies(target: Target, name: str) -> bool:
    """Mutant ``name`` can be built on ``target``: a broadcast mutant needs a routing that
    broadcasts, a route mutant the route compute it subclasses."""
    mutant = MUTANTS[name]
    if mutant.router is not None:
        return not mutant.broadcast or target.broadcast
    return isinstance(target.route_compute, type) and issubclass(mutant.route,
                                                                 target.route_compute)


def prove_mutant(target: Target, name: str, workdir: Path, *, bmc_depth: int = BMC_DEPTH,
                 engine: str | None = None, timeout: int = sby.TIMEOUT,
                 progress=None, split: bool | None = None, jobs: int = 1) -> list:
    """``target`` with bug ``name`` (:data:`~.mutants.MUTANTS`): the verdicts of the unit it
    concerns. A route mutant needs a target whose route compute it subclasses."""
    mutant = MUTANTS[name]
    if mutant.router is not None and not applies(target, name):
        raise ValueError(f"mutant {name} changes broadcast replication; {target.name}'s "
                         "routing does not broadcast (try: twinnet prove king --broadcast)")
    if mutant.router is not None:
        if mutant.settings:  # the settings the bug lives in, over the target's
            target = dataclasses.replace(target, config=dataclasses.replace(
                target.config, **dict(mutant.settings)))
        return prove_router(target, workdir, mutant=name, bmc_depth=bmc_depth, engine=engine,
                            timeout=timeout, progress=progress, split=split, jobs=jobs)
    if not applies(target, name):
        raise ValueError(f"mutant {name} changes the default router's route compute; "
                         f"{target.name} has another")
    return prove_route(dataclasses.replace(target, name=f"{target.name} [{name}]",
                                           route_compute=mutant.route),
                       workdir, bmc_depth=bmc_depth, engine=engine, timeout=timeout,
                       progress=progress)


def _mutant_runs(target: Target, mutants, workdir: Path, report: dict, *, bmc_depth, engine,
                 timeout, progress, split, jobs):
    for name in mutants:
        if progress is not None:
            progress(f"{target.name}: mutant {name}")
        started = time.perf_counter()
        found = prove_mutant(target, name, workdir / target.name / name, bmc_depth=bmc_depth,
                             engine=engine, timeout=timeout, progress=progress, split=split,
                          jobs=jobs)
        failed = [v for v in found if v.verdict == "failed"]
        report["properties"] += [v.to_dict() for v in found]
        report["mutants"].append({
            "name": name, "text": MUTANTS[name].text, "unit": found[0].unit,
            "caught": bool(failed), "failed": [v.name for v in failed],
            "trace": failed[0].trace if failed else None,
            "seconds": round(time.perf_counter() - started, 1)})


def run(targets: list, workdir: Path, *, mutants=(), bmc_depth: int = BMC_DEPTH,
        engine: str | None = None, timeout: int = sby.TIMEOUT, progress=None,
        split: bool | None = None, jobs: int = 1) -> dict:
    """Prove every target (or, with ``mutants``, look for each bug): ``{"properties": [...],
    "mutants": [...], "skipped": [...]}``, JSON-ready; ``bmc_depth``: the steps of the search
    that follows where induction does not close; ``timeout``: each job's time limit in
    seconds; ``split``: each router property's induction step a job of its own (None: as
    :func:`per_property` says for each router), ``jobs`` of those at once."""
    report = {"properties": [], "mutants": [], "skipped": []}
    sby.check_tools(engine)
    for target in targets:
        check_size(target)
    for target in targets:
        if mutants:
            _mutant_runs(target, mutants, workdir, report, bmc_depth=bmc_depth, engine=engine,
                         timeout=timeout, progress=progress, split=split, jobs=jobs)
            continue
        report["properties"] += [v.to_dict() for v in prove_router(
            target, workdir / target.name / "router", bmc_depth=bmc_depth, engine=engine,
            timeout=timeout, progress=progress, split=split, jobs=jobs)]
        route = prove_route(target, workdir / target.name / "route", bmc_depth=bmc_depth,
                            engine=engine, timeout=timeout, progress=progress)
        if route is None:
            report["skipped"].append({"unit": f"route {target.name}",
                                      "reason": "its family gives no specification of its "
                                                "route compute"})
        else:
            report["properties"] += [v.to_dict() for v in route]
    if not mutants:
        report["mutants"] = [{"name": m.name, "text": m.text} for m in MUTANTS.values()]
    return report
