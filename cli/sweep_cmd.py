"""``twinnet sweep``: a latency-throughput curve of a network, with traffic in hardware.

The network comes from the same preset/TOML/flags as ``twinnet gen`` (any family). It is
generated and built once with the traffic harness (:mod:`twinnet.hdl.traffic`); then every
(offered load, seed) point runs as its own simulation of that build, with warm-up, measurement
and drain phases (:mod:`twinnet.sim_tb.traffic_cocotb`), several at once on the local cores
(``--jobs``) or on a Dask distributed cluster (``--scheduler ADDRESS``; the workers must see
the build folder at the same path, e.g. on a shared file system). Every point checks that each
packet arrived once, intact, at the right terminal, in order per pair where the routing keeps
it.

Writes ``<out>/<network>-sweep.json`` and ``.csv`` (one row per point) and a plot (latency
against offered and accepted load, the mean over the seeds with error bars of one standard
deviation, the saturation point marked), and prints the model's throughput bound under the
pattern (the largest expected channel load, :func:`twinnet.model.traffic.throughput_bound`)
beside the measured saturation.

``--knee TOL`` refines the grid around saturation: a load is saturated when the accepted
throughput, averaged over the seeds, is below :data:`SATURATED` of the offered load; between
the highest unsaturated load and the lowest saturated one the sweep runs the midpoint (every
seed), and again, until the two are at most TOL apart. The JSON's ``knee`` gives the bracket.

``--link-loads FILE`` builds the network with its link counters
(:mod:`twinnet.hdl.link_counter`): every point reports ``link_loads`` over its measured cycles
and gets its load map beside ``FILE`` (:func:`load_maps`).
"""

import csv
import functools
import json
import math
import sys
import time
from pathlib import Path

from twinnet.errors import CheckFailed, UsageError
from twinnet.families import family_for
from twinnet.gen import output
from twinnet.model.traffic import throughput_bound
from twinnet.sim_tb.settings import MAX_POINTS

from . import args as parse
from . import gen_cmd
from .report import Report, add_json_flag
from .run_settings import add_settings, refuse_unrated, resolve
from .sim_cmd import (
    backpressure_settings,
    check_ranks,
    check_simulator,
    injection_settings,
    length_settings,
    network_for_lengths,
    point_lengths,
    refuse_traffic_flags,
)

#: Terminals up to which the model's throughput bound is computed (every ordered pair is
#: routed: about a second at 256 terminals).
MAX_BOUND_TERMINALS = 256
#: A point is saturated when it accepts less than this share of what it offered.
SATURATED = 0.95
#: The settings a sweep through the AXI4-Stream interfaces (--ni axi-stream) cannot honour:
#: given, they are refused.
FRAME_REFUSED = ("pattern", "hotspot_fraction", "injection", "burst", "packet_lengths",
                 "packet_length_weights", "stall_bursts", "stalls", "link_loads", "ranks")
#: The settings of ``twinnet sweep`` (:mod:`twinnet.sim_tb.settings`).
SWEEP_SETTINGS = ("simulator", "pattern", "loads", "seeds", "warmup", "measure",
                  "hotspot_fraction", "injection", "burst", "packet_lengths",
                  "packet_length_weights", "eject_ready", "stall_bursts", "ranks", "stalls",
                  "knee", "jobs", "scheduler", "out")


def register(commands) -> None:
    parser = commands.add_parser(
        "sweep", help="latency-throughput sweep with traffic generated and checked in hardware",
        description="Generate and build a network once with a traffic source and sink on "
                    "every PE, then simulate each offered load (and seed) as its own run, "
                    "several at once: warm-up, measurement and drain, every packet checked "
                    "end to end. Writes JSON, CSV and a latency-throughput plot.",
        epilog="Network flags as for 'twinnet gen'. " + gen_cmd.limits_help())
    gen_cmd.add_network_args(parser)
    add_settings(parser, SWEEP_SETTINGS)
    parser.add_argument("--link-loads", type=parse.path, metavar="FILE",
                        help="build the network with link counters: every point reports the "
                             "flits, packets and blocked cycles of every link (per VC) and "
                             "terminal port over its measured cycles (JSON link_loads), and "
                             "its load map is drawn beside FILE (.svg or .png) as "
                             "FILE-<offered load>-s<seed>, with its histogram")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def grid(args) -> tuple[list[float], list[int]]:
    """The sweep's offered loads (flits per PE per cycle) and seeds, at most
    :data:`~twinnet.sim_tb.settings.MAX_POINTS` points; a pattern with an offered load."""
    refuse_unrated(args, "offered load to sweep", "a sweep")
    if len(args.loads) * len(args.seeds) > MAX_POINTS:
        raise UsageError(f"--loads and --seeds: {len(args.loads) * len(args.seeds)} points; at "
                         f"most {MAX_POINTS}")
    return list(args.loads), list(args.seeds)


