"""``twinnet demo``: the README's main job."""


def register(commands) -> None:
    parser = commands.add_parser("demo", help="run the main job on the default network")
    parser.set_defaults(func=run)


def run(args):
    from .cli import Report
    return Report("twinnet demo: the default network's analysis is not written yet")
