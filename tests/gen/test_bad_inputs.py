"""Bad command-line input: every subcommand, every flag that takes a value, every class of bad
value, checked against the CLI's error contract.

The contract: a bad input makes ``twinnet`` exit with status 2 before anything is built or
simulated and print exactly one line on stderr, no traceback, that

- starts with ``twinnet: ``;
- names the flag as typed (``--k``, ``--flit-width``) or, for a TOML file, the file path and
  the key;
- quotes the offending value as given (an empty one as ``''``; of a list, the bad item
  or, for sizes, the ``4x4x2`` notation will do);
- says what is allowed: a range (``from 2 to 1024``, ``at most``, ``>=``), ``one of``, an
  example form (``e.g.``, ``such as``) or where to look (``--help``). A value out of range
  must state the bound it crossed, a value above a documented limit the limit itself.

Nothing goes to stdout and nothing is left on disk: every case runs in a fresh temporary
working directory (``--out`` points inside it) and the tree is compared before and after. Sizes
have upper limits so that anything accepted finishes (``MAX_ROUTERS``, ``MAX_FLIT_WIDTH``,
``PACKET_LENGTH_LIMIT``, ``MAX_BUFFER_DEPTH`` in :mod:`twinnet.model.twin_network`, at most
1,000,000 simulated packets, a PE offered at most one flit per cycle).

Cases run in-process through :func:`twinnet.cli.main.main`. No valid command is run (except one
tiny analysis in the broken-pipe case): the generator's and the simulator's entry points are
replaced by stubs that fail the case if a bad input reaches them, and each case has a time and
a memory limit, so a value that is wrongly accepted fails fast instead of running for ever.

The cases come from tables:

- ``VALUE_FLAGS``: (subcommands, flag, bad values) — empty, zero, negative, huge, limit + 1,
  non-integer, non-ASCII digits, malformed lists, unknown choices, out-of-range coordinates,
  rates a PE port cannot take or that would never finish — each also with its value missing
  (the flag last on the line);
- ``COMBINATIONS``: flags that contradict one another, values out of range given the others,
  networks over ``MAX_ROUTERS``, option abbreviations, ``--flag=value`` forms;
- ``TOML_PATHS`` and ``TOML_FILES``: unusable and bad TOML files, for ``gen`` and ``sim``;
- ``OUT_PATHS``: unusable ``--out`` folders, for ``gen``, ``sim``, ``demo`` and ``board build``
  (the read-only folder is skipped when running as root, who can write anywhere);

plus a check that every value flag the parser has is covered, and one subprocess case: output
piped into a reader that has gone must not end in a ``BrokenPipeError`` traceback.

Case count (pytest items, one per case): 2725 in ``VALUE_FLAGS``, 367 missing values, 610
combinations, 272 TOML, 16 output paths, 1 flag-coverage check, 1 broken pipe and 1 check of
this count — 3993 in all (``test_case_count`` keeps this sentence honest).
"""

import argparse
import hashlib
import importlib
import os
import re
import resource
import shlex
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from twinnet.cli.fpga_cmd import MAX_SEED as FPGA_MAX_SEED
from twinnet.cli.main import build_parser, main


def _constant(name: str, literal, *modules: str):
    """The limit ``name`` from the first of ``modules`` that defines it; until the
    implementation adds it, the contract's ``literal`` (so the case is already in place)."""
    for module in modules:
        try:
            value = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if value is not None:
            return value
    return literal


# The contract's limits: the constants once they exist, else the literal values agreed on.
MAX_ROUTERS = _constant("MAX_ROUTERS", 16384, "twinnet.model.twin_network")
MAX_THREADS = _constant("MAX_THREADS", 16, "twinnet.program.driver")
MAX_RANKS = _constant("MAX_RANKS", 64, "twinnet.program")
MAX_FLIT_WIDTH = _constant("MAX_FLIT_WIDTH", 1024, "twinnet.model.twin_network")
PACKET_LENGTH_LIMIT = _constant("PACKET_LENGTH_LIMIT", 64, "twinnet.model.twin_network")
MAX_BUFFER_DEPTH = _constant("MAX_BUFFER_DEPTH", 256, "twinnet.model.twin_network")
MAX_PACKETS = _constant("MAX_PACKETS", 1_000_000, "twinnet.sim_tb.settings")
MAX_WARMUP = _constant("MAX_WARMUP", 1_000_000, "twinnet.sim_tb.settings")
MAX_BURST = _constant("MAX_BURST", 10_000, "twinnet.sim_tb.settings")
MAX_STALL_BURST = _constant("MAX_STALL_BURST", 10_000, "twinnet.sim_tb.settings")
MAX_SIDE = _constant("MAX_SIDE", 128, "twinnet.model.king_network")
MAX_PE_PORTS = _constant("MAX_PE_PORTS", 8, "twinnet.model.king_network")
MAX_VCS = _constant("MAX_VCS", 8, "twinnet.model.king_network")
MAX_ITERATIONS = _constant("MAX_ITERATIONS", 4, "twinnet.model.sizes")
MAX_EJECTION_LANES = _constant("MAX_EJECTION_LANES", 8, "twinnet.model.sizes")
MAX_BEAT_BYTES = _constant("MAX_BEAT_BYTES", 64, "twinnet.model.sizes")
MAX_USER_BITS = _constant("MAX_USER_BITS", 64, "twinnet.model.sizes")
MAX_BMC_DEPTH = _constant("MAX_BMC_DEPTH", 40, "twinnet.cli.prove_cmd")
MAX_TIMEOUT = _constant("MAX_TIMEOUT", 604800, "twinnet.cli.prove_cmd")
MAX_PROVE_JOBS = _constant("MAX_JOBS", 256, "twinnet.cli.prove_cmd")
MAX_ID_BITS = _constant("MAX_ID_BITS", 16, "twinnet.model.sizes")
MAX_FRAME_PACKETS = _constant("MAX_FRAME_PACKETS", 64, "twinnet.model.sizes")

#: Seconds a case may take: a rejection takes milliseconds.
TIMEOUT = 10
#: Bytes of address space a case may add: a wrongly accepted huge network fails with
#: MemoryError instead of exhausting the machine.
MEMORY = 1 << 30

# --- what a message must say -------------------------------------------------------------------

#: Some statement of what is allowed.
ALLOWED = re.compile(
    r"\bfrom \S+ to\b|\bat (most|least)\b|[<>]=|[≤≥]|\bin [(\[]|\bone of\b|\bchoose from\b"
    r"|\be\.g\.|\bsuch as\b|\blike\b|\bexpected\b|\ballowed\b|\brequired\b|\beither\b"
    r"|\bnot both\b|\btogether\b|\bcannot\b|\bonly\b|\bneeds?\b|\bwithout\b|--help\b"
    r"|\bmust\b|\bgive\b|\bvalid\b|\bexactly\b|\bonce\b|\btwo different\b|\bx,y\b"
    r"|\bnot an? [A-Za-z]")
#: A lower bound (for zero, negative and tiny values).
LOWER = re.compile(r"\bfrom -?\S+ to\b|\bat least\b|>=|≥|\bin [(\[]|\bgreater than\b"
                   r"|\bpositive\b|\babove -?\d|\bmore than\b|\bone of\b")
#: An upper bound (for huge values and values above a limit).
UPPER = re.compile(r"\bfrom -?\S+ to \S|\bat most\b|<=|≤|\bin [(\[]|\bup to\b|\bless than\b"
                   r"|\bone of\b|\b\d+ or \d+\b")
#: An empty value, quoted.
EMPTY = re.compile(r"''|\"\"")


def flag(text: str) -> re.Pattern:
    """``--n`` as a whole word: not the start of ``--no-trace``."""
    return re.compile(rf"(?<![\w-]){re.escape(text)}(?![\w-])")


key = flag  # a TOML key as a whole word: ``k`` is not the k of ``keys``