def points_of(args, network) -> list[dict]:
    """The sweep's points, checked against ``network``."""
    mix = length_settings(network, args)
    length = mix.mean()
    loads, seeds = grid(args)
    backpressure = backpressure_settings(args)
    return [{"pattern": args.pattern, "rate": load / length, "seed": seed,
             "warmup": args.warmup, "measure": args.measure,
             "hotspot_fraction": args.hotspot_fraction, "lengths": point_lengths(mix),
             **injection_settings(args, load / length, length), **backpressure}
            for load in loads for seed in seeds]


def points_at(points: list[dict], load: float, length: float) -> list[dict]:
    """The points of one more load: the grid's first load's points (one per seed) moved to
    ``load`` flits per PE per cycle (``length``: the mean packet length)."""
    first = points[0]["rate"]
    moved = {"rate": load / length, **({"load": load} if "load" in points[0] else {})}
    return [{**point, **moved} for point in points if point["rate"] == first]


def by_load(results: list[dict]) -> list[dict]:
    """Per offered load (flits per PE per cycle), the mean and standard deviation over the
    seeds of the accepted throughput and the mean latency (failed points left out)."""
    groups: dict[float, list[dict]] = {}
    for point in results:
        if "failure" not in point:
            groups.setdefault(round(point["offered_flits_per_pe_cycle"], 9), []).append(point)
    return [{"offered": load, "seeds": len(group),
             **{f"{name}_{stat}": value for key, name in (
                 ("accepted_flits_per_pe_cycle", "accepted"), ("mean_latency", "latency"))
                for stat, value in zip(("mean", "std"), _spread([p[key] for p in group]))}}
            for load, group in sorted(groups.items())]


def _spread(values: list[float]) -> tuple[float, float]:
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, 0.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def knee_bracket(results: list[dict]) -> tuple[float | None, float | None]:
    """(the highest unsaturated load below the lowest saturated one, that saturated load):
    either is None when every load is saturated, or none is."""
    loads = by_load(results)
    saturated = [row["offered"] for row in loads
                 if row["accepted_mean"] < SATURATED * row["offered"]]
    high = min(saturated, default=None)
    low = max((row["offered"] for row in loads
               if row["offered"] not in saturated and (high is None or row["offered"] < high)),
              default=None)
    return low, high


def run_point(simulator: str, build_dir: str, run_dir: str, point: dict, *,
              ranks: int = 1) -> dict:
    """One point on the built network (a function of plain values, so that a Dask worker or
    a local process can run it), on the program's ``ranks`` MPI ranks. A failed point is
    returned with ``failure`` set."""
    from twinnet.sim_tb import network_sim

    try:
        results = network_sim.run_generated(
            simulator, build_dir,
            {network_sim.TRAFFIC_TEST: {"points": [point], "ranks": ranks}},
            run_dir=run_dir, log=True)
    except network_sim.SimulationFailed as failure:
        return {**point, "failure": failure.summary}
    return results[network_sim.TRAFFIC_TEST]["points"][0]


