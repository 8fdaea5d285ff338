"""Command-line value parsing shared by every ``twinnet`` subcommand.

Each function here is an argparse ``type=``: it turns the text of one flag into a value or
raises ``argparse.ArgumentTypeError`` with what was wrong and what is allowed, which the
parser reports as one line naming the flag (``twinnet: gen: argument --k: ...``). Ranges
(limits) are checked where the value is used, because the same keys also come from TOML files
and presets; what is checked here is the form of the text alone:

- integers are ASCII digits with an optional sign (Python's ``int`` would also take ``٣``);
- numbers are finite decimal numbers;
- lists are comma-separated integers with no empty item;
- names and paths are not empty.
"""

import argparse
import math
import re
from pathlib import Path

_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")

#: Digits of the largest integer a flag takes as text (a longer one is rejected before
#: Python converts it: ``int()`` of a very long string is slow and larger than any limit).
MAX_DIGITS = 20


def integer(text: str) -> int:
    """An integer written in ASCII digits, e.g. ``4`` or ``-1``."""
    if not _INTEGER.fullmatch(text) or len(text.lstrip("+-")) > MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"expected an integer (ASCII digits, at most "
                                         f"{MAX_DIGITS}), not {text!r}")
    return int(text)


class Number(float):
    """A number from the command line that remembers how it was written (``text``), so that
    a message can quote ``1e-400`` rather than the ``0.0`` it rounds to."""

    text: str

    def __new__(cls, text: str):
        value = super().__new__(cls, text)
        value.text = text
        return value

    def __str__(self) -> str:
        return self.text


def number(text: str) -> float:
    """A finite decimal number, e.g. ``0.02`` or ``1e-3`` (a :class:`Number`)."""
    if not _NUMBER.fullmatch(text) or not math.isfinite(float(text)):
        raise argparse.ArgumentTypeError(f"expected a decimal number such as 0.05, not {text!r}")
    return Number(text)


def integer_list(text: str) -> tuple[int, ...]:
    """Comma-separated integers, e.g. ``4,4,2``."""
    items = text.split(",")
    if not all(_INTEGER.fullmatch(item.strip()) and len(item.strip().lstrip("+-")) <= MAX_DIGITS
               for item in items):
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 4,4,2, "
                                         f"not {text!r}")
    return tuple(int(item) for item in items)


def number_list(text: str) -> tuple[float, ...]:
    """Comma-separated finite decimal numbers, e.g. ``0.1,0.2,0.3`` (each a :class:`Number`)."""
    items = [item.strip() for item in text.split(",")]
    if not all(_NUMBER.fullmatch(item) and math.isfinite(float(item)) for item in items):
        raise argparse.ArgumentTypeError(f"expected comma-separated decimal numbers such as "
                                         f"0.1,0.2,0.3, not {text!r}")
    return tuple(Number(item) for item in items)


def name(text: str) -> str:
    """A non-empty word (a configuration, a preset, a kind)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a non-empty value, not {text!r}")
    return text.strip()


def path(text: str) -> Path:
    """A non-empty file or folder path."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a file or folder path, not {text!r}")
    return Path(text)


def describe_value(value) -> str:
    """A value as the user typed it: lists as ``4,4,2``, everything else with ``repr``."""
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return ",".join(map(str, value))
    return repr(value)
