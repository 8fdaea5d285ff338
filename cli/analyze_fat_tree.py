"""``twinnet analyze fat-tree``: a k-ary n-tree of twin switches under DESTRO (SPEC §2).

Per stage: forward / turnaround / backward paths per switch (001 Table 1), internal-link
crossings per twin switch, link loads per level and direction, and the channel-dependency check
with and without the twin switches' internal links.
"""

from twinnet.errors import UsageError
from twinnet.model import checks
from twinnet.model.fat_tree import (
    MAX_FAT_TREE_TERMINALS,
    FatTreeNetworkConfig,
    TwinFatTree,
    dependency_graph,
    internal_crossings,
    link_loads,
    load_ranges,
    read_split,
    switch_path_counts,
)

from . import args as parse
from .gen_cmd import add_flag
from .report import Report, add_json_flag

#: Terminals: the generator's limit (every ordered pair is routed several times over: 18 s at
#: 256 terminals for k = 4, n = 4; 44 s for k = 2, n = 8).
MAX_TERMINALS = MAX_FAT_TREE_TERMINALS


def register(analyses) -> None:
    parser = analyses.add_parser(
        "fat-tree", help="path counts, link loads and twin-switch crossings of a k-ary n-tree",
        description="Route every ordered pair of distinct terminals of a k-ary n-tree (DESTRO, "
                    "or random up ports) and report, per stage, the paths through each switch, "
                    "the crossings of each twin switch's internal link and the load of each "
                    "link, then check the channel-dependency graph for cycles.")
    # The tree's own parameters, as 'twinnet gen fat-tree' declares them.
    for each in FatTreeNetworkConfig.parameters():
        if each.name in ("k", "n", "split", "internal_ports"):
            add_flag(parser, each)
    parser.add_argument("--routing", default="destro", choices=("destro", "random"),
                        help="up-port choice (default destro)")
    parser.add_argument("--seed", type=parse.integer,
                        help="seed for --routing random (default 0; only with --routing random)")
    add_json_flag(parser)
    parser.set_defaults(func=fat_tree)


def build_twin(args) -> TwinFatTree:
    """The twin fat tree the arguments describe, by the rules of ``twinnet gen fat-tree``
    (:func:`twinnet.model.fat_tree.FatTreeNetworkConfig`); raises ``UsageError``."""
    split = None if args.split is None else read_split("--split", args.split)
    if split == "plain":
        raise UsageError("--split plain: this analysis is of twin switches; give optimal, "
                         "paired, down-alpha or α's ports")
    values = {"k": args.k, "n": args.n, "split": split, "internal_ports": args.internal_ports}
    flags = {"k": "--k", "n": "--n", "split": "--split", "internal_ports": "--internal-ports"}
    try:
        return FatTreeNetworkConfig.from_dict(values, flags).twin
    except (TypeError, ValueError) as error:
        raise UsageError(str(error)) from None


def _span(values) -> list[int]:
    values = list(values)
    return [min(values), max(values)]


def _show(span: list[int]) -> str:
    return str(span[0]) if span[0] == span[1] else f"{span[0]}–{span[1]}"


def fat_tree(args) -> Report:
    twin = build_twin(args)
    tree = twin.tree
    if args.seed is not None and args.routing != "random":
        raise UsageError(f"--seed {args.seed} only applies with --routing random (DESTRO is "
                         "deterministic)")
    args.seed = checks.check_int("--seed", 0 if args.seed is None else args.seed, minimum=0,
                                 maximum=2**32 - 1)
    paths = switch_path_counts(tree, args.routing, args.seed)
    crossings = internal_crossings(twin, args.routing, args.seed)
    stages = []
    for stage in range(tree.n):
        switches = list(tree.switches(stage))
        stages.append(dict(
            stage=stage, switches=len(switches), split=sorted(twin.splits[stage].alpha),
            forward=_span(paths[s].forward for s in switches),
            turnaround=_span(paths[s].turnaround for s in switches),
            backward=_span(paths[s].backward for s in switches),
            internal_crossings=_span(crossings[s].total for s in switches)))
    links = [dict(level=level, direction=direction, min=low, max=high)
             for (level, direction), (low, high) in
             load_ranges(link_loads(tree, args.routing, args.seed)).items()]
    cycles = {name: dependency_graph(tree, args.routing, args.seed, twin=t).find_cycle()
              for name, t in (("links", None), ("links+internal", twin))}
    data = dict(k=tree.k, n=tree.n, terminals=tree.terminal_count, routing=args.routing,
                seed=args.seed if args.routing == "random" else None,
                internal_port_count=twin.splits[0].internal_port_count, stages=stages,
                links=links,
                deadlock={name: None if c is None else [str(x) for x in c]
                          for name, c in cycles.items()})
    return Report(_text(data), data)


def _text(data: dict) -> str:
    lines = [f"{data['k']}-ary {data['n']}-tree: {data['terminals']} terminals, routing "
             f"{data['routing']}" + (f" (seed {data['seed']})" if data["seed"] is not None
                                     else ""),
             f"{'stage':>5} {'switches':>8} {'forward':>9} {'turnaround':>10} "
             f"{'backward':>9} {'crossings':>9}  α ports"]
    for s in data["stages"]:
        lines.append(f"{s['stage']:>5} {s['switches']:>8} {_show(s['forward']):>9} "
                     f"{_show(s['turnaround']):>10} {_show(s['backward']):>9} "
                     f"{_show(s['internal_crossings']):>9}  "
                     f"{','.join(map(str, s['split']))}")
    lines.append("paths per link (level, direction):")
    for link in data["links"]:
        balanced = "balanced" if link["min"] == link["max"] else "unbalanced"
        lines.append(f"  level {link['level']} {link['direction']:<4} "
                     f"{_show([link['min'], link['max']]):>9}  {balanced}")
    for name, cycle in data["deadlock"].items():
        verdict = "acyclic" if cycle is None else "CYCLE " + " → ".join(cycle)
        lines.append(f"channel dependencies ({name}): {verdict}")
    return "\n".join(lines)
