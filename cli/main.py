"""The ``twinnet`` command line: parse, load, call, report.

Subcommands live in their own modules; each exposes ``register(subparsers)`` that adds its
parsers and sets ``func`` to a callable taking the parsed arguments and returning a
:class:`Report`. A user error (``ValueError``/``TypeError`` from a configuration) prints
``twinnet: <message>`` and exits with status 2, without a traceback; a run whose checks fail
(:class:`CheckFailed`) exits with status 1. A run whose report is worth printing whatever its
outcome (``twinnet prove``) returns it with its own exit status and a closing message.
"""

import argparse
import functools
import importlib
import json
import os
import re
import shutil
import sys

from twinnet.errors import CheckFailed
from twinnet.families import families, family_words
from twinnet.sim_tb import runner

from .parser import ArgumentParser

#: Each top-level command and the module of this package that adds it (its ``register``).
COMMANDS = {"gen": "gen_cmd", "sim": "sim_cmd", "sweep": "sweep_cmd", "fpga": "fpga_cmd",
            "board": "board_cmd", "demo": "demo", "prove": "prove_cmd", "draw": "draw_cmd",
            "trace": "trace_cmd"}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser with ``command``'s subcommand alone (``analyze`` or a key of
    :data:`COMMANDS`), or with every command (None: for ``twinnet --help`` and a command
    word that is none of them). Only the command's module is imported: a command starts
    without the others' imports (Amaranth, the proofs, the traffic program). Built once per
    command and terminal width in a process (the help is wrapped to the width), and shared:
    a parser keeps nothing of a parse."""
    return _parser(command, shutil.get_terminal_size().columns)


@functools.cache
def _parser(command: str | None, columns: int) -> argparse.ArgumentParser:
    """:func:`build_parser` for a terminal ``columns`` wide."""
    parser = ArgumentParser(
        prog="twinnet",
        description="Generate and verify interconnection-network routers and networks.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    if command in (None, "analyze"):
        analyze = commands.add_parser(
            "analyze", help="topology and routing analyses from the reference model",
            description="Topology and routing analyses computed by the pure-Python reference "
                        "model.")
        analyses = analyze.add_subparsers(dest="analysis", metavar="ANALYSIS", required=True)
        for family in families().values():  # (each family's own, Family.analyses)
            for module in family.analyses:
                importlib.import_module(module).register(analyses)
    for name, module in COMMANDS.items():
        if command in (None, name):
            importlib.import_module(f"twinnet.cli.{module}").register(commands)
    return parser


#: A value that starts with a dash followed by a digit (``-1``, ``-1,0,0:0``).
_NEGATIVE = re.compile(r"-([0-9.]|inf|nan)", re.IGNORECASE)


def join_negative_values(argv: list[str]) -> list[str]:
    """``["--src", "-1,0,0:0"]`` → ``["--src=-1,0,0:0"]``.

    argparse reads a word that starts with a dash as a flag unless it is a plain negative
    number, so ``--src -1,0,0:0`` would be "expected one argument". No twinnet flag starts with
    a dash and a digit, so such a word after a long flag is that flag's value (and then gets
    the flag's own range check).
    """
    joined, index = [], 0
    while index < len(argv):
        word = argv[index]
        if (word.startswith("--") and "=" not in word and index + 1 < len(argv)
                and _NEGATIVE.match(argv[index + 1])):
            joined.append(f"{word}={argv[index + 1]}")
            index += 2
        else:
            joined.append(word)
            index += 1
    return joined


def _say(line: str) -> None:
    print(f"twinnet: {line}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    argv = join_negative_values(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and (argv[0] in COMMANDS or argv[0] == "analyze") else None
    try:
        parser = build_parser(command)
    except (ValueError, TypeError) as error:  # a family's declarations (e.g. a plug-in's)
        _say(str(error))
        return 2
    return _run(parser, argv)


def _run(parser: argparse.ArgumentParser, argv: list[str]) -> int:
    args, extras = parser.parse_known_args(argv)
    if extras:
        # An unknown flag's value may have been taken for the optional FAMILY word: show it
        # with the flag it belongs to.
        stray = getattr(args, "family", None)
        if stray is not None and stray not in family_words():
            extras.append(stray)
        command = " ".join(filter(None, [args.command, getattr(args, "analysis", None)]))
        _say(f"{command}: unrecognized arguments: {' '.join(extras)} "
             f"(see 'twinnet {command} --help')")
        return 2
    try:
        runner.quick_build()  # the environment's switch, checked before anything is built
        report = args.func(args)
    except (ValueError, TypeError) as error:
        _say(" ".join(str(error).split("\n")))
        return 2
    except CheckFailed as error:
        _say(str(error))
        return 1
    except KeyboardInterrupt:
        _say("interrupted; nothing was left half-written")
        return 130
    text = json.dumps(report.data, indent=2) if getattr(args, "json", False) else report.text
    try:
        if text:
            print(text)
            sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do. Point stdout
        # at /dev/null so that the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if report.message:
        _say(report.message)
    return report.status


if __name__ == "__main__":
    sys.exit(main())
