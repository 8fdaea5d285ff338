"""``twinnet analyze twist``: metrics and node symmetry of twisted tori (SPEC §4).

Diameter, average distance, per-dimension average distance (over all shortest paths of each
pair), their maximum and the imbalance; node symmetry by 004's Theorem and, for up to
:data:`BRUTE_FORCE_LIMIT` nodes, by checking that unit moves commute. ``--sweep YX`` instead
tries every value of one twist and reports the best per metric.
"""

from twinnet.errors import UsageError
from twinnet.model import checks
from twinnet.model.torus import dimension_name
from twinnet.model.twist import (
    METRICS,
    TwistedTorusTopology,
    TwistMetrics,
    best_twists,
    is_node_symmetric,
    metrics,
    non_commuting_moves,
    parse_dimension_pair,
    twist_sweep,
)

from . import args as parse
from .report import Report, add_json_flag

BRUTE_FORCE_LIMIT = 4096
#: Nodes of one analysis (metrics run a BFS from every node when the torus is not
#: node-symmetric) and of a sweep (which analyses d_K tori).
MAX_NODES, MAX_SWEEP_NODES = 4096, 4096
#: Dimensions: 004 studies 2-D and 3-D tori; the dimension names go X, Y, Z, T, then D4...
MAX_DIMENSIONS = 6


def register(analyses) -> None:
    parser = analyses.add_parser(
        "twist", help="distance metrics, best twist and node symmetry of twisted tori",
        description="Analyse an N-dimensional torus with peripheral twists t_JK.")
    parser.add_argument("--radices", type=parse.integer_list, default=(8, 4),
                        help=f"nodes per dimension, X first, each >= 2 (default 8,4; at most "
                             f"{MAX_NODES} nodes)")
    parser.add_argument("--twist", action="append", default=[], metavar="JK=T",
                        help="a twist such as YX=4 (dimension Y's peripheral links shift X by "
                             "4); repeatable")
    parser.add_argument("--sweep", metavar="JK", type=parse.name,
                        help="try every value of this single twist (e.g. YX) and report the "
                             "best per metric")
    add_json_flag(parser)
    parser.set_defaults(func=twist)


def parse_twists(texts: list[str], radices: tuple[int, ...]) -> dict[tuple[int, int], int]:
    """``["YX=4", "ZX=-1"]`` → ``{(1, 0): 4, (2, 0): d_X - 1}``: each twist ``t_JK`` reduced
    mod ``d_K`` (004 §II: only the shift mod d_K matters); raises :class:`UsageError` naming
    ``--twist`` for a malformed, repeated or contradictory twist."""
    twists, given = {}, {}
    for text in texts:
        name, sep, value = text.partition("=")
        try:
            amount = parse.integer(value.strip())
        except Exception:  # argparse.ArgumentTypeError: reported below with the flag
            amount = None
        if not sep or amount is None:
            raise UsageError(f"--twist {text!r}: a twist looks like YX=4 (dimension Y's "
                             "peripheral links shift X by 4)")
        try:
            pair = parse_dimension_pair(name, len(radices))
        except ValueError as error:
            raise UsageError(f"--twist {text}: {error}") from None
        if pair[0] == pair[1]:
            raise UsageError(f"--twist {text}: a twist joins two different dimensions")
        if pair in twists:
            raise UsageError(f"--twist {text}: t_{name.strip().upper()} is already given as "
                             f"{given[pair]}; give each twist once")
        twists[pair], given[pair] = amount % radices[pair[1]], text
    return twists


def _metrics_data(m: TwistMetrics) -> dict:
    return dict(diameter=m.diameter, average_distance=float(m.average_distance),
                dimension_averages=[float(a) for a in m.dimension_averages],
                max_dimension_distance=float(m.max_dimension_distance),
                imbalance=float(m.imbalance))


def twist(args) -> Report:
    radices = checks.check_int_tuple("--radices", args.radices, minimum=2)
    if not 2 <= len(radices) <= MAX_DIMENSIONS:
        raise UsageError(f"--radices {parse.describe_value(radices)}: give 2 to "
                         f"{MAX_DIMENSIONS} dimensions, not {len(radices)}")
    limit = MAX_SWEEP_NODES if args.sweep else MAX_NODES
    nodes = 1
    for radix in radices:
        nodes *= radix
    if nodes > limit:
        raise UsageError(f"--radices {parse.describe_value(radices)}: {nodes:,} nodes; at most "
                         f"{limit:,} (distance metrics search from every node)")
    if args.sweep:
        if args.twist:
            raise UsageError(f"--sweep {args.sweep} tries every value of one twist; it cannot "
                             f"be combined with --twist {args.twist[0]}")
        return _sweep(radices, args.sweep)
    config = TwistedTorusTopology(radices, parse_twists(args.twist, radices))
    data = dict(radices=list(config.radices), label=config.label(),
                twists={f"{dimension_name(j)}{dimension_name(k)}": t
                        for j, k, t in config.twists},
                **_metrics_data(metrics(config)),
                node_symmetric_by_theorem=is_node_symmetric(config))
    if config.node_count <= BRUTE_FORCE_LIMIT:
        data["moves_commute"] = non_commuting_moves(config) is None
    return Report(_text(data), data)


def _text(data: dict) -> str:
    averages = ", ".join(f"{dimension_name(i)} {a:.4f}"
                         for i, a in enumerate(data["dimension_averages"]))
    lines = [f"{data['label']}: diameter {data['diameter']}, average distance "
             f"{data['average_distance']:.4f} (self included)",
             f"per-dimension average distance: {averages}; max "
             f"{data['max_dimension_distance']:.4f}, imbalance {data['imbalance']:.4f}",
             "node-symmetric by the Theorem: " + ("yes" if data["node_symmetric_by_theorem"]
                                                 else "no")]
    if "moves_commute" in data:
        lines.append("unit moves commute at every node (brute force): "
                     + ("yes" if data["moves_commute"] else "no"))
    return "\n".join(lines)


def _sweep(radices, pair: str) -> Report:
    try:
        j, k = parse_dimension_pair(pair, len(radices))
    except ValueError as error:
        raise UsageError(f"--sweep {pair}: {error}") from None
    if j == k:
        raise UsageError(f"--sweep {pair}: a twist joins two different dimensions")
    sweep = twist_sweep(radices, j, k)
    name = f"t_{dimension_name(j)}{dimension_name(k)}"
    best = {m: best_twists(sweep, m) for m in METRICS}
    data = dict(radices=list(radices), twist=name,
                rows=[dict(twist=t, **_metrics_data(m)) for t, m in sweep.items()],
                best={m: dict(value=float(v), twists=ts) for m, (v, ts) in best.items()})
    lines = [f"{'x'.join(map(str, radices))}, every {name}:",
             f"{name:>6} {'diameter':>8} {'avg':>8} {'max k_i':>8} {'imbalance':>9}"]
    for row in data["rows"]:
        lines.append(f"{row['twist']:>6} {row['diameter']:>8} {row['average_distance']:>8.4f} "
                     f"{row['max_dimension_distance']:>8.4f} {row['imbalance']:>9.4f}")
    for metric, entry in data["best"].items():
        lines.append(f"best {metric}: {entry['value']:.4f} at {name} = "
                     + ", ".join(map(str, entry["twists"])))
    return Report("\n".join(lines), data)