def given(text: str):
    """The value as typed: an empty one must show up quoted."""
    return EMPTY if text == "" else text


def number(value: int) -> re.Pattern:
    """A limit as a number, written ``1024`` or ``1,024``."""
    return re.compile(rf"(?<!\d)(?<!\d,)({value}|{value:,})(?!\d)(?!,\d)")


def sizes(text: str) -> re.Pattern:
    """Sizes as given (``27,19``) or in the usual notation (``27x19``)."""
    return re.compile(f"{re.escape(text)}|{re.escape(text.replace(',', 'x'))}")


class Part(str):
    """In a table entry: the offending item of a list, which the message may quote instead of
    the whole value (``--radix[2] ... not 0`` for ``--radix 4,4,0``)."""


def given_or_part(text: str, part: str) -> re.Pattern:
    return re.compile(rf"{sizes(text).pattern}|(?<![\w.+-]){re.escape(part)}(?![\w.])")


# --- the subcommands ---------------------------------------------------------------------------

#: Every case's output folder, relative to its own temporary working directory.
OUT = "out-dir"

#: Subcommand → the options every case starts from (a flag under test replaces its own).
COMMANDS = {
    "gen": {"--out": OUT},
    "sim": {"--out": OUT},
    "sweep": {"--out": OUT},
    "demo": {"--out": OUT},
    "fpga": {},
    "prove": {"--out": OUT},
    "board build": {"--board": "ulx3s-85f", "--out": OUT},
    "draw": {"--out": "net.svg"},
    "trace": {"--out": "t.trace"},
    "analyze twin-links": {},
    "analyze twin-distance": {},
    "analyze deadlock": {},
    "analyze twin-path": {"--src": "0,0,0:0", "--dst": "1,1,1:1"},
    "analyze fat-tree": {},
    "analyze king": {},
    "analyze twist": {},
}
NETWORK = ("gen", "sim", "sweep", "fpga", "prove", "board build", "draw", "trace")
#: The network commands that take the PEs' interface flags (--ni and its settings).
WITH_INTERFACES = ("gen", "sim", "sweep", "fpga", "draw", "board build")
TRAFFIC = ("sim", "demo")
TWIN = ("analyze twin-links", "analyze twin-distance", "analyze deadlock", "analyze twin-path")


def command_line(command: str, *extra: str, drop=()) -> list[str]:
    """``command``'s words and starting options (less those in ``drop``), then ``extra``."""
    start = [word for option, value in COMMANDS[command].items() if option not in drop
             for word in (option, value)]
    return [*command.split(), *start, *extra]


# --- bad values, by class: (class, text, what else the message must say) ------------------------

def above(limit: int):
    """The smallest value above a documented limit; the message must give the limit."""
    return ("limit+1", str(limit + 1), UPPER, number(limit))


INTEGER = [
    ("empty", ""),
    ("zero", "0", LOWER),
    ("negative", "-1", LOWER),
    ("huge", "1000000", UPPER),
    ("huge-20-digits", "99999999999999999999", UPPER),
    ("word", "abc"),
    ("decimal", "2.5"),
    ("arabic-indic-digit", "٣"),
    ("fullwidth-digit", "４"),
]
#: A seed may be zero; it may not be negative, or too big for the simulator's generator.
SEED = [case for case in INTEGER if case[0] not in ("zero", "huge")]
FRACTION = [
    ("empty", ""),
    ("zero", "0", LOWER),
    ("negative", "-0.5", LOWER),
    ("negative-exponent-form", "-1e-3", LOWER),
    ("above-one", "1.5", UPPER),
    ("huge", "1000000", UPPER),
    ("huge-20-digits", "99999999999999999999", UPPER),
    ("tiny-never-finishes", "1e-300", LOWER),
    ("denormal", "5e-324", LOWER),
    ("underflows-to-zero", "1e-400", LOWER),
    ("word", "abc"),
    ("nan", "nan"),
    ("infinity", "inf"),
    ("minus-infinity", "-inf"),
    ("arabic-indic-digit", "٣"),
    ("arabic-indic-decimal", "0.٥"),
    ("underscore", "0.0_2"),
    ("ratio", "1/2"),
    ("decimal-comma", "0,5"),
]
#: A PE port takes one flit per cycle: with the default 4-flit packets at most 0.25 packets.
RATE = FRACTION + [
    ("above-port-rate", "0.3", UPPER, "0.25"),
    ("one-above-port-rate", "1", UPPER, "0.25"),
]
INTEGER_LIST = [
    ("empty", ""),
    ("comma", ","),
    ("empty-item", "4,,4"),
    ("trailing-comma", "4,4,"),
    ("word-item", "4,4,x"),
    ("semicolon", "4;4"),
    ("space", "4 4"),
    ("decimal-item", "4,4,2.5"),
    ("arabic-indic-item", "4,4,٣"),
    ("fullwidth-item", "４,4"),
    ("zero-item", "4,4,0", Part("0"), LOWER),
    ("negative-first", "-4,4,4", Part("-4"), LOWER),
    ("negative-item", "4,-1,4", Part("-1"), LOWER),
    ("huge-item", "4,4,1000000", Part("1000000"), UPPER),
    ("huge-20-digit-item", "4,4,99999999999999999999", Part("99999999999999999999"),
     UPPER),
]
CONFIG = [
    ("empty", ""),
    ("unknown", "Q"),
    ("unknown-word", "nope"),
    ("repeated-port", "X+,X+,X+"),
    ("too-few-ports", "X+,Y+"),
    ("empty-port", "X+,,Y+"),
    ("unknown-port", "X+,Y+,W+"),
]
#: 'all' (every named configuration) is for the analyses that loop over configurations.
CONFIG_NOT_ALL = CONFIG + [("all-not-here", "all")]
CHOICE = [("unknown", "x"), ("empty", "")]
MODE = CHOICE + [("near-miss", "bubbles")]
PRESET = [("unknown", "nope"), ("empty", ""), ("unknown-size", "3dt-9x9x9")]
EMPTY_PATH = [("empty", "")]
KIND = [("unknown", "XX"), ("empty", ""), ("number", "1"), ("two-kinds", "KT,DT")]
#: King nodes on the default 8 x 8.
KING_NODE = [
    ("empty", ""),
    ("word", "abc"),
    ("one-coordinate", "0"),
    ("three-coordinates", "0,0,0"),
    ("beyond-side", "8,0", Part("8"), UPPER),
    ("huge", "0,1000000", Part("1000000"), UPPER),
    ("huge-20-digits", "99999999999999999999,0", Part("99999999999999999999"), UPPER),
    ("negative", "-1,0", Part("-1"), LOWER),
    ("arabic-indic-digit", "٣,0"),
    ("empty-item", "0,,0"),
    ("comma", ","),
    ("semicolon", "0;0"),
    ("decimal", "0.5,0"),
]
#: Twin-torus PEs on the default 4 x 4 x 4.
PE = [
    ("empty", ""),
    ("word", "abc"),
    ("two-coordinates", "0,0:0"),
    ("pe-2", "0,0,0:2", Part("2"), UPPER),
    ("beyond-radix", "4,0,0:0", Part("4"), UPPER),
    ("huge-20-digits", "99999999999999999999,0,0:0", Part("99999999999999999999"),
     UPPER),
    ("negative", "-1,0,0:0", Part("-1"), LOWER),
    ("negative-pe", "0,0,0:-1", Part("-1"), LOWER),
    ("arabic-indic-digit", "٣,0,0:0"),
    ("empty-item", "0,,0:0"),
    ("empty-pe", "0,0,0:"),
    ("no-node", ":0"),
    ("two-colons", "0,0,0:0:0"),
]
#: Twin-switch splits of the default k = 4.
SPLIT = [
    ("empty", ""),
    ("unknown", "nope"),
    ("word-item", "0,1,x"),
    ("empty-item", "0,,1"),
    ("comma", ","),
    ("semicolon", "0;1"),
    ("too-few", "0,1"),
    ("too-many", "0,1,2,3,4"),
    ("repeated", "0,0,1,2"),
    ("beyond-ports", "0,1,2,99", Part("99"), UPPER),
    ("negative", "-1,0,1,2", Part("-1"), LOWER),
    ("huge-20-digits", "0,1,2,99999999999999999999", Part("99999999999999999999"),
     UPPER),
]
#: Twists of the default 8 x 4 torus (a shift is taken modulo the radix: big ones are fine).
TWIST = [
    ("empty", ""),
    ("no-amount", "YX"),
    ("empty-amount", "YX="),
    ("word-amount", "YX=abc"),
    ("decimal-amount", "YX=2.5"),
    ("arabic-indic-amount", "YX=٣"),
    ("unknown-dimensions", "QQ=1"),
    ("same-dimension", "XX=1"),
    ("dimension-beyond-n", "ZX=1"),
    ("no-dimensions", "=4"),
    ("two-equals", "YX=4=1"),
]
SWEEP = [
    ("empty", ""),
    ("unknown", "QQ"),
    ("same-dimension", "XX"),
    ("dimension-beyond-n", "ZX"),
    ("with-amount", "YX=1"),
    ("one-dimension", "Y"),
]