def run(args) -> Report:
    resolve(args)
    network = network_for_lengths(args)
    family = family_for(network)
    if network.ni == "axi-stream":
        return _through_interfaces(network, family, args)
    points = points_of(args, network)
    ranks = check_ranks(args, network.flit_width, points[0])
    jobs = args.jobs
    check_simulator(args.simulator)
    from twinnet.sim_tb import network_sim
    if args.stalls and args.simulator != "verilator":
        raise UsageError(f"--stalls: the stall counters are read by the Verilator traffic "
                         f"program, not on --simulator {args.simulator}")
    maps = None
    if args.link_loads is not None:
        from .draw_cmd import picture

        maps = picture("--link-loads", args.link_loads)
        for point in points:
            point["count_links"] = True
    suffix = ("-stalls" if args.stalls else "") + ("-links" if maps is not None else "")
    build_dir = output.target(args.out, f"{network.name}-{args.simulator}-traffic{suffix}",
                              "--out")
    client = _client(args.scheduler) if args.scheduler is not None else None
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    say(f"twinnet sweep: {network.name} ({family.terminal_count(network)} PEs), "
        f"{len(points)} points on {args.simulator}")
    # Generate and build once, running the lightest point, then the others from the build.
    started = time.perf_counter()
    try:
        first = network_sim.simulate(network, args.simulator, build_dir,
                                     {network_sim.TRAFFIC_TEST: {"points": [points[0]],
                                                                 "ranks": ranks}},
                                     family=family, log=True, run_dir=build_dir / "runs" / "0",
                                     progress=lambda line: say(f"  {line}"),
                                     stalls=args.stalls, link_counters=maps is not None)
        results = [first[network_sim.TRAFFIC_TEST]["points"][0]]
    except network_sim.SimulationFailed as failure:
        # (A point that fails, e.g. deadlocks, is reported with the others.)
        results = [{**points[0], "failure": failure.summary}]
    say(f"  point 1/{len(points)} done ({time.perf_counter() - started:.0f} s)")
    calls = [(args.simulator, str(build_dir), str(build_dir / "runs" / str(i)), point)
             for i, point in enumerate(points[1:], start=1)]
    knee = None
    try:
        point_run = functools.partial(run_point, ranks=ranks)
        results += _map(calls, jobs, client, say, len(points), function=point_run)
        if args.knee is not None:
            results, knee = _refine(args, length_settings(network, args).mean(), points,
                                    results, build_dir, jobs, client, say, function=point_run)
    finally:
        if client is not None:
            client.close()
    failed = [r for r in results if "failure" in r]
    bound = _bound(network, family, args.pattern, args.hotspot_fraction)
    data = _summary(network, family, args, results, bound)
    data["knee"] = knee
    files = _write(Path(args.out), network.name, data)
    if maps is not None:
        files += load_maps(network, family, data["points"], maps)
    if failed:
        raise CheckFailed(f"{len(failed)} of {len(points)} points failed, first: "
                          f"{failed[0]['failure']} (results in {files[0]})")
    text = _text(data, files)
    return Report(text, {**data, "files": [str(f) for f in files]})


def _through_interfaces(network, family, args) -> Report:
    """``--ni axi-stream``: the sweep through the AXI4-Stream interfaces. Every point is the
    cocotb test ``load`` (:mod:`twinnet.sim_tb.axi_stream_cocotb`) on one build: every PE's
    core makes frames of 1 byte to the longest (uniform) to PEs drawn uniformly (itself
    included) at the offered load (flits per PE per cycle, a frame's heads counted), each
    checked once, byte for byte, at its destination, in order per pair where the routing
    keeps it; latency is a frame's, from the cycle it is made to the cycle its last beat
    leaves."""
    from twinnet.sim_tb import axi_stream_sim

    refuse_traffic_flags(args, FRAME_REFUSED, "twinnet sweep sends frames (uniform traffic) "
                         "through the interfaces and takes --loads, --seeds, --warmup, "
                         "--measure, --eject-ready, --knee, --simulator, --jobs, --scheduler, "
                         "--out and --json (see 'twinnet sweep --help')")
    loads, seeds = grid(args)
    warmup, measure, eject, jobs = args.warmup, args.measure, args.eject_ready, args.jobs
    check_simulator(args.simulator)
    build_dir = output.target(args.out, f"{network.name}-{args.simulator}-frames", "--out")
    client = _client(args.scheduler) if args.scheduler is not None else None
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    config = axi_stream_sim.prepare(network, build_dir, family=family)
    length = axi_stream_sim.mean_frame_flits(config)
    say(f"twinnet sweep: {network.name} ({config['pes']} PEs, AXI4-Stream, frames of 1 to "
        f"{config['max_frame_bytes']} bytes, {length:.2f} flits on average), "
        f"{len(loads) * len(seeds)} points on {args.simulator}")
    config.update(pause=0.0, sink_pause=1.0 - eject, warmup=warmup, measure=measure)
    points = [{**config, "pattern": "uniform", "load": load, "rate": load / length,
               "seed": seed} for load in loads for seed in seeds]
    started = time.perf_counter()
    results = [frame_point(args.simulator, str(build_dir), str(build_dir / "runs" / "0"),
                           points[0])]
    say(f"  point 1/{len(points)} done ({time.perf_counter() - started:.0f} s)")
    calls = [(args.simulator, str(build_dir), str(build_dir / "runs" / str(i)), point)
             for i, point in enumerate(points[1:], start=1)]
    knee = None
    try:
        results += _map(calls, jobs, client, say, len(points), function=frame_point)
        if args.knee is not None:
            results, knee = _refine(args, length, points, results, build_dir, jobs, client,
                                    say, function=frame_point)
    finally:
        if client is not None:
            client.close()
    failed = [r for r in results if "failure" in r]
    data = _summary(network, family, args, results, _bound(network, family, "uniform", 0.0))
    data.update(knee=knee, frames={"sizes": config["sizes"], "mean_flits": length,
                                   "eject_ready": eject})
    files = _write(Path(args.out), network.name, data)
    if failed:
        raise CheckFailed(f"{len(failed)} of {len(points)} points failed, first: "
                          f"{failed[0]['failure']} (results in {files[0]})")
    return Report(_text(data, files), {**data, "files": [str(f) for f in files]})


