"""The ``twinnet`` command line: parse, load, call, report.

Subcommands live in their own modules; each exposes ``register(subparsers)`` that adds its
parsers and sets ``func`` to a callable taking the parsed arguments and returning a
:class:`Report`. A user error (``ValueError``/``TypeError`` from a configuration) prints
``twinnet: <message>`` and exits with status 2, without a traceback; a run whose checks fail
(:class:`CheckFailed`) exits with status 1.
"""

import argparse
import importlib
import json
import sys
from dataclasses import dataclass, field

#: Modules under ``twinnet.gen`` that add ``twinnet analyze …`` subcommands.
ANALYSIS_MODULES = ("analyze_twin", "analyze_fat_tree", "analyze_king", "analyze_twist")
#: Modules under ``twinnet.gen`` that add top-level subcommands.
COMMAND_MODULES = ("gen_cmd", "sim_cmd", "demo")


@dataclass
class Report:
    """What a subcommand produced: ``text`` for people, ``data`` (JSON-serialisable) for tools."""

    text: str
    data: dict = field(default_factory=dict)


class UsageError(ValueError):
    """A command-line argument that cannot be parsed into a configuration value."""


class CheckFailed(Exception):
    """A run that went through but whose checks failed (e.g. a scoreboard error in a
    simulation): reported as ``twinnet: <message>`` with exit status 1."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the project's error form: one line ``twinnet: <command>: <message>``,
    exit status 2 (argparse's own form is a usage block plus the message)."""

    def error(self, message):
        command = self.prog.removeprefix("twinnet").strip()
        self.exit(2, f"twinnet: {command + ': ' if command else ''}{message} "
                     f"(see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="twinnet",
        description="Generate and verify interconnection-network routers and networks.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    analyze = commands.add_parser(
        "analyze", help="topology and routing analyses from the reference model",
        description="Topology and routing analyses computed by the pure-Python reference model.")
    analyses = analyze.add_subparsers(dest="analysis", metavar="ANALYSIS", required=True)
    for name in ANALYSIS_MODULES:
        importlib.import_module(f"twinnet.gen.{name}").register(analyses)
    for name in COMMAND_MODULES:
        importlib.import_module(f"twinnet.gen.{name}").register(commands)
    return parser


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def parse_int_list(text: str) -> tuple[int, ...]:
    """``"4,4,2"`` → ``(4, 4, 2)``; raises :class:`UsageError` naming the bad item."""
    try:
        return tuple(int(item) for item in text.split(","))
    except ValueError:
        raise UsageError(f"expected comma-separated integers, not {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        report = args.func(args)
    except (ValueError, TypeError) as error:
        print(f"twinnet: {error}", file=sys.stderr)
        return 2
    except CheckFailed as error:
        print(f"twinnet: {error}", file=sys.stderr)
        return 1
    if getattr(args, "json", False):
        print(json.dumps(report.data, indent=2))
    else:
        print(report.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