#: Packet lengths of the default network (packets of at most 4 flits).
PACKET_LENGTHS = [
    ("empty", ""),
    ("word", "abc"),
    ("zero", "0"),
    ("negative", "-1"),
    ("decimal", "1.5"),
    ("empty-item", "1,,2"),
    ("reversed-range", "5-1"),
    ("three-dashes", "1-2-3"),
    ("five-classes", "1,2,3,4,1"),
    ("over-the-limit", "65", UPPER, number(PACKET_LENGTH_LIMIT)),
    ("range-over-the-limit", "2-65", UPPER, number(PACKET_LENGTH_LIMIT)),
]
#: (The longest packet of sim, sweep and trace follows a mix that no flag, file or preset
#: limits; demo's preset sets 4.)
#: Weights of the mix 1,4.
LENGTH_WEIGHTS = [
    ("empty", ""),
    ("word", "abc"),
    ("negative", "1,-1"),
    ("infinite", "1,inf"),
    ("not-a-number", "1,nan"),
    ("too-few", "1"),
    ("too-many", "1,1,1"),
    ("all-zero", "0,0"),
]

#: (subcommands, flag, bad values, options the flag needs to be meaningful).
VALUE_FLAGS = [
    (NETWORK + TWIN, "--n", INTEGER, ()),
    (NETWORK + TWIN, "--k", INTEGER, ()),
    (NETWORK + TWIN, "--radix", INTEGER_LIST, ()),
    (NETWORK + ("analyze twin-path",), "--config", CONFIG_NOT_ALL, ()),
    (TWIN[:3], "--config", CONFIG, ()),
    (NETWORK + TWIN[2:], "--mode", MODE, ()),
    (NETWORK, "--flit-width", INTEGER + [above(MAX_FLIT_WIDTH)], ()),
    (NETWORK, "--max-packet-length", INTEGER + [above(PACKET_LENGTH_LIMIT)], ()),
    (NETWORK, "--buffer-depth", INTEGER + [above(MAX_BUFFER_DEPTH)], ()),
    (NETWORK, "--pipeline", INTEGER + [above(3)], ()),  # 2 or 3 cycles per hop
    (NETWORK, "--allocator", CHOICE + [("near-miss", "slip")], ()),
    (NETWORK, "--iterations", INTEGER + [above(MAX_ITERATIONS)], ("--allocator", "islip")),
    (NETWORK, "--switch-inputs", CHOICE, ("--pipeline", "2")),
    (NETWORK, "--hold", CHOICE, ("--pipeline", "2")),
    (NETWORK, "--ejection-lanes", INTEGER + [above(MAX_EJECTION_LANES)], ()),
    (NETWORK, "--buffer-memory", CHOICE + [("near-miss", "bram")], ()),
    (WITH_INTERFACES, "--ni", CHOICE + [("near-miss", "axi")], ()),
    (WITH_INTERFACES, "--ni-bytes", INTEGER + [above(MAX_BEAT_BYTES)], ("--ni", "axi-stream")),
    (WITH_INTERFACES, "--ni-clock", CHOICE + [("near-miss", "async")], ("--ni", "axi-stream")),
    (WITH_INTERFACES, "--ni-user-bits", [case for case in INTEGER if case[0] != "zero"]
     + [above(MAX_USER_BITS)], ("--ni", "axi-stream")),
    (WITH_INTERFACES, "--ni-id-bits", [case for case in INTEGER if case[0] != "zero"]
     + [above(MAX_ID_BITS)], ("--ni", "axi-stream")),
    (WITH_INTERFACES, "--ni-frame-packets", INTEGER + [above(MAX_FRAME_PACKETS)],
     ("--ni", "axi-stream")),
    (NETWORK, "--preset", PRESET, ()),
    (NETWORK, "--toml", EMPTY_PATH, ()),
    (("gen", "sim", "sweep", "demo", "prove", "board build"), "--out", EMPTY_PATH, ()),
    (("draw",), "--out", EMPTY_PATH + [("no-suffix", "net", re.compile(r"\.svg or \.png")),
                                       ("pdf", "net.pdf", re.compile(r"\.svg or \.png"))],
     ()),
    (("sim", "sweep"), "--link-loads", EMPTY_PATH + [
        ("no-suffix", "loads", re.compile(r"\.svg or \.png")),
        ("pdf", "loads.pdf", re.compile(r"\.svg or \.png")),
        ("missing-folder", "no/such/folder/loads.svg", re.compile(r"can write in"))], ()),
    (("prove",), "--router-kind", [("empty", ""), ("blank", "  ")], ()),
    (("prove",), "--mutant", [("empty", ""), ("unknown", "no-such-bug", "credit-off-by-one")],
     ()),
    (("prove",), "--solver", CHOICE, ()),
    (("prove",), "--induction", CHOICE, ()),
    (("prove",), "--jobs", INTEGER + [above(MAX_PROVE_JOBS)], ()),
    (("prove",), "--bmc-depth", INTEGER + [above(MAX_BMC_DEPTH)], ()),
    (("prove",), "--timeout", INTEGER + [above(MAX_TIMEOUT)], ()),
    (("board build",), "--board", CHOICE, ()),
    (("fpga",), "--design", CHOICE, ()),
    (("fpga",), "--router-kind", [("empty", ""), ("blank", "  ")], ()),
    (("fpga",), "--device", [("empty", ""), ("unknown", "ecp5-12f", "ecp5-25f"),
                             ("empty-item", "ecp5-25f,,ice40-up5k"),
                             ("repeated", "ecp5-25f,ecp5-25f", "twice")], ()),
    (("fpga",), "--seed", SEED + [above(FPGA_MAX_SEED)], ()),
    (("fpga",), "--nextpnr-router", CHOICE + [("near-miss", "router3")], ()),
    (("fpga",), "--keep", EMPTY_PATH + [
        ("a-file", "/dev/null", re.compile(r"--keep names a file \(give a folder\)")),
        ("under-a-file", "/dev/null/keep", re.compile(r"--keep lies under a file"))], ()),
    (TRAFFIC, "--simulator", CHOICE, ()),
    (TRAFFIC, "--packets", [c for c in INTEGER if c[0] != "huge"] + [above(MAX_PACKETS)], ()),
    (TRAFFIC, "--rate", RATE, ()),
    (TRAFFIC, "--eject-ready", FRACTION, ("--check", "hops")),
    (("sim", "sweep"), "--eject-ready", FRACTION, ()),
    (("sim",), "--threads", INTEGER + [above(MAX_THREADS)], ()),
    (("sim", "sweep"), "--ranks", INTEGER + [above(MAX_RANKS)], ()),
    (("sim", "sweep"), "--stall-bursts", [c for c in INTEGER if c[0] != "zero"]
     + [above(MAX_STALL_BURST)], ()),
    (("demo",), "--stall-bursts", [c for c in INTEGER if c[0] != "zero"]
     + [above(MAX_STALL_BURST)], ("--check", "end-to-end")),
    (TRAFFIC, "--check", CHOICE, ()),
    (("sweep",), "--simulator", CHOICE, ()),
    (("sweep",), "--traffic", CHOICE + [("all-pairs-not-swept", "all-pairs")], ()),
    (("sweep",), "--loads", [("empty", ""), ("word-item", "0.1,x"), ("empty-item", "0.1,,0.2"),
                             ("zero-item", "0.1,0"), ("negative-item", "-0.1"),
                             ("above-one", "0.1,1.5"), ("nan", "nan"), ("ratio", "1/2")], ()),
    (("sweep",), "--seeds", [("empty", ""), ("word", "x"), ("negative", "-1"),
                             ("huge", "99999999999"), ("decimal", "1.5")], ()),
    (("sweep",), "--warmup", [c for c in INTEGER if c[0] not in ("zero", "huge")]
     + [above(MAX_WARMUP)], ()),
    (("sweep",), "--measure", [c for c in INTEGER if c[0] != "huge"] + [above(MAX_WARMUP)],
     ()),
    (("sweep",), "--hotspot-fraction", [c for c in FRACTION if c[0] not in (
        "zero", "tiny-never-finishes", "denormal", "underflows-to-zero")],
     ("--traffic", "hotspot")),
    (("sweep",), "--jobs", INTEGER, ()),
    (("sweep",), "--knee", FRACTION + [("above-limit", "0.6", UPPER)], ()),
    (("sweep",), "--scheduler", EMPTY_PATH, ()),
    (TRAFFIC, "--warmup", [c for c in INTEGER if c[0] not in ("zero", "huge")]
     + [above(MAX_WARMUP)], ()),
    (TRAFFIC, "--hotspot-fraction", [c for c in FRACTION if c[0] not in (
        "zero", "tiny-never-finishes", "denormal", "underflows-to-zero")],
     ("--traffic", "hotspot")),
    (TRAFFIC, "--seed", SEED, ()),
    (("sim",), "--broadcast-fraction", [c for c in FRACTION if c[0] not in (
        "zero", "tiny-never-finishes", "denormal", "underflows-to-zero")],
     ("king", "--kind", "KM", "--side", "3", "--broadcast", "--check", "hops")),
    (("analyze twin-path",), "--src", PE, ()),
    (("analyze twin-path",), "--dst", PE, ()),
    (("analyze fat-tree",), "--k", INTEGER, ()),
    (("analyze fat-tree",), "--n", INTEGER, ()),
    (("analyze fat-tree",), "--routing", CHOICE, ()),
    (("analyze fat-tree",), "--seed", SEED, ("--routing", "random")),
    (("analyze fat-tree",), "--split", SPLIT, ()),
    (("analyze fat-tree",), "--internal-ports", INTEGER, ()),
    (("analyze king",), "--kind", KIND, ()),
    (("analyze king",), "--side", INTEGER, ()),
    (("analyze king",), "--src", KING_NODE, ("--dst", "1,1")),
    (("analyze king",), "--dst", KING_NODE, ("--src", "0,0")),
    (("analyze twist",), "--radices", INTEGER_LIST, ()),
    (("analyze twist",), "--twist", TWIST, ()),
    (("analyze twist",), "--sweep", SWEEP, ()),
    (NETWORK, "--kind", KIND, ("king",)),
    (NETWORK, "--side", INTEGER + [("below-3", "2", LOWER, "3"), above(MAX_SIDE)], ("king",)),
    (NETWORK, "--routing", CHOICE, ("king",)),
    (NETWORK, "--escape", CHOICE, ("king",)),
    (NETWORK, "--pe-ports", INTEGER + [above(MAX_PE_PORTS)], ("king",)),
    (NETWORK, "--vcs", INTEGER + [above(MAX_VCS)], ("king", "--routing", "2s")),
    (NETWORK, "--ties", CHOICE, ("king", "--kind", "DT")),
    (NETWORK, "--twist", TWIST + [("not-node-symmetric", "XY=-1,YX=1", "Theorem")],
     ("twisted",)),
    (NETWORK, "--split", SPLIT, ("fat-tree",)),
    (NETWORK, "--internal-ports", INTEGER, ("fat-tree",)),
    (TRAFFIC, "--traffic", CHOICE, ()),
    (TRAFFIC + ("sweep",), "--injection", CHOICE, ()),
    (TRAFFIC, "--burst", INTEGER + [above(MAX_BURST)],
     ("--check", "end-to-end", "--injection", "onoff")),
    (("sweep",), "--burst", INTEGER + [above(MAX_BURST)], ("--injection", "onoff")),
    (("sim", "sweep", "trace"), "--packet-lengths", PACKET_LENGTHS, ()),
    (("demo",), "--packet-lengths", PACKET_LENGTHS[:-2] + [
        ("longer-than-the-preset", "5", "longer", UPPER, number(4)),
        ("range-beyond-the-preset", "2-9", "longer", UPPER, number(4))], ()),
    (TRAFFIC + ("sweep", "trace"), "--packet-length-weights", LENGTH_WEIGHTS,
     ("--packet-lengths", "1,4")),
    # Traces: writing one, replaying one, and each packet's times.
    (("trace",), "--traffic", CHOICE + [("all-pairs-has-no-rate", "all-pairs")], ()),
    (("trace",), "--rate", FRACTION, ()),
    (("trace",), "--packets", [c for c in INTEGER if c[0] != "huge"] + [above(MAX_PACKETS)],
     ()),
    (("trace",), "--hotspot-fraction", [c for c in FRACTION if c[0] not in (
        "zero", "tiny-never-finishes", "denormal", "underflows-to-zero")],
     ("--traffic", "hotspot")),
    (("trace",), "--seed", SEED, ()),
    (("trace",), "--out", EMPTY_PATH + [
        ("a-folder", ".", re.compile(r"is a folder")),
        ("missing-folder", "no/such/folder/t.trace", re.compile(r"can write in"))], ()),
    (("sim",), "--trace", EMPTY_PATH + [("missing", "missing.trace", "cannot be read")], ()),
    (("sim",), "--latencies", EMPTY_PATH + [
        ("no-suffix", "times", re.compile(r"\.csv or \.json")),
        ("txt", "times.txt", re.compile(r"\.csv or \.json")),
        ("missing-folder", "no/such/folder/times.csv", re.compile(r"can write in"))],
     ("--trace", "missing.trace")),
]


