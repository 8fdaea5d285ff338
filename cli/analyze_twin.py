"""``twinnet analyze`` subcommands for twin tori.

- ``twin-links``: internal-link transit paths per node (SPEC §1.7), per configuration;
- ``twin-distance``: PE-level diameter and average distance against the equivalent 2D torus;
- ``deadlock``: the channel-dependency check of a twin torus in a deadlock mode;
- ``twin-path``: the hops of one PE-to-PE packet.
"""

import sys
import time

from twinnet.errors import UsageError
from twinnet.model.twin import NAMED_CONFIGURATIONS, TwinTorusTopology, parse_pe
from twinnet.model.twin_analysis import (
    deadlock_check,
    equivalent_2d_torus,
    format_channel,
    internal_transit_counts,
    pe_distance_summary,
    torus_distance_summary,
)
from twinnet.model.twin_network import twin_torus_from_dict
from twinnet.model.twin_routing import path

from . import args as parse
from .report import Report, add_json_flag

#: Nodes each analysis accepts, so that anything accepted finishes within about a minute on
#: one core (measured: transit counts 0.2 s and distances 1 s at 4,096 nodes, growing
#: linearly; the channel-dependency check of 3DT 16x16x8, 2,048 nodes, in every named
#: configuration: 27 s in mode vc, 8 s in bubble, 3 s in none).
MAX_NODES = {"twin-links": 65_536, "twin-distance": 16_384, "deadlock": 2_048,
             "twin-path": 1_000_000}


def register(analyses) -> None:
    links = analyses.add_parser(
        "twin-links", help="internal-link transit paths per node, per configuration",
        description="Count the node-level DOR paths through a node that cross its internal "
                    "link (one path per ordered pair of distinct nodes, paths starting or "
                    "ending at the node excluded). " + _limit("twin-links"))
    _add_network_args(links, allow_all=True, mode=False)
    links.set_defaults(func=twin_links)

    distance = analyses.add_parser(
        "twin-distance", help="PE-level diameter and average distance vs the 2D torus",
        description="PE-level diameter and average distance (links crossed, ordered pairs of "
                    "distinct PEs) of the twin torus and of the 2D torus with as many PEs. "
                    + _limit("twin-distance"))
    _add_network_args(distance, allow_all=True, mode=False)
    distance.set_defaults(func=twin_distance)

    deadlock = analyses.add_parser(
        "deadlock", help="channel-dependency check of a twin torus",
        description="Build the channel-dependency graph of twin DOR over (link, VC) channels "
                    "and look for a cycle. Modes none and vc: the whole graph must be "
                    "acyclic; bubble: the graph less its in-ring dependencies. "
                    + _limit("deadlock"))
    _add_network_args(deadlock, allow_all=True, mode=True)
    deadlock.set_defaults(func=twin_deadlock)

    route = analyses.add_parser(
        "twin-path", help="the hops of one packet through a twin torus",
        description="Print every hop (card, input port, output port, VC, bubble) of a packet. "
                    + _limit("twin-path"))
    _add_network_args(route, allow_all=False, mode=True)
    route.add_argument("--src", required=True, type=parse.name,
                       help="source PE as x,y,z:pe (e.g. 0,0,0:0)")
    route.add_argument("--dst", required=True, type=parse.name,
                       help="destination PE as x,y,z:pe")
    route.set_defaults(func=twin_path)


def _limit(analysis: str) -> str:
    return (f"At most {MAX_NODES[analysis]:,} nodes (the run time grows with the node count). "
            "Defaults: n = 3, k = 4, configuration D (C_Best for n != 3), mode bubble.")


def _add_network_args(parser, *, allow_all: bool, mode: bool) -> None:
    parser.add_argument("--n", type=parse.integer, help="dimensions (default 3)")
    parser.add_argument("--k", type=parse.integer, help="radix of every dimension (default 4)")
    parser.add_argument("--radix", type=parse.integer_list,
                        help="radix per dimension, e.g. 4,4,2 (instead of --n and --k)")
    parser.add_argument(
        "--config", type=parse.name,
        help="port configuration: A–J (n=3), C_Best, a card-0 port list such as X+,Y+,X-"
             + (", or 'all' (A–J)" if allow_all else "") + " (default D for n = 3, C_Best "
             "otherwise)")
    if mode:
        parser.add_argument("--mode", choices=("none", "vc", "bubble"),
                            help="deadlock mode (default bubble)")
    add_json_flag(parser)