def frame_point(simulator: str, build_dir: str, run_dir: str, point: dict) -> dict:
    """One point through the interfaces (the cocotb test ``load``) on the build in
    ``build_dir``, as :func:`run_point` runs one of the routers' own traffic: the point's
    load, seed and phases with its results, or ``failure`` set."""
    from twinnet.sim_tb import axi_stream_sim

    summary = {key: point[key] for key in ("pattern", "rate", "seed", "warmup", "measure")}
    try:
        results = axi_stream_sim.run_prepared(simulator, build_dir, point, testcase="load",
                                              run_dir=run_dir)
    except AssertionError as error:
        return {**summary, "offered_flits_per_pe_cycle": point["load"],
                "failure": " ".join(str(error).split())}
    # The load offered, as the routers' own sweep reports it (the flits made are measured).
    return {**summary, **results["load"], "offered_flits_per_pe_cycle": point["load"]}


def _refine(args, length: float, points, results, build_dir, jobs, client, say, *,
            function=run_point):
    """``--knee``: bisect between the highest unsaturated and the lowest saturated load
    until they are at most ``args.knee`` apart (``length``: the flits of a point's unit, a
    packet or a frame, on average; ``function`` runs a point); return every result and the
    ``knee``."""
    tolerance = float(args.knee)
    low, high = knee_bracket(results)
    while low is not None and high is not None and high - low > tolerance:
        middle = (low + high) / 2
        say(f"  knee between {low:.4f} and {high:.4f}: trying {middle:.4f}")
        start = len(results)
        calls = [(args.simulator, str(build_dir), str(build_dir / "runs" / str(start + i)),
                  point) for i, point in enumerate(points_at(points, middle, length))]
        results = results + _map(calls, jobs, client, say, len(calls), done=0,
                                 function=function)
        low, high = knee_bracket(results)
    if low is None or high is None:
        say(f"  knee: not bracketed by the loads ({'every' if high is not None else 'no'} "
            "load saturated)")
    return results, {"tolerance": tolerance, "unsaturated": low, "saturated": high,
                     "located": low is not None and high is not None,
                     "rule": f"accepted below {SATURATED} of offered, mean over the seeds"}


def _client(scheduler: str):
    """A Dask distributed client of the scheduler at ``scheduler`` (checked before building)."""
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs Dask distributed (pip install distributed)") \
            from None
    try:
        return Client(scheduler, timeout=10)
    except (OSError, ValueError, TypeError) as error:
        raise UsageError(f"--scheduler {scheduler}: cannot connect: "
                         f"{' '.join(str(error).split())}") from None


