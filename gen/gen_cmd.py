"""``twinnet gen``: configuration (flags, a TOML file or a preset) → Verilog and a manifest."""

import sys
import time
from pathlib import Path

from twinnet.model import checks
from twinnet.model.network import (
    MAX_BUFFER_DEPTH,
    MAX_FLIT_WIDTH,
    MAX_PACKET_LENGTH,
    MAX_ROUTERS,
    TWIN_NETWORK_KEYS,
    TwinNetworkConfig,
    twin_network_from_dict,
)

from . import args as parse
from . import output
from .cli import Report, UsageError, add_json_flag

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

#: Command-line flags (argparse destinations) and the configuration keys they set.
FLAGS = {"n": "n", "k": "k", "radix": "radices", "config": "configuration", "mode": "mode",
         "flit_width": "flit_width", "packet_length": "packet_length",
         "buffer_depth": "buffer_depth"}

LIMITS_HELP = (f"Limits: at most {MAX_ROUTERS} routers (3DT 8x8x8 and the 2D 32x32 torus, the "
               f"papers' largest; generation takes about 25 s and 0.7 GiB), flit width at most "
               f"{MAX_FLIT_WIDTH}, packet length at most {MAX_PACKET_LENGTH}, buffer depth at "
               f"most {MAX_BUFFER_DEPTH} flits.")


def register(commands) -> None:
    parser = commands.add_parser(
        "gen", help="generate a network's Verilog and manifest",
        description="Generate the Verilog of a twin-torus network (the network top plus one "
                    "module per distinct card, instantiated by name) and a JSON manifest into "
                    "OUT/<network name>/. Values come from a preset, then a TOML file, then "
                    "flags (later wins). The folder appears whole or not at all.",
        epilog=LIMITS_HELP + " Presets: " + ", ".join(PRESETS) + ". TOML keys: "
               + ", ".join(TWIN_NETWORK_KEYS) + ", preset.")
    add_network_args(parser)
    parser.add_argument("--out", type=parse.path, default=Path("out"),
                        help="parent folder: the network goes to OUT/<network name>/ "
                             "(default ./out)")
    parser.add_argument("--trace", action="store_true",
                        help="add link-trace outputs for testbenches that follow every hop")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def add_network_args(parser) -> None:
    """The flags that describe a network (also used by ``twinnet sim``)."""
    parser.add_argument("--preset", choices=PRESETS, metavar="NAME",
                        help="start from a named instance of the papers: " + ", ".join(PRESETS))
    parser.add_argument("--toml", type=parse.path, help="TOML file with configuration keys")
    parser.add_argument("--n", type=parse.integer, help="dimensions (default 3)")
    parser.add_argument("--k", type=parse.integer, help="radix of every dimension (default 4)")
    parser.add_argument("--radix", type=parse.integer_list,
                        help="radix per dimension, e.g. 4,4,2 (instead of --n and --k)")
    parser.add_argument("--config", type=parse.name,
                        help="port configuration: A–J (n = 3), C_Best, torus (the plain torus, "
                             "one router per node) or a card-0 list such as X+,Y+,X- "
                             "(default D for n = 3, C_Best otherwise)")
    parser.add_argument("--mode", choices=("none", "vc", "bubble"),
                        help="deadlock mode (default bubble)")
    parser.add_argument("--flit-width", type=parse.integer, help="bits per flit (default 32)")
    parser.add_argument("--packet-length", type=parse.integer,
                        help="flits per packet (default 4)")
    parser.add_argument("--buffer-depth", type=parse.integer,
                        help="flits per input VC (default 2 x packet length)")


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _merge_size(values: dict, labels: dict, source: dict, source_labels: dict) -> None:
    """Apply a later source's size keys (``n``, ``k``, ``radices``) over earlier ones.

    A later ``radices`` replaces the size. Over earlier radices, a later ``k`` alone keeps
    their dimension count and a later ``n`` alone keeps their radix (which must then be the
    same in every dimension); over an earlier ``n``/``k``, each replaces its own.
    """
    given = {key: source[key] for key in ("n", "k", "radices") if key in source}
    if not given:
        return
    if "radices" in given and ({"n", "k"} & given.keys()):
        other = "n" if "n" in given else "k"
        raise UsageError(f"{source_labels['radices']} and {source_labels[other]} both give the "
                         "size: give either radices or n and k, not both")
    if "radices" in given:
        for key in ("n", "k"):
            values.pop(key, None)
            labels.pop(key, None)
    elif "radices" in values:
        radices, label = values.pop("radices"), labels.pop("radices")
        radices = checks.check_int_tuple(label, radices)
        if "n" not in given:
            values["n"], labels["n"] = len(radices), label
        elif "k" not in given:
            if len(set(radices)) != 1:
                raise UsageError(f"{source_labels['n']} needs --k: {label} gives unequal "
                                 f"radices {parse.describe_value(radices)}")
            values["k"], labels["k"] = radices[0], label
    for key, value in given.items():
        values[key], labels[key] = value, source_labels[key]


