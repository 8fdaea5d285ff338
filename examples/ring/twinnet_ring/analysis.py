"""``twinnet analyze ring``: a ring's diameter, average distance and deadlock verdict."""

from twinnet.cli.gen_cmd import add_flag
from twinnet.cli.report import Report, add_json_flag
from twinnet.families import family


def register(analyses) -> None:
    parser = analyses.add_parser("ring", help="distances and deadlock check of a ring")
    for each in family("ring").configuration.parameters():
        if each.name in ("nodes", "escape"):
            add_flag(parser, each)
    add_json_flag(parser)
    parser.set_defaults(func=run)


def run(args) -> Report:
    ring = family("ring")
    values = {key: getattr(args, key) for key in ("nodes", "escape") if getattr(args, key)}
    config = ring.network(values, {key: f"--{key}" for key in values})
    nodes = range(config.nodes)
    hops = [len(config.path(a, b)) for a in nodes for b in nodes if a != b]
    data = {"nodes": config.nodes, "diameter": max(hops), "average_distance":
            sum(hops) / len(hops), "deadlock_free": ring.deadlock(config)["deadlock_free"]}
    return Report(f"{config.name}: " + ", ".join(f"{k} {v}" for k, v in data.items()), data)