def _value_cases():
    for commands, option, values, context in VALUE_FLAGS:
        for command in commands:
            for label, text, *expected in values:
                argv = command_line(command, *context, option, text, drop={option})
                value = next((given_or_part(text, e) for e in expected if isinstance(e, Part)),
                             given(text))
                expected = [e for e in expected if not isinstance(e, Part)]
                yield pytest.param(argv, (flag(option), value, *expected),
                                   id=f"{command}/{option}/{label}")


def _missing_value_cases():
    for commands, option, _, context in VALUE_FLAGS:
        for command in commands:
            argv = command_line(command, *context, option, drop={option})
            yield pytest.param(argv, (flag(option),), id=f"{command}/{option}")


VALUE_CASES = list(_value_cases())
MISSING_VALUE_CASES = list(_missing_value_cases())

# --- contradictory combinations, limits that depend on other values, option spellings ----------


def _combination(command, words, *expected, label):
    return pytest.param(command_line(command, *words.split(" ")), expected,
                        id=f"{command}/{label}")


COMBINATIONS = [
    # Flags of one family given to another; a family that contradicts its preset.
    *[_combination(c, words, *expected, label=label) for c in NETWORK
      for words, expected, label in [
          ("fat-tree --radix 4,4", (flag("--radix"), "fat-tree"), "fat-tree+radix"),
          ("fat-tree --config D", (flag("--config"), "fat-tree"), "fat-tree+config"),
          ("fat-tree --mode vc", (flag("--mode"), "fat-tree"), "fat-tree+mode"),
          ("--split optimal", (flag("--split"), "twin-torus"), "twin+split"),
          ("torus --internal-ports 2", (flag("--internal-ports"), "torus"), "torus+r"),
          ("fat-tree --plain --split paired", (flag("--plain"), flag("--split")),
           "plain+split"),
          ("fat-tree --plain --internal-ports 2", (flag("--internal-ports"), "plain"),
           "plain+r"),
          ("fat-tree --preset 3dt-4x4x4", ("3dt-4x4x4", "fat-tree"), "fat-tree+twin-preset"),
          ("torus --config D", (flag("--config"), "torus"), "torus+config-D"),
          ("ring", ("FAMILY", "ring", "one of"), "unknown-family"),
          ("fat-tree --k 4 --n 5", (flag("--k"), flag("--n"), "256"), "fat-tree-too-big"),
          ("king --k 4", (flag("--k"), "king"), "king+k"),
          ("twisted --n 2", (flag("--n"), "twisted"), "twisted+n"),
          ("twisted --radix 8,4,2,2", (flag("--radix"), "2 or 3"), "twisted-four-dimensions"),
          ("twisted --radix 65,4", (flag("--radix"), "65", "64"), "twisted-radix-above-64"),
          ("twisted --radix 32,32,2", (flag("--radix"), "2048", "1024"),
           "twisted-over-max-routers"),
          ("twisted --radix 4,4 --twist XY=1,YX=1", (flag("--twist"), "Theorem"),
           "twisted-not-node-symmetric"),
          ("--pe-ports 2", (flag("--pe-ports"), "twin-torus"), "twin+pe-ports"),
          ("king --mode vc", (flag("--mode"), "king"), "king+mode"),
          ("fat-tree --side 4", (flag("--side"), "fat-tree"), "fat-tree+side"),
          ("--kind KT", (flag("--kind"), "twin-torus"), "twin+kind"),
          ("king --preset 3dt-4x4x4", ("3dt-4x4x4", "king"), "king+twin-preset"),
          ("king --kind T --routing knaive", (flag("--routing"), "knaive", "KM and KT"),
           "routing-not-of-the-kind"),
          ("king --kind KM --escape bubble", (flag("--escape"), "bubble", "none"),
           "escape-on-a-mesh"),
          ("king --kind KM --side 33", (flag("--side"), "33", "the mesh KM", "at most 32"),
           "mesh-side-over-the-walked-limit"),
          ("king --escape dateline --side 33", (flag("--side"), "33", "a dateline",
                                                "at most 32"),
           "dateline-side-over-the-walked-limit"),
          ("king --flit-width 8", (flag("--flit-width"), "8", "12"),
           "king-flit-narrower-than-head"),
          ("king --kind T --routing 2s", (flag("--routing"), "2s", "KM and KT"),
           "2s-not-on-a-torus-without-diagonals"),
          ("king --vcs 2", (flag("--vcs"), "2", "exactly 1"), "vcs-with-deterministic-routing"),
          ("king --routing 2s --escape dateline --vcs 2", (flag("--vcs"), "2", "3"),
           "vcs-below-escape-plus-adaptive"),
          ("king --kind T --broadcast", (flag("--broadcast"), "KM and KT"),
           "broadcast-not-on-a-torus"),
          ("king --kind KT --ties lfsr", (flag("--ties"), "lfsr", "DT only"),
           "ties-not-on-dt"),
          ("king --kind KT --side 5 --routing 2s --ties both",
           (flag("--ties"), "both", "even side"), "both-ties-on-an-odd-side"),
          ("king --kind DT --routing hop-by-hop --ties both", (flag("--ties"), "both", "2s"),
           "both-ties-not-under-2s"),
          ("king --kind KT --broadcast --ejection-lanes 2",
           (flag("--ejection-lanes"), "2", flag("--broadcast")), "ejection-lanes-with-broadcast"),
          ("king --broadcast --vcs 1", (flag("--vcs"), "1", "exactly 2"),
           "vcs-without-the-broadcast-vc"),
          ("fat-tree --vcs 9", (flag("--vcs"), "9", "8"), "fat-tree-vcs-above-8"),
          ("twisted --vcs 9", (flag("--vcs"), "9", "8"), "twisted-vcs-above-8"),
          ("twisted --pe-ports 9", (flag("--pe-ports"), "9", "8"), "twisted-pe-ports-above-8"),
          ("twisted --escape dateline --vcs 3", (flag("--vcs"), "3", "pairs"),
           "twisted-dateline-vcs-odd"),
          ("twisted --escape none --vcs 2", (flag("--vcs"), "2", "exactly 1"),
           "twisted-vcs-without-escape"),
      ]],
    # --radix gives the size; --n/--k give it too.
    *[_combination(c, "--radix 4,4,4 --n 3", flag("--radix"), flag("--n"), label="radix+n")
      for c in NETWORK + TWIN],
    *[_combination(c, "--radix 4,4,4 --k 4", flag("--radix"), flag("--k"), label="radix+k")
      for c in NETWORK + ("analyze twin-links",)],
    # A preset names a family (3DT twin torus, plain 2D torus); flags may not change it. The
    # message names the preset and the flag (a size flag may show as the n it gives).
    *[_combination(c, f"--preset {preset} {words}", preset, other,
                   label=f"preset-{preset}+{words.replace(' ', '-')}")
      for c in NETWORK
      for preset, words, other in [
          ("2d-8x8", "--config D", flag("--config")),
          ("2d-8x8", "--config C_Best", flag("--config")),
          ("3dt-4x4x4", "--config torus", flag("--config")),
          ("3dt-4x4x4", "--n 2", re.compile(r"(?<![\w-])--n(?![\w-])|\bn=2\b")),
          ("3dt-4x4x4", "--radix 4,4", re.compile(r"--radix\b|\bn=2\b")),
          ("3dt-4x4x4", "--config C_Best --n 2", re.compile(r"(?<![\w-])--n(?![\w-])"))]],
    # Configurations A-J are 3DT configurations (the message may show --n 2 as n=2).
    *[_combination(c, "--n 2 --config A", flag("--config"),
                   re.compile(r"(?<![\w-])--n(?![\w-])|\bn=2\b"), label="n2+config-A")
      for c in NETWORK + TWIN[:3]],
    _combination("analyze twin-links", "--radix 4,4 --config D", flag("--config"),
                 re.compile(r"--radix\b|\bn=2\b"), label="radix-2d+config-D"),
    # Microarchitecture knobs that do not go together.
    *[_combination(c, words, flag(option), *expected, label=label) for c in NETWORK
      for words, option, expected, label in [
          ("--iterations 2", "--iterations", ("2", "islip"), "iterations-without-islip"),
          ("--hold flit", "--hold", ("flit", "packet"), "split-router-hold-flit"),
          ("--switch-inputs port", "--switch-inputs", ("port", "vc"),
           "split-router-port-inputs"),
          ("--pipeline 2 --ejection-lanes 2", "--ejection-lanes", ("2", "split router"),
           "compact-router-ejection-lanes"),
          ("--pipeline 2 --bypass", "--bypass", ("split router", "pipeline 2"),
           "compact-router-bypass")]],
    # AXI4-Stream interface settings: only with --ni axi-stream, a beat that fits in a flit,
    # packets with room for a beat after the head.
    *[_combination(c, words, flag(option), *expected, label=label) for c in WITH_INTERFACES
      for words, option, expected, label in [
          ("--ni-bytes 2", "--ni-bytes", ("2", "axi-stream"), "beat-bytes-without-axi-stream"),
          ("--ni-user-bits 3", "--ni-user-bits", ("3", "axi-stream"),
           "user-bits-without-axi-stream"),
          ("--ni-clock separate", "--ni-clock", ("separate", "axi-stream"),
           "separate-clock-without-axi-stream"),
          ("--ni-id-bits 3", "--ni-id-bits", ("3", "axi-stream"), "id-bits-without-axi-stream"),
          ("--ni-frame-packets 2", "--ni-frame-packets", ("2", "axi-stream"),
           "frame-packets-without-axi-stream"),
          ("fat-tree --vcs 2 --ni axi-stream --ni-frame-packets 2", "--ni-frame-packets",
           ("2", "reorder", "only 1"), "frame-packets-where-packets-pass"),
          ("torus --radix 8,8 --max-packet-length 64 --ni axi-stream --ni-frame-packets 16",
           "--ni-frame-packets", ("16", "131,072", "65,536"), "reassembly-memory-too-large"),
          ("--ni axi-stream --flit-width 18 --ni-id-bits 4 --ni-frame-packets 2",
           "--ni-id-bits", ("4", "payload", "at most 3"), "id-bits-and-more-mark"),
          ("--ni axi-stream --flit-width 18 --ni-id-bits 16", "--ni-id-bits",
           ("16", "payload", "at most"), "id-bits-beyond-head-payload"),
          ("--ni axi-stream --ni-bytes 4", "--ni-bytes", ("4", "36", "32"),
           "beat-wider-than-flit"),
          ("--ni axi-stream --ni-user-bits 30", "--ni-user-bits", ("39", "32"),
           "user-bits-leave-no-byte"),
          ("--ni axi-stream --max-packet-length 1", "--max-packet-length", ("1", "2 flits"),
           "axi-stream-one-flit-packets")]],
    # A frames run through the interfaces takes none of the flags of the routers' own traffic.
    *[_combination("sim", f"--ni axi-stream {words}", flag(option), "axi-stream",
                   label=f"frames-with-{option.lstrip('-')}")
      for words, option in [("--rate 0.1", "--rate"), ("--warmup 5", "--warmup"),
                            ("--traffic transpose", "--traffic"),
                            ("--packet-lengths 2", "--packet-lengths"),
                            ("--check hops", "--check")]],
    *[_combination("sweep", f"--ni axi-stream {words}", flag(option), "axi-stream",
                   label=f"frames-with-{option.lstrip('-')}")
      for words, option in [("--traffic transpose", "--traffic"),
                            ("--packet-lengths 2", "--packet-lengths"),
                            ("--injection onoff", "--injection"), ("--stalls", "--stalls"),
                            ("--link-loads loads.svg", "--link-loads")]],
    # Sizes that depend on other values.
    # (Without a family, prove's lone router takes 2-flit packets and a smaller header.)
    *[_combination(c, "--buffer-depth 4", flag("--buffer-depth"), "4", LOWER, "8",
                   label="buffer-below-two-packets-in-bubble-mode")
      for c in NETWORK if c != "prove"],
    _combination("prove", "--buffer-depth 5", flag("--buffer-depth"), "5", LOWER, "6",
                 label="lone-router-buffer-below-two-packets"),
    *[_combination(c, "--flit-width 8", flag("--flit-width"), "8", LOWER,
                   label="flit-narrower-than-head") for c in NETWORK if c != "prove"],
    _combination("prove", "--flit-width 4", flag("--flit-width"), "4",
                 label="lone-router-flit-narrower-than-head"),
    # A PE takes at most one flit per cycle: packets/PE/cycle <= 1 / packet length.
    _combination("sim", "--max-packet-length 8 --rate 0.2", flag("--rate"), "0.2",
                 re.compile(r"0\.125|1/8"), label="rate-above-port-for-8-flit-packets"),
    _combination("sim", "--max-packet-length 64 --rate 0.05", flag("--rate"), "0.05",
                 re.compile(r"0\.015625|1/64"), label="rate-above-port-for-64-flit-packets"),
    # On/off bursts go at the port's full rate: the average must stay below it.
    _combination("sim", "king --kind KM --broadcast-fraction 0.1 --check hops",
                 flag("--broadcast-fraction"), "--broadcast", label="broadcast-fraction-without"
                 "-broadcast-routers"),
    _combination("sim", "king --kind KM --broadcast-fraction 1", flag("--broadcast-fraction"),
                 "--broadcast", label="broadcast-fraction-without-broadcast-routers-end-to-end"),
    _combination("sim", "king --kind KM --broadcast --broadcast-fraction 0.1 --traffic tornado",
                 flag("--broadcast-fraction"), "--traffic uniform",
                 label="broadcast-fraction-not-uniform"),
    _combination("sim", "--injection onoff --rate 0.25", flag("--injection"), "onoff",
                 re.compile(r"below 1"), label="onoff-at-full-rate"),
    _combination("sweep", "--injection onoff --loads 0.5,1", flag("--injection"), "onoff",
                 re.compile(r"below 1"), label="onoff-at-full-rate"),
    _combination("demo", "--injection onoff", flag("--injection"), "onoff",
                 re.compile(r"end-to-end"), label="onoff-with-per-hop-check"),
    # A network no board can hold, refused before synthesis (it ran past 3 GiB).
    _combination("board build", "--preset 3dt-8x8x8", flag("--board"), "1024 routers",
                 re.compile(r"at most 32"), label="network-too-large-for-a-board"),
    _combination("sim", "--check hops --threads 2", flag("--threads"), "2",
                 re.compile(r"end-to-end on Verilator"), label="threads-with-hops"),
    # More than one rank: the C++ program only, and the link counters are one process's.
    _combination("sim", "--check hops --ranks 2", flag("--ranks"), "2",
                 re.compile(r"applies only to --check end-to-end"), label="ranks-with-hops"),
    _combination("sim", "--simulator icarus --ranks 2", flag("--ranks"),
                 re.compile(r"C\+\+ traffic program"), label="ranks-on-icarus"),

    _combination("sim", "--check hops --stall-bursts 8", flag("--stall-bursts"), "8",
                 re.compile(r"end-to-end"), label="stall-bursts-with-per-hop-check"),
    # Link loads: the traffic harness reads the link counters, and the load map is a picture.
    _combination("sim", "--check hops --link-loads loads.svg", flag("--link-loads"),
                 "loads.svg", re.compile(r"only to --check end-to-end \(the link counters"),
                 label="link-loads-with-per-hop-check"),
    _combination("sim", "--link-loads loads.txt", flag("--link-loads"), "loads.txt",
                 re.compile(r"\.svg or \.png"), label="link-loads-not-a-picture"),
    # A longest packet set by a flag is a limit for the mix (the preset of demo sets 4).
    *[_combination(c, "--max-packet-length 4 --packet-lengths 5", flag("--packet-lengths"),
                   "5", "longer", label="mix-longer-than-the-network")
      for c in ("sim", "sweep", "trace")],
    _combination("sim", "--latencies times.csv", flag("--latencies"), flag("--trace"),
                 label="latencies-without-a-trace"),
    _combination("sim", "--trace missing.trace --rate 0.1", flag("--trace"), flag("--rate"),
                 label="trace-and-a-rate"),
    _combination("sim", "--link-loads no/such/folder/loads.svg", flag("--link-loads"),
                 re.compile(r"not a folder this can write in"),
                 label="link-loads-in-a-missing-folder"),
    # Networks over MAX_ROUTERS: 129 x 128 plain torus (1 router a node), 91 x 91 twin torus
    # (2 a node), 4^10 twin torus.
    *[_combination(c, "--config torus --radix 129,128", flag("--radix"), sizes("129,128"),
                   number(MAX_ROUTERS), label="torus-routers-limit+1") for c in NETWORK],
    *[_combination(c, "--radix 91,91", flag("--radix"), sizes("91,91"), number(MAX_ROUTERS),
                   label="twin-routers-over-the-limit") for c in NETWORK],
    *[_combination(c, "--n 10", flag("--n"), "10", number(MAX_ROUTERS),
                   label="twin-routers-4^10") for c in NETWORK],
    # Flags that only make sense together, or not together.
    _combination("analyze twist", "--sweep YX --twist YX=1", flag("--sweep"), flag("--twist"),
                 label="sweep+twist"),
    _combination("analyze twist", "--twist YX=1 --twist YX=2", flag("--twist"), "YX",
                 label="twist-given-twice"),
    _combination("analyze king", "--src 0,0", flag("--src"), flag("--dst"),
                 label="src-without-dst"),
    _combination("analyze king", "--dst 1,1", flag("--dst"), flag("--src"),
                 label="dst-without-src"),
    _combination("analyze king", "--kind M --deadlock", flag("--deadlock"), flag("--kind"),
                 label="deadlock-on-a-mesh"),
    _combination("analyze fat-tree", "--routing destro --seed 3", flag("--seed"),
                 flag("--routing"), label="seed+destro"),
    _combination("analyze fat-tree", "--k 3 --split paired", flag("--split"), "paired",
                 flag("--k"), label="paired-split+odd-k"),
    # Options are spelled out: an abbreviation is an error, not another option.
    _combination("demo", "--n 2", flag("--n"), "2", label="abbreviation---n-2"),
    _combination("demo", "--n", flag("--n"), label="abbreviation---n-for---no-trace"),
    _combination("sim", "--pack 10", flag("--pack"), "10", label="abbreviation---pack"),
    _combination("gen", "--flit 8", flag("--flit"), "8", label="abbreviation---flit"),
    _combination("gen", "--js", flag("--js"), label="abbreviation---js"),
    _combination("analyze twist", "--radix 8,4", flag("--radix"), "8,4",
                 label="abbreviation---radix-for---radices"),
    _combination("analyze king", "--si 8", flag("--si"), "8", label="abbreviation---si"),
    # --flag=value, and a value left out before the next flag.
    _combination("gen", "--k=abc", flag("--k"), "abc", label="equals-form"),
    _combination("sim", "--rate=2", flag("--rate"), "2", UPPER, label="equals-form"),
    _combination("analyze king", "--side=", flag("--side"), EMPTY, label="equals-form-empty"),
    _combination("gen", "--k --n 3", flag("--k"), label="missing-value-before-a-flag"),
]