def load_toml(path: Path) -> dict:
    """The TOML file's keys; an unknown key is an error naming the file and the key."""
    values = output.read_toml(path, "--toml")
    allowed = (*TWIN_NETWORK_KEYS, "preset")
    for key in values:
        if key not in allowed:
            raise UsageError(f"{path}: unknown key {key!r}; allowed keys: {', '.join(allowed)}")
    return values


def network_values(args) -> tuple[dict, dict]:
    """Merge preset, TOML file and flags (in that order): ``(values, labels)``, each value's
    label naming where it came from (``--k``, ``net.toml: k``, ``preset 2d-8x8: radices``)."""
    values, labels = {}, {}
    file_values = load_toml(args.toml) if args.toml else {}
    preset, preset_label = args.preset, "--preset"
    if preset is None and "preset" in file_values:
        preset, preset_label = file_values["preset"], f"{args.toml}: preset"
    file_values.pop("preset", None)
    sources = []
    if preset is not None:
        if not isinstance(preset, str) or preset not in PRESETS:
            raise UsageError(f"{preset_label} must be one of {', '.join(PRESETS)}, "
                             f"not {preset!r}")
        sources.append((PRESETS[preset], {key: f"preset {preset} ({preset_label}): {key}"
                                          for key in PRESETS[preset]}))
    if file_values:
        sources.append((file_values, {key: f"{args.toml}: {key}" for key in file_values}))
    flags = {key: getattr(args, dest) for dest, key in FLAGS.items()
             if getattr(args, dest) is not None}
    sources.append((flags, {key: _flag(dest) for dest, key in FLAGS.items() if key in flags}))
    for source, source_labels in sources:
        _merge_size(values, labels, source, source_labels)
        for key, value in source.items():
            if key not in ("n", "k", "radices"):
                values[key], labels[key] = value, source_labels[key]
    if preset is not None:
        _keep_preset_shape(preset, preset_label, values, labels)
    return values, labels


def _keep_preset_shape(preset: str, preset_label: str, values: dict, labels: dict) -> None:
    """A preset names a shape of the papers: later sources may change its radices, mode and
    sizes, but not its dimension count or whether it is a twin or a plain torus."""
    base = PRESETS[preset]
    plain, dims = base["configuration"] == "torus", len(base["radices"])
    shape = f"{dims}-D {'plain torus' if plain else 'twin torus'}"
    if "radices" in values:
        key, shown = "radices", parse.describe_value(values["radices"])
        count = len(values["radices"]) if isinstance(values["radices"], (list, tuple)) else dims
    else:
        key, shown, count = "n", str(values.get("n")), values.get("n")
    if count != dims:
        raise UsageError(f"{labels[key]} {shown}: preset {preset} ({preset_label}) is a "
                         f"{shape}: its dimension count must stay {dims} (leave out the preset to "
                         f"build another shape)")
    configuration = values.get("configuration")
    if isinstance(configuration, str) and (configuration.strip().lower() == "torus") != plain:
        allowed = ("only 'torus'" if plain else "a twin configuration (A–J, C_Best or a card-0 "
                   "list), not 'torus'")
        raise UsageError(f"{labels['configuration']} {configuration}: preset {preset} "
                         f"({preset_label}) is a {shape}: its configuration must be "
                         f"{allowed} (leave out the preset to build another shape)")


def network_from_args(args) -> TwinNetworkConfig:
    """The :class:`TwinNetworkConfig` of the preset, TOML file and flags in ``args``."""
    values, labels = network_values(args)
    return twin_network_from_dict(values, labels)


def run(args) -> Report:
    network = network_from_args(args)
    outdir = output.target(args.out, network.name, "--out")
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
