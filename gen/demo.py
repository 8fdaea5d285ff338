"""``twinnet demo``: the README's main job.

Until the twin-torus RTL exists this prints the reference model's analysis of the default 3DT
instance: k = 4, configuration D.
"""

import argparse

from . import analyze_twin
from .cli import Report


def register(commands) -> None:
    parser = commands.add_parser("demo", help="run the main job on the default network",
                                 description="Analyse the default 3DT network (k=4, D).")
    parser.set_defaults(func=run)


def run(args) -> Report:
    network = dict(n=3, k=4, radix=None, json=False)
    sections = [
        analyze_twin.twin_links(argparse.Namespace(**network, config="all")),
        analyze_twin.twin_distance(argparse.Namespace(**network, config="D")),
    ]
    for mode in ("none", "vc", "bubble"):
        sections.append(analyze_twin.twin_deadlock(
            argparse.Namespace(**network, config="D", mode=mode)))
    sections[-3].text = _shorten_cycle(sections[-3].text)
    return Report("\n\n".join(s.text for s in sections),
                  dict(sections=[s.data for s in sections]))


def _shorten_cycle(text: str) -> str:
    head, _, cycle = text.partition("CYCLE")
    return head + "CYCLE" + (cycle if len(cycle) < 200 else cycle[:200] + " …")
