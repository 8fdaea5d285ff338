"""What a subcommand returns (:class:`Report`) and the ``--json`` flag every reporting command
takes."""

import argparse
from dataclasses import dataclass, field


@dataclass
class Report:
    """What a subcommand produced: ``text`` for people, ``data`` (JSON-serialisable) for tools."""

    text: str
    data: dict = field(default_factory=dict)
    #: The exit status: non-zero for a run that went through and reports its checks failing
    #: (the report is printed all the same, then ``message`` on stderr).
    status: int = 0
    message: str = ""


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