def _map(calls, jobs: int, client, say, total: int, done: int = 1, *,
         function=run_point) -> list[dict]:
    """Run ``function`` (:func:`run_point` by default) for every call: on the Dask
    ``client``'s cluster, or ``jobs`` at a time on this machine (``done`` of ``total`` points
    were run before)."""
    if client is not None:
        from distributed import as_completed

        futures = [client.submit(function, *call, pure=False) for call in calls]
        order = {future.key: index for index, future in enumerate(futures)}
        results = [None] * len(calls)
        for future in as_completed(futures):
            results[order[future.key]] = future.result()
            done += 1
            say(f"  point {done}/{total} done")
        return results
    from concurrent.futures import ProcessPoolExecutor

    results = [None] * len(calls)
    with ProcessPoolExecutor(jobs) as pool:
        futures = {pool.submit(function, *call): index for index, call in enumerate(calls)}
        from concurrent.futures import as_completed

        for future in as_completed(futures):
            results[futures[future]] = future.result()
            done += 1
            say(f"  point {done}/{total} done")
    return results


def _bound(network, family, pattern: str, hotspot_fraction: float) -> float | None:
    """The model's throughput bound (flits per PE per cycle) under ``pattern``: the busiest
    channel's under deterministic routing; under adaptive routing (minimal paths that depend
    on the load), the mean channel load's over the escape's minimal paths, under uniform
    traffic only (None otherwise)."""
    terminals = family.terminal_count(network)
    deterministic = family.deterministic(network)
    if terminals > MAX_BOUND_TERMINALS or not (deterministic or pattern == "uniform"):
        return None

    def paths(source, destination):
        return [(router, port) for router, port, _ in family.hops(network, source,
                                                                   destination)]

    return throughput_bound(paths, terminals, pattern, balanced=not deterministic,
                            hotspot_fraction=hotspot_fraction)


def _summary(network, family, args, results: list[dict], bound) -> dict:
    ok = [r for r in results if "failure" not in r]
    saturated = [r for r in ok
                 if r["accepted_flits_per_pe_cycle"] < SATURATED * r["offered_flits_per_pe_cycle"]]
    first_saturated = min((r["offered_flits_per_pe_cycle"] for r in saturated), default=None)
    peak = max((r["accepted_flits_per_pe_cycle"] for r in ok), default=None)
    return {"network": network.name, "family": family.name, "parameters": network.to_dict(),
            "simulator": args.simulator, "pattern": args.pattern,
            "model_throughput_bound": bound, "peak_accepted": peak,
            "first_saturated_offered": first_saturated, "loads": by_load(results),
            "points": results}


def _write(out: Path, name: str, data: dict) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{name}-sweep"
    json_path, csv_path, plot_path = (stem.with_suffix(s) for s in (".json", ".csv", ".png"))
    json_path.write_text(json.dumps(data, indent=1))
    columns = ["offered_flits_per_pe_cycle", "seed", "accepted_flits_per_pe_cycle",
               "mean_latency", "mean_total_latency", "max_latency", "measured_packets",
               "overflowed", "unstable", "cycles_per_second", "failure"]
    with csv_path.open("w", newline="") as stream:
        writer = csv.DictWriter(stream, columns, extrasaction="ignore")
        writer.writeheader()
        for point in data["points"]:
            writer.writerow(point)
    _plot(data, plot_path)
    return [json_path, csv_path, plot_path]


def _plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    loads = data["loads"]
    seeds = max((row["seeds"] for row in loads), default=1)
    figure, axis = pyplot.subplots(figsize=(6, 4))
    latency = [row["latency_mean"] for row in loads]
    latency_spread = [row["latency_std"] for row in loads]
    axis.errorbar([row["offered"] for row in loads], latency, yerr=latency_spread,
                  fmt="o-", capsize=3, label="against offered load")
    axis.errorbar([row["accepted_mean"] for row in loads], latency,
                  xerr=[row["accepted_std"] for row in loads], yerr=latency_spread,
                  fmt="s--", capsize=3, label="against accepted load")
    knee = data.get("knee")
    if knee and knee["located"]:
        axis.axvspan(knee["unsaturated"], knee["saturated"], color="grey", alpha=0.3,
                     label=f"knee ({knee['unsaturated']:.3f}–{knee['saturated']:.3f})")
    elif data["first_saturated_offered"] is not None:
        axis.axvline(data["first_saturated_offered"], color="grey", linestyle=":",
                     label="first saturated point")
    if data["model_throughput_bound"] is not None:
        axis.axvline(data["model_throughput_bound"], color="red", linestyle="-.",
                     label="model bound")
    axis.set_xlabel("flits per PE per cycle")
    axis.set_ylabel("mean network latency (cycles)")
    axis.set_title(f"{data['network']}, {data['pattern']} ({data['simulator']}"
                   + (f"; mean ± sd over {seeds} seeds)" if seeds > 1 else ")"))
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