# --- TOML files --------------------------------------------------------------------------------

TOML = "net.toml"
#: (label, path given to --toml, what to put there: None, "dir" or file text).
TOML_PATHS = [
    ("nonexistent", "missing.toml", None),
    ("directory", "adir", "dir"),
]  # an empty --toml is in VALUE_FLAGS
#: (label, contents of net.toml, what the message must say besides the path).
TOML_FILES = [
    ("not-utf-8", b"k = 4\n# \xff\xfe\n", re.compile(r"(?i)utf-?8")),
    ("syntax", "k = \n", "TOML", "line 1"),
    ("unclosed-list", "radices = [4, 4\n", "TOML"),
    ("unknown-key", "width = 3\n", key("width")),
    ("unknown-table", "[net]\nk = 4\n", key("net")),
    ("k-string", 'k = "four"\n', key("k"), "four"),
    ("k-float", "k = 4.0\n", key("k"), "4.0"),
    ("k-bool", "k = true\n", key("k"), re.compile(r"true|True")),
    ("n-float", "n = 2.5\n", key("n"), "2.5"),
    ("configuration-list", 'configuration = ["X+"]\n', key("configuration"), "X+"),
    ("radices-int", "radices = 4\n", key("radices"), "4"),
    ("radices-strings", 'radices = ["4", "4"]\n', key("radices"), "4"),
    ("mode-int", "mode = 1\n", key("mode"), "1"),
    ("flit-width-string", 'flit_width = "32"\n', key("flit_width"), "32"),
    ("preset-int", "preset = 3\n", key("preset"), "3"),
    ("family", 'family = "mesh"\n', key("family"), "mesh"),
    ("mode-unknown", 'mode = "x"\n', key("mode"), "x"),
    ("configuration-unknown", 'configuration = "Q"\n', key("configuration"), "Q"),
    ("preset-unknown", 'preset = "nope"\n', key("preset"), "nope"),
    ("k-zero", "k = 0\n", key("k"), "0", LOWER),
    ("k-negative", "k = -1\n", key("k"), "-1", LOWER),
    ("k-huge", "k = 1000000\n", key("k"), "1000000", UPPER),
    ("k-huge-20-digits", "k = 99999999999999999999\n", key("k"), "99999999999999999999",
     UPPER),
    ("n-one", "n = 1\n", key("n"), "1", LOWER),
    ("packet-length-zero", "max_packet_length = 0\n", key("max_packet_length"), "0", LOWER),
    ("flit-width-limit+1", f"flit_width = {MAX_FLIT_WIDTH + 1}\n", key("flit_width"),
     str(MAX_FLIT_WIDTH + 1), UPPER, number(MAX_FLIT_WIDTH)),
    ("packet-length-limit+1", f"max_packet_length = {PACKET_LENGTH_LIMIT + 1}\n",
     key("max_packet_length"), str(PACKET_LENGTH_LIMIT + 1), UPPER,
     number(PACKET_LENGTH_LIMIT)),
    ("buffer-depth-limit+1", f"buffer_depth = {MAX_BUFFER_DEPTH + 1}\n", key("buffer_depth"),
     str(MAX_BUFFER_DEPTH + 1), UPPER, number(MAX_BUFFER_DEPTH)),
    ("radices-zero-item", "radices = [4, 4, 0]\n", key("radices"), LOWER),
    ("radices-over-max-routers", "radices = [91, 91]\n", key("radices"),
     number(MAX_ROUTERS)),
    ("radices-and-n", "radices = [4, 4]\nn = 2\n", key("radices"), key("n")),
    ("preset-changes-family", 'preset = "2d-8x8"\nconfiguration = "D"\n',
     key("configuration"), "2d-8x8"),
]

