"""``twinnet analyze king``: meshes and tori with diagonals (002 §2–3).

Diameter and average distance by BFS, channels across the middle vertical cut; for king
networks the broadcast check (every node reached once from every source) and, with
``--deadlock``, the escape network's channel-dependency check under the plain, dateline and
bubble schemes; with ``--src``/``--dst`` the routing record, tied diagonal-torus images, the
hop-by-hop and 2S vectors, the escape port and the number of minimal paths of one pair.
"""

from twinnet.errors import UsageError
from twinnet.model import checks
from twinnet.model.king import (
    ESCAPE_SCHEMES,
    KINDS,
    PORTS,
    KingTopology,
    bisection_channel_count,
    broadcast_deliveries,
    diagonal_torus_candidates,
    distance,
    distance_summary,
    escape_dependency_graph,
    escape_port,
    graded_vector,
    minimal_path_counts,
    profitable_vector,
    routing_record,
)

from . import args as parse
from .report import Report, add_json_flag

#: Largest side: distances run a BFS from every node (3 s at side 32, 16x that at 64); the
#: escape-network check of ``--deadlock`` routes every pair of nodes (57 s at side 16).
MAX_SIDE, MAX_DEADLOCK_SIDE = 64, 16


def register(analyses) -> None:
    parser = analyses.add_parser(
        "king", help="distances, cut channels, routing and broadcast of M/DM/KM/T/DT/KT",
        description="Analyse a square mesh or torus with diagonals: M, DM, KM (meshes), "
                    "T, DT, KT (tori).")
    parser.add_argument("--kind", default="KT", type=str.upper, choices=KINDS,
                        help=f"one of {', '.join(KINDS)} (default KT)")
    parser.add_argument("--side", type=parse.integer, default=8,
                        help=f"nodes per side, 2 to {MAX_SIDE} ({MAX_DEADLOCK_SIDE} with "
                             f"--deadlock; default 8)")
    parser.add_argument("--src", type=parse.integer_list,
                        help="source node x,y for a routing query")
    parser.add_argument("--dst", type=parse.integer_list,
                        help="destination node x,y for a routing query")
    parser.add_argument("--deadlock", action="store_true",
                        help="check the escape network (king kinds; all pairs, slower)")
    add_json_flag(parser)
    parser.set_defaults(func=king)


def _node(config: KingTopology, node: tuple[int, ...], flag: str):
    shown = parse.describe_value(node)
    if len(node) != 2:
        raise UsageError(f"{flag} {shown}: a node is x,y (two numbers), not {len(node)}")
    try:
        return config.check_node(node, "node")
    except ValueError as error:
        raise UsageError(f"{flag} {shown}: {error}") from None


def king(args) -> Report:
    limit = MAX_DEADLOCK_SIDE if args.deadlock else MAX_SIDE
    side = checks.check_int("--side", args.side, minimum=2, maximum=limit)
    config = KingTopology(args.kind, side)
    if args.deadlock and not config.is_king:
        raise UsageError(f"--deadlock: --kind must be KM or KT (only the king kinds have an "
                         f"escape network to check), not {args.kind}")
    if (args.src is None) != (args.dst is None):
        given, missing = ("--src", "--dst") if args.src is not None else ("--dst", "--src")
        raise UsageError(f"{given} {parse.describe_value(args.src or args.dst)} needs "
                         f"{missing}: a routing query takes both")
    summary = distance_summary(config)
    data = dict(kind=config.kind, side=config.side, nodes=config.node_count,
                diameter=summary.diameter, average_distance=summary.average_distance,
                cut_channels=bisection_channel_count(config))
    if config.is_king:
        data["broadcast_exactly_once"] = all(
            _reaches_once(config, source) for source in config.nodes())
    if args.deadlock:
        data["escape_deadlock"] = {}
        for scheme in ESCAPE_SCHEMES:
            cycle = escape_dependency_graph(config, scheme).find_cycle()
            data["escape_deadlock"][scheme] = None if cycle is None else [str(c) for c in cycle]
    if args.src is not None:
        data["route"] = _route(config, _node(config, args.src, "--src"),
                               _node(config, args.dst, "--dst"))
    return Report(_text(data), data)


def _reaches_once(config: KingTopology, source) -> bool:
    received = broadcast_deliveries(config, source)
    return all(received[n] == (0 if n == source else 1) for n in config.nodes())


def _route(config: KingTopology, src, dst) -> dict:
    route = dict(src=list(src), dst=list(dst), distance=distance(config, src, dst),
                 minimal_paths=minimal_path_counts(config, src)[dst],
                 record=list(routing_record(config, src, dst)),
                 profitable=dict(zip(PORTS, profitable_vector(config, src, dst))))
    if config.kind == "DT":
        route["tied_records"] = [list(r) for r in diagonal_torus_candidates(config.side, src,
                                                                            dst)]
    if config.is_king:
        route["grades"] = dict(zip(PORTS, graded_vector(config, src, dst)))
        route["escape_port"] = escape_port(config, src, dst)
    return route


def _text(data: dict) -> str:
    lines = [f"{data['kind']}{data['side']}: {data['nodes']} nodes, diameter {data['diameter']}, "
             f"average distance {data['average_distance']:.3f} (self included), "
             f"{data['cut_channels']} channels across the middle cut"]
    if "broadcast_exactly_once" in data:
        verdict = "yes" if data["broadcast_exactly_once"] else "NO"
        lines.append(f"broadcast reaches every node exactly once from every source: {verdict}")
    for scheme, cycle in data.get("escape_deadlock", {}).items():
        verdict = "acyclic" if cycle is None else f"CYCLE of {len(cycle)}: " + " → ".join(cycle)
        lines.append(f"escape network ({scheme}): {verdict}")
    if "route" in data:
        r = data["route"]
        lines.append(f"{tuple(r['src'])} → {tuple(r['dst'])}: distance {r['distance']}, "
                     f"{r['minimal_paths']} minimal paths, record {tuple(r['record'])}")
        if "tied_records" in r:
            lines.append("  tied records: " + ", ".join(str(tuple(t)) for t in
                                                       r["tied_records"]))
        vector = r.get("grades", r["profitable"])
        label = "2S grades" if "grades" in r else "profitable"
        lines.append(f"  {label}: " + " ".join(f"{p}={v}" for p, v in vector.items()))
        if "escape_port" in r:
            lines.append(f"  escape port: {r['escape_port']}")
    return "\n".join(lines)