def _configs(args, analysis: str) -> list[TwinTorusTopology]:
    """The twin tori the flags describe (all of A–J for ``--config all``)."""
    values = {key: getattr(args, dest) for dest, key in
              (("n", "n"), ("k", "k"), ("radix", "radices"), ("config", "configuration"),
               ("mode", "mode")) if getattr(args, dest, None) is not None}
    labels = {"n": "--n", "k": "--k", "radices": "--radix", "configuration": "--config",
              "mode": "--mode"}
    why = f" by 'analyze {analysis}' (its run time grows with the node count)"
    if values.get("configuration") != "all" or analysis == "twin-path":
        return [twin_torus_from_dict(values, labels, max_nodes=MAX_NODES[analysis], why=why)]
    size = twin_torus_from_dict({**values, "configuration": "C_Best"}, labels,
                                max_nodes=MAX_NODES[analysis], why=why)
    if size.n != 3:
        raise UsageError(f"--config all means A–J, the 3DT configurations; they need n = 3, "
                         f"not n = {size.n}")
    configs = []
    for name in NAMED_CONFIGURATIONS:
        configs.append(twin_torus_from_dict({**values, "configuration": name}, labels,
                                            max_nodes=MAX_NODES[analysis], why=why))
    return configs


def _size(config: TwinTorusTopology) -> str:
    return "x".join(map(str, config.radices))


def twin_links(args) -> Report:
    rows, lines = [], []
    for config in _configs(args, "twin-links"):
        counts = internal_transit_counts(config)
        rows.append(dict(configuration=config.configuration.label,
                         card0=[str(p) for p in config.configuration.ports_of(0)],
                         paths=counts["total"], type1=counts["type1"], type2=counts["type2"]))
        lines.append(f"  {config.configuration.label:>8}  {counts['total']:>10}  "
                     f"{counts['type1']:>8}  {counts['type2']:>8}")
    size = _size(config)
    header = [f"internal-link transit paths per node, twin torus {size}",
              f"  {'config':>8}  {'paths':>10}  {'type 1':>8}  {'type 2':>8}"]
    return Report("\n".join(header + lines), dict(radices=list(config.radices), rows=rows))


def twin_distance(args) -> Report:
    rows, lines = [], []
    for config in _configs(args, "twin-distance"):
        twin = pe_distance_summary(config)
        rows.append(dict(configuration=config.configuration.label, diameter=twin.diameter,
                         average=twin.average))
        lines.append(f"  {config.configuration.label:>8}  diameter {twin.diameter:>3}  "
                     f"average {twin.average:.4f}")
    flat_cube = equivalent_2d_torus(config.pe_count)
    flat = torus_distance_summary(flat_cube)
    size = _size(config)
    lines.append(f"  2D torus {_size(flat_cube)}: diameter {flat.diameter}, "
                 f"average {flat.average:.4f}")
    text = "\n".join([f"PE-level distances, twin torus {size} ({config.pe_count} PEs)"] + lines)
    data = dict(radices=list(config.radices), pe_count=config.pe_count, twin=rows,
                torus_2d=dict(radices=list(flat_cube.radices), diameter=flat.diameter,
                              average=flat.average))
    return Report(text, data)


def twin_deadlock(args) -> Report:
    configs = _configs(args, "deadlock")
    rows, lines = [], []
    for index, config in enumerate(configs, 1):
        started = time.perf_counter()
        report = deadlock_check(config)
        seconds = time.perf_counter() - started
        if len(configs) > 1:
            print(f"[{index}/{len(configs)}] {config.name}: {seconds:.1f} s", file=sys.stderr)
        cycle = [format_channel(c) for c in report.cycle] if report.cycle else None
        rows.append(dict(configuration=config.configuration.label, mode=config.mode,
                         rule=report.rule, channels=report.channel_count,
                         dependencies=report.dependency_count,
                         deadlock_free=report.deadlock_free, cycle=cycle))
        verdict = "deadlock-free" if report.deadlock_free else \
            f"CYCLE of {len(cycle)} channels: " + " -> ".join(cycle) + f" -> {cycle[0]}"
        lines.append(f"{config.name}: {report.channel_count} channels, "
                     f"{report.dependency_count} dependencies; checked {report.rule}: {verdict}")
    return Report("\n".join(lines), dict(rows=rows))


def twin_path(args) -> Report:
    (config,) = _configs(args, "twin-path")
    source = _pe(config, args.src, "--src")
    destination = _pe(config, args.dst, "--dst")
    hops = path(config, source, destination)
    text = "\n".join([f"{config.name}: {source} -> {destination}, {len(hops)} hops"] +
                     [f"  {hop}" for hop in hops])
    data = dict(network=config.name, source=str(source), destination=str(destination),
                hops=[dict(card=str(h.card), in_port=str(h.in_port), out_port=str(h.out_port),
                           vc=h.vc, bubble=h.bubble) for h in hops])
    return Report(text, data)


def _pe(config: TwinTorusTopology, text: str, flag: str):
    """The PE ``text`` (``x,y,z:pe``) names in ``config``; errors name ``flag``."""
    try:
        return config.pe(*parse_pe(text))
    except (ValueError, TypeError) as error:
        raise UsageError(f"{flag} {text}: {error}") from None