# --- unusable output folders -------------------------------------------------------------------

#: (label, --out value); ``afile`` is an existing regular file, ``ro`` a read-only folder.
OUT_PATHS = [
    ("existing-file", "afile"),
    ("under-a-file", "afile/sub"),
    ("read-only-folder", "ro"),
    ("cannot-be-created", "/proc/twinnet-out"),
]


#: The commands whose --out folder is checked.
OUT_COMMANDS = ("gen", "sim", "demo", "board build")


# --- running a case ----------------------------------------------------------------------------

class Refused(BaseException):
    """A bad input reached the generator or the simulator, or ran out of time or memory.
    A BaseException, so that the CLI's ``except`` clauses cannot swallow it."""


def _refuse(what: str):
    def stub(*args, **kwargs):
        raise Refused(f"the bad input was accepted: twinnet started {what}")
    return stub


def _patch(monkeypatch, module: str, name: str, value) -> None:
    """Replace ``module.name`` for this case, if the module and the name exist."""
    try:
        target = importlib.import_module(module)
    except ImportError:
        return
    if hasattr(target, name):
        monkeypatch.setattr(target, name, value)


@pytest.fixture(autouse=True)
def sandbox(monkeypatch, tmp_path):
    """Each case: a fresh working directory, nothing heavy, a time and a memory limit."""
    monkeypatch.chdir(tmp_path)
    for family in ("twin_torus", "fat_tree"):
        _patch(monkeypatch, f"twinnet.hdl.{family}", "netlist", _refuse("building routers"))
    _patch(monkeypatch, "twinnet.hdl.verilog", "convert", _refuse("writing Verilog"))
    _patch(monkeypatch, "twinnet.sim_tb.network_sim", "simulate",
           _refuse("simulating"))
    _patch(monkeypatch, "twinnet.gen.fpga", "measure", _refuse("synthesising"))
    _patch(monkeypatch, "twinnet.cli.draw_cmd", "render", _refuse("drawing"))
    _patch(monkeypatch, "twinnet.hdl.formal.sby", "run_job", _refuse("proving"))
    _patch(monkeypatch, "twinnet.boards.targets", "board_build", _refuse("building a board"))
    # A simulator missing here must not hide an accepted bad value.
    _patch(monkeypatch, "twinnet.sim_tb.runner", "missing", lambda *args, **kwargs: None)

    def out_of_time(signum, frame):
        raise Refused(f"still running after {TIMEOUT} s: the bad input was accepted")

    previous = signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _address_space() + MEMORY
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_AS, (min(cap, hard) if hard != resource.RLIM_INFINITY
                                                else cap, hard))
    try:
        yield tmp_path
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _address_space() -> int:
    """Bytes of virtual memory this process uses now."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 4 << 30


def _tree(root: Path) -> dict:
    """Every file and folder under ``root``: kind, permissions and content digest."""
    tree = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        tree[str(path.relative_to(root))] = (stat.S_IFMT(info.st_mode), info.st_mode & 0o7777,
                                             digest)
    return tree


def run_cli(argv: list[str], capsys) -> tuple[int | str | None, str, str]:
    """``twinnet argv`` in-process: exit status, stdout, stderr. An exception the CLI lets
    out (which would print a traceback) or a :class:`Refused` fails the case."""
    capsys.readouterr()
    try:
        status = main(list(argv))
    except SystemExit as exit_:
        status = exit_.code
    except (Refused, MemoryError) as error:
        captured = capsys.readouterr()
        pytest.fail(f"twinnet {shlex.join(argv)}: {type(error).__name__}: {error}; "
                    f"stderr {captured.err!r}", pytrace=False)
    except Exception as error:  # any escape would be a traceback for the user
        captured = capsys.readouterr()
        pytest.fail(f"twinnet {shlex.join(argv)}: uncaught {type(error).__name__}: {error} "
                    f"(a traceback for the user); stderr {captured.err!r}", pytrace=False)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def assert_usage_error(capsys, sandbox):
    """``assert_usage_error(argv, *must_contain)``: the contract for one bad command line.
    Each of ``must_contain`` is a substring or a compiled pattern the message must hold."""

    def check(argv, *must_contain):
        before = _tree(sandbox)
        status, out, err = run_cli(argv, capsys)
        after = _tree(sandbox)
        problems = []
        if status != 2:
            problems.append(f"exit {status}" + (", silently accepted" if status == 0 else ""))
        if out:
            problems.append(f"stdout {out[:200]!r}")
        if "Traceback" in err:
            problems.append("a traceback on stderr")
        if err.count("\n") != 1 or not err.endswith("\n"):
            problems.append(f"{err.count(chr(10))} lines on stderr, not one")
        if not err.startswith("twinnet: "):
            problems.append("stderr does not start with 'twinnet: '")
        line = err.strip()
        for item in (*must_contain, ALLOWED):
            found = item.search(line) if isinstance(item, re.Pattern) else item in line
            if not found:
                wanted = item.pattern if isinstance(item, re.Pattern) else item
                problems.append("message lacks " + ("what is allowed" if item is ALLOWED
                                                    else repr(wanted)))
        if before != after:
            added = sorted(set(after) - set(before))
            changed = sorted(p for p in before if after.get(p) != before[p])
            problems.append(f"files left behind {added[:5]}" if added else "")
            problems.append(f"files changed {changed[:5]}" if changed else "")
        problems = [p for p in problems if p]
        assert not problems, f"twinnet {shlex.join(argv)}: {'; '.join(problems)}; stderr {err!r}"

    return check


# --- the tests ---------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, expected", VALUE_CASES)
def test_bad_value(assert_usage_error, argv, expected):
    assert_usage_error(argv, *expected)


@pytest.mark.parametrize("argv, expected", MISSING_VALUE_CASES)
def test_missing_value(assert_usage_error, argv, expected):
    assert_usage_error(argv, *expected)


@pytest.mark.parametrize("argv, expected", COMBINATIONS)
def test_bad_combination(assert_usage_error, argv, expected):
    assert_usage_error(argv, *expected)


@pytest.mark.parametrize("command", NETWORK)
@pytest.mark.parametrize("label, path, kind", TOML_PATHS, ids=[c[0] for c in TOML_PATHS])
def test_unusable_toml_path(assert_usage_error, command, label, path, kind):
    if kind == "dir":
        Path(path).mkdir()
    assert_usage_error(command_line(command, "--toml", path), flag("--toml"), given(path))


@pytest.mark.parametrize("command", NETWORK)
@pytest.mark.parametrize("label, contents, expected",
                         [(label, contents, tuple(expected))
                          for label, contents, *expected in TOML_FILES],
                         ids=[c[0] for c in TOML_FILES])
def test_bad_toml_file(assert_usage_error, command, label, contents, expected):
    target = Path(TOML)
    if isinstance(contents, bytes):
        target.write_bytes(contents)
    else:
        target.write_text(contents, encoding="utf-8")
    assert_usage_error(command_line(command, "--toml", TOML), TOML, *expected)


@pytest.mark.parametrize("command", OUT_COMMANDS)
@pytest.mark.parametrize("label, out", OUT_PATHS, ids=[c[0] for c in OUT_PATHS])
def test_unusable_output_folder(assert_usage_error, command, label, out):
    Path("afile").write_text("keep me\n")
    if label == "read-only-folder":
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders")
        Path("ro").mkdir()
        Path("ro").chmod(0o555)
    if label == "cannot-be-created" and not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    try:
        assert_usage_error(command_line(command, "--out", out, drop={"--out"}),
                           flag("--out"), out)
    finally:
        if Path("ro").is_dir():
            Path("ro").chmod(0o755)


def _value_flags(parser: argparse.ArgumentParser, words=()) -> set[tuple[str, str]]:
    """(subcommand, long flag) for every option of the parser that takes a value."""
    found = {(" ".join(words), max(action.option_strings, key=len))
             for action in parser.arguments if action.option_strings and action.nargs != 0}
    for name, subparser in parser.commands.items():
        found |= _value_flags(subparser, (*words, name))
    return found


def test_every_value_flag_has_bad_value_cases():
    covered = {(command, option) for commands, option, _, _ in VALUE_FLAGS
               for command in commands}
    missing = sorted(_value_flags(build_parser()) - covered)
    assert not missing, f"flags with no bad-value cases in VALUE_FLAGS: {missing}"
    assert set(COMMANDS) == {command for command, _ in _value_flags(build_parser())}


def test_closed_stdout_prints_no_broken_pipe_traceback(tmp_path):
    """``twinnet analyze … --json | head -c 10``, with the reader gone before the first byte."""
    argv = [sys.executable, "-m", "twinnet.cli.main", "analyze", "king", "--kind", "M",
            "--side", "2", "--json"]
    process = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdout.close()
    try:
        err = process.stderr.read().decode(errors="replace")
        process.wait(timeout=60)
    finally:
        process.kill()
        process.stderr.close()
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert "Exception ignored" not in err, err


def test_case_count():
    """The module docstring's count is the tables' count."""
    counts = {"VALUE_FLAGS": len(VALUE_CASES), "missing values": len(MISSING_VALUE_CASES),
              "combinations": len(COMBINATIONS),
              "TOML": len(NETWORK) * (len(TOML_PATHS) + len(TOML_FILES)),
              "output paths": len(OUT_COMMANDS) * len(OUT_PATHS)}
    total = sum(counts.values()) + 3  # coverage, broken pipe, this test
    stated = re.search(r"Case count .*?: (\d+) in ``VALUE_FLAGS``, (\d+) missing values, "
                       r"(\d+)\s+combinations, (\d+) TOML, (\d+) output paths, .*? (\d+) in all",
                       __doc__, re.S)
    assert stated, "the docstring's case count sentence changed form"
    assert [int(n) for n in stated.groups()] == [*counts.values(), total], (counts, total)