def _text(data: dict, files: list[Path]) -> str:
    frames = data.get("frames")
    lines = [f"{data['network']}: {data['pattern']} traffic, every packet checked end to end"
             if frames is None else
             f"{data['network']}: {data['pattern']} traffic of frames of {frames['sizes'][0]} "
             f"to {frames['sizes'][1]} bytes through the AXI4-Stream interfaces, every frame "
             "checked end to end (latency: a frame's, from the cycle it is made)",
             f"  {'offered':>8} {'seed':>5} {'accepted':>9} {'latency':>8} {'cycles/s':>9}"]
    for r in sorted(data["points"], key=lambda r: (r["rate"], r["seed"])):
        lines.append(f"  {r['offered_flits_per_pe_cycle']:>8.3f} {r['seed']:>5} "
                     f"{r['accepted_flits_per_pe_cycle']:>9.3f} {r['mean_latency']:>8.2f} "
                     f"{r['cycles_per_second']:>9.0f}")
    bound = data["model_throughput_bound"]
    lines.append(f"  saturation: first saturated offered load "
                 f"{data['first_saturated_offered']}, peak accepted {data['peak_accepted']:.3f}"
                 + (f"; model bound {bound:.3f} flits/PE/cycle" if bound is not None else ""))
    knee = data.get("knee")
    if knee:
        lines.append(f"  knee: between {knee['unsaturated']:.4f} (unsaturated) and "
                     f"{knee['saturated']:.4f} (saturated) flits/PE/cycle"
                     if knee["located"] else
                     "  knee: not bracketed by the loads (add loads on the other side)")
    counted = [r for r in data["points"] if "stalls" in r]
    if counted:
        lines.append("  why waiting packets were not allocated (share of waiting head-cycles; "
                     "switch: flit-cycles per head-cycle):")
        for r in sorted(counted, key=lambda r: (r["rate"], r["seed"])):
            lines.append(f"  {r['offered_flits_per_pe_cycle']:>8.3f} {r['seed']:>5} "
                         + stall_shares(r["stalls"]))
    for r in sorted((r for r in data["points"] if "link_loads" in r),
                    key=lambda r: (r["rate"], r["seed"])):
        lines.append(f"  {r['offered_flits_per_pe_cycle']:>8.3f} {r['seed']:>5} "
                     + link_load_line(r))
    lines += [f"  {path}" for path in files]
    return "\n".join(lines)


def load_maps(network, family, points: list[dict], template: Path) -> list[Path]:
    """``--link-loads``: each point's load map (and its histogram) beside ``template``, named
    ``<template stem>-<offered load>-s<seed><suffix>``; returns the maps written."""
    from .draw_cmd import load_map

    written = []
    for point in points:
        if "link_loads" not in point:
            continue
        offered = point["offered_flits_per_pe_cycle"]
        path = template.with_name(f"{template.stem}-{offered:.3f}-s{point['seed']}"
                                  f"{template.suffix}")
        load_map(network, family, point["link_loads"], path,
                 f"{network.name}: {point['pattern']} at {offered:.3f} flits/PE/cycle")
        written.append(path)
    return written


def link_load_line(point: dict) -> str:
    """One line of a point's link loads: the network channels' mean and largest load and
    the cycles their VCs were blocked."""
    channels = [load for load in point["link_loads"] if "link" in load]
    busy = [load["busy"] for load in channels] or [0]
    return (f"links: mean {sum(busy) / len(busy):.3f}, max {max(busy):.3f} flits/cycle, "
            f"blocked {sum(load['blocked'] for load in channels)} VC-cycles")


def stall_shares(stalls: dict) -> str:
    """One line of a point's stall counters, each reason as a share of the waiting
    head-cycles."""
    heads = stalls["heads"] or 1
    return " ".join(f"{reason} {stalls[reason] / heads:.2f}" for reason in stalls
                    if reason != "heads")
