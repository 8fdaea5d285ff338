"""``twinnet gen``: configuration (flags, a TOML file or a preset) → Verilog and a manifest."""

import sys
import time
import tomllib
from pathlib import Path

from twinnet.model.network import TWIN_NETWORK_KEYS, TwinNetworkConfig, twin_network_from_dict

from .cli import Report, UsageError, add_json_flag, parse_int_list

#: The papers' twin-torus instances (003 §7.4: all in configuration D).
PRESETS = {
    f"3dt-{'x'.join(map(str, radices))}": {"radices": list(radices), "configuration": "D",
                                           "mode": "bubble"}
    for radices in [(4, 4, 2), (4, 4, 4), (5, 5, 5), (6, 6, 6), (8, 4, 4), (8, 8, 8)]
}
#: The plain 2D tori 003 §7.4 compares them with (64, 128, 256, 432, 441 and 1,024 PEs).
PRESETS.update({
    f"2d-{'x'.join(map(str, radices))}": {"radices": list(radices), "configuration": "torus",
                                          "mode": "bubble"}
    for radices in [(8, 8), (16, 8), (16, 16), (24, 18), (21, 21), (32, 32)]
})

#: Command-line flags and the configuration keys they set.
FLAGS = {"n": "n", "k": "k", "radix": "radices", "config": "configuration", "mode": "mode",
         "flit_width": "flit_width", "packet_length": "packet_length",
         "buffer_depth": "buffer_depth"}


def register(commands) -> None:
    parser = commands.add_parser(
        "gen", help="generate a network's Verilog and manifest",
        description="Generate the Verilog of a twin-torus network (the network top plus one "
                    "module per distinct card, instantiated by name) and a JSON manifest. "
                    "Values come from a preset, then a TOML file, then flags (later wins).",
        epilog="presets: " + ", ".join(PRESETS) + ". TOML keys: " + ", ".join(TWIN_NETWORK_KEYS))
    add_network_args(parser)
    parser.add_argument("--out", type=Path, default=Path("out"),
                        help="output folder (default ./out/<network name>)")
    parser.add_argument("--trace", action="store_true",
                        help="add link-trace outputs for testbenches that follow every hop")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def add_network_args(parser) -> None:
    """The flags that describe a network (also used by ``twinnet sim``)."""
    parser.add_argument("--preset", help="start from a named instance of the papers")
    parser.add_argument("--toml", type=Path, help="TOML file with configuration keys")
    parser.add_argument("--n", type=int, help="dimensions")
    parser.add_argument("--k", type=int, help="radix of every dimension")
    parser.add_argument("--radix", help="radix per dimension, e.g. 4,4,2")
    parser.add_argument("--config", help="port configuration: A–J, C_Best, torus (the plain "
                        "torus, one router per node) or a card-0 list such as X+,Y+,X-")
    parser.add_argument("--mode", choices=("none", "vc", "bubble"), help="deadlock mode")
    parser.add_argument("--flit-width", type=int, help="bits per flit (default 32)")
    parser.add_argument("--packet-length", type=int, help="flits per packet (default 4)")
    parser.add_argument("--buffer-depth", type=int,
                        help="flits per input VC (default 2 x packet length)")


def load_toml(path: Path) -> dict:
    """The TOML file's keys; an unknown key is an error naming the file and the key."""
    try:
        values = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{path}: not valid TOML: {error}") from None
    allowed = (*TWIN_NETWORK_KEYS, "preset")
    for key in values:
        if key not in allowed:
            raise UsageError(f"{path}: unknown key {key!r}; allowed keys: {', '.join(allowed)}")
    return values


def network_from_args(args) -> TwinNetworkConfig:
    """Merge preset, TOML file and flags (in that order) into a :class:`TwinNetworkConfig`."""
    values, where = {}, "command line"
    file_values = load_toml(args.toml) if args.toml else {}
    preset = args.preset or file_values.pop("preset", None)
    if preset is not None:
        if preset not in PRESETS:
            raise UsageError(f"preset must be one of {', '.join(PRESETS)}, not {preset!r}")
        values.update(PRESETS[preset])
    if args.toml:
        where = str(args.toml)
        values.update(file_values)
    flags = {key: getattr(args, flag) for flag, key in FLAGS.items()
             if getattr(args, flag) is not None}
    if "radices" in flags:
        flags["radices"] = parse_int_list(flags["radices"])
    if {"n", "k"} & flags.keys() or "radices" in flags:
        for key in ("n", "k", "radices"):
            values.pop(key, None)
    values.update(flags)
    return twin_network_from_dict(values, where)


def run(args) -> Report:
    network = network_from_args(args)
    outdir = args.out / network.name
    started = time.perf_counter()
    print(f"twinnet gen: {network.name} ({network.topology.pe_count} PEs, "
          f"{network.topology.router_count} cards) -> {outdir}", file=sys.stderr)
    from .twin_generate import generate  # Amaranth is imported only when generating
    files = generate(network, outdir, trace=args.trace,
                     progress=lambda line: print(f"  {line}", file=sys.stderr))
    seconds = time.perf_counter() - started
    text = "\n".join([f"{network.name}: {len(files)} files in {seconds:.1f} s"] +
                     [f"  {path}" for path in files])
    return Report(text, {"network": network.name, "parameters": network.to_dict(),
                         "files": [str(path) for path in files], "seconds": seconds})
