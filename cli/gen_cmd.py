"""``twinnet gen``: configuration (flags, a TOML file or a preset) → Verilog and a manifest."""

import json
import sys
import time
from pathlib import Path

from twinnet.families import family_words
from twinnet.gen import output
from twinnet.model import checks
from twinnet.model.fat_tree import MAX_FAT_TREE_TERMINALS
from twinnet.model.king import KINDS
from twinnet.model.king_network import (
    ESCAPES,
    MAX_PE_PORTS,
    MAX_SIDE,
    MAX_VCS,
    ROUTINGS,
    TIES,
)
from twinnet.model.network import (
    MAX_BUFFER_DEPTH,
    MAX_FLIT_WIDTH,
    MAX_PACKET_LENGTH,
    MAX_ROUTERS,
    MAX_VC_ROUTERS,
)
from twinnet.model.twisted_network import MAX_NODES as TWISTED_MAX_NODES

from . import args as parse
from .main import Report, UsageError, add_json_flag

#: The papers' twin-torus instances (003 §7.4: all in configuration D).
PRESETS = {
    f"3dt-{'x'.join(map(str, radices))}": {"topology": "twin-torus", "radices": list(radices),
                                           "configuration": "D", "mode": "bubble"}
    for radices in [(4, 4, 2), (4, 4, 4), (5, 5, 5), (6, 6, 6), (8, 4, 4), (8, 8, 8)]
}
#: The plain 2D tori 003 §7.4 compares them with (64, 128, 256, 432, 441 and 1,024 PEs).
PRESETS.update({
    f"2d-{'x'.join(map(str, radices))}": {"topology": "twin-torus", "radices": list(radices),
                                          "configuration": "torus", "mode": "bubble"}
    for radices in [(8, 8), (16, 8), (16, 16), (24, 18), (21, 21), (32, 32)]
})

#: 003 §7.1's router settings on the 3DT 4x4x4 of §7.3 (configuration D, 4-flit packets):
#: one 128-flit buffer per link with bubble flow control, or VCs of 32 flits (the RTL has the
#: 2 VCs of 003 §6.3.1 where the paper simulates 4).
PRESETS.update({
    "003-bubble": {"topology": "twin-torus", "radices": [4, 4, 4], "configuration": "D",
                   "mode": "bubble", "packet_length": 4, "buffer_depth": 128},
    "003-vc": {"topology": "twin-torus", "radices": [4, 4, 4], "configuration": "D",
               "mode": "vc", "packet_length": 4, "buffer_depth": 32},
    # The 2D torus of the same 128 PEs (003 §7.4's 16x8) with the same router settings.
    "003-torus": {"topology": "torus", "radices": [16, 8], "configuration": "torus",
                  "mode": "bubble", "packet_length": 4, "buffer_depth": 128},
})

#: 002 Table 3's networks (16x16, uniform traffic; bench/king.py): 002's adaptive routing
#: (hop-by-hop on T and DT, 2S hop-by-hop on KT) over the bubble escape, 8-flit packets, 2 VCs
#: of 32 flits (four packets per VC: the reading of 002's "32 phits" its simulator can run),
#: and 2 PEs per router (KT's bound is above one flit per node and cycle).
PRESETS.update({
    f"002-{kind.lower()}16": {"topology": "king", "kind": kind, "side": 16, "routing": routing,
                              "escape": "bubble", "vcs": 2, "packet_length": 8,
                              "buffer_depth": 32, "pe_ports": 2}
    for kind, routing in (("T", "hop-by-hop"), ("DT", "hop-by-hop"), ("KT", "2s"))
})

#: 004's rectangular tori, twisted by t_YX = d_x / 2 (the twist with the smallest diameter),
#: and their untwisted twins (``-untwisted``): minimal dimension-order routing over the
#: one-VC bubble escape, 4-flit packets, four packets of buffer per VC (bench/twisted.py).
PRESETS.update({
    f"004-{dx}x{dy}{suffix}": {"topology": "twisted", "radices": [dx, dy],
                               "twists": twists, "escape": "bubble", "packet_length": 4,
                               "buffer_depth": 16}
    for dx, dy in [(8, 4), (16, 8), (24, 12), (48, 12)]
    for suffix, twists in (("", f"YX={dx // 2}"), ("-untwisted", ""))
})

#: Fat trees of twin switches with 001's optimal split (16, 64 and 256 terminals). 001 gives
#: no router settings: four packets of buffer per VC, as in the 002 and 004 presets (with the
#: default two, the split router's links wait for credits: docs/results.md).
PRESETS.update({
    f"ft-{k}x{n}": {"topology": "fat-tree", "k": k, "n": n, "split": "optimal",
                    "buffer_depth": 16}
    for k, n in [(4, 2), (4, 3), (4, 4)]
})

#: Command-line flags (argparse destinations) and the configuration keys they set.
FLAGS = {"n": "n", "k": "k", "radix": "radices", "config": "configuration", "mode": "mode",
         "flit_width": "flit_width", "packet_length": "packet_length",
         "buffer_depth": "buffer_depth", "pipeline": "pipeline", "split": "split",
         "internal_ports": "internal_ports", "plain": "plain",
         "kind": "kind", "side": "side", "routing": "routing", "escape": "escape",
         "pe_ports": "pe_ports", "vcs": "vcs", "broadcast": "broadcast", "ties": "ties",
         "twist": "twists"}
#: The family-specific flags each family takes (the others are common to all).
FAMILY_FLAGS = {"twin-torus": ("n", "k", "radix", "config", "mode"),
                "torus": ("n", "k", "radix", "config", "mode"),
                "fat-tree": ("n", "k", "split", "internal_ports", "plain"),
                "king": ("kind", "side", "routing", "escape", "pe_ports", "vcs", "broadcast",
                         "ties"),
                "twisted": ("radix", "twist", "escape")}

LIMITS_HELP = (f"Limits: at most {MAX_ROUTERS} routers in a torus or twin torus (the 2D 64x64 "
               f"torus, 3DT 16x16x8; {MAX_VC_ROUTERS} in mode vc), {MAX_SIDE}x"
               f"{MAX_SIDE} king and diagonal networks, {TWISTED_MAX_NODES} nodes in a "
               f"twisted torus, {MAX_FAT_TREE_TERMINALS} fat-tree terminals; flit width at most "
               f"{MAX_FLIT_WIDTH}, packet length at most {MAX_PACKET_LENGTH}, buffer depth at "
               f"most {MAX_BUFFER_DEPTH} flits.")


def register(commands) -> None:
    parser = commands.add_parser(
        "gen", help="generate a network's Verilog and manifest",
        description="Generate the Verilog of a network of any family (twin tori, tori, fat "
                    "trees, king and diagonal networks, twisted tori: the network top plus one "
                    "module per distinct router, instantiated by name) and a JSON manifest into "
                    "OUT/<network name>/. Values come from a preset, then a TOML file, then "
                    "flags (later wins). The folder appears whole or not at all.",
        epilog=LIMITS_HELP + " Presets: " + ", ".join(PRESETS) + ". TOML keys: "
               + ", ".join(_toml_keys()) + ".")
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
    # No argparse choices: a stray value after an unknown flag would land here and hide the
    # flag in argparse's message; the family is checked with the other values instead.
    parser.add_argument("family", nargs="?", metavar="FAMILY",
                        help="twin-torus (the default), torus, fat-tree, king or twisted; a "
                             "preset or a TOML file's 'topology' key may name it instead")
    parser.add_argument("--preset", choices=PRESETS, metavar="NAME",
                        help="start from a named instance of the papers: " + ", ".join(PRESETS))
    parser.add_argument("--toml", type=parse.path, help="TOML file with configuration keys")
    parser.add_argument("--n", type=parse.integer,
                        help="tori: dimensions (default 3); fat-tree: stages (default 2)")
    parser.add_argument("--k", type=parse.integer,
                        help="tori: radix of every dimension (default 4); fat-tree: switch "
                             "half-radix, the switches having 2k ports (default 4)")
    parser.add_argument("--radix", type=parse.integer_list,
                        help="radix per dimension, e.g. 4,4,2 (tori: instead of --n and --k; "
                             "twisted: 2 or 3 radices, default 8,4)")
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
    parser.add_argument("--pipeline", type=parse.integer,
                        help="router microarchitecture, by its cycles per hop: 3 (split: "
                             "allocation and crossbar in separate cycles, an output held by one "
                             "packet from head to tail; the default) or 2 (compact)")
    fat = parser.add_argument_group("fat-tree")
    fat.add_argument("--split", type=parse.name,
                     help="how each twin switch's 2k ports are split between its halves α and "
                          "β: optimal (001's: pairs {l, l+k} per half below the last stage, all "
                          "down ports on α at it; the default), paired, down-alpha, or α's "
                          "ports: one list for every stage (0,1,4,5) or one per stage "
                          "separated by ';' (0,1,4,5;0,1,2,3)")
    fat.add_argument("--internal-ports", type=parse.integer,
                     help="internal ports r between α and β, 1 to k (default 1)")
    fat.add_argument("--plain", action="store_true", default=None,
                     help="monolithic 2k-port switches instead of twin switches (for "
                          "comparison)")
    king = parser.add_argument_group("king")
    king.add_argument("--kind", type=parse.name,
                      help=f"the square network of 002: {', '.join(KINDS)} (mesh, diagonal "
                           "mesh, king mesh and their tori; default KT)")
    king.add_argument("--side", type=parse.integer,
                      help=f"nodes per side, 3 to {MAX_SIDE} (default 8)")
    king.add_argument("--routing", choices=tuple(ROUTINGS),
                      help="deterministic: dor (M, T), diagonal (DM, DT: 002 Alg. 1 on DT) or "
                           "knaive (KM, KT), the default for the kind; adaptive over an escape "
                           "network that takes the kind's deterministic routing: hop-by-hop "
                           "(any kind: every profitable port) or 2s (KM, KT: profitable Knaive "
                           "ports first, then the other profitable ports)")
    king.add_argument("--escape", choices=ESCAPES,
                      help="deadlock avoidance on the tori: bubble (one VC, room for two "
                           "packets to enter a ring; the default), dateline (two VCs) or none "
                           "(one VC: can deadlock); meshes take none")
    twisted = parser.add_argument_group("twisted")
    twisted.add_argument("--twist", type=parse.name,
                         help="twisted tori (with --radix 8,4): the twists t_JK, e.g. YX=4 or "
                              "YX=2,ZX=1 (the peripheral link of J lands t_JK over in K; "
                              "node-symmetric sets only, 004's Theorem); default none")
    king.add_argument("--pe-ports", type=parse.integer,
                      help=f"PEs per router, 1 to {MAX_PE_PORTS} (002's parallel injection: "
                           "offer a king torus more than one flit per node and cycle; "
                           "default 1)")
    king.add_argument("--vcs", type=parse.integer,
                      help=f"VCs per link: the escape's (1, or 2 with the dateline), plus at "
                           f"least one adaptive VC under adaptive routing (default: one), at "
                           f"most {MAX_VCS}")
    king.add_argument("--ties", choices=TIES,
                      help="DT: which of equally short wrap-around images 002 Alg. 1 takes: "
                           "first (one path per pair, packets in order; the default) or lfsr "
                           "(pseudo-random, as in 002's hardware: paths vary, order per pair "
                           "is not kept)")
    king.add_argument("--broadcast", action="store_true", default=None,
                      help="KM, KT: routers that replicate broadcasts (002 §3.3.4: a copy to "
                           "every other router, on a VC of their own, one more per link)")


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


def _toml_keys() -> tuple[str, ...]:
    """Every key a TOML file may hold: every family's, and ``preset``."""
    return tuple(dict.fromkeys([key for family, _ in family_words().values()
                                for key in family.configuration.allowed_keys()] + ["preset"]))


def load_toml(path: Path) -> dict:
    """The TOML file's keys; an unknown key is an error naming the file and the key."""
    values = output.read_toml(path, "--toml")
    allowed = _toml_keys()
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
    flag_labels = {key: _flag(dest) for dest, key in FLAGS.items() if key in flags}
    if isinstance(flags.get("split"), str):
        flags["split"] = split_value(flags["split"])
    sources.append((flags, flag_labels))
    family = _family(args, sources)
    if family in ("fat-tree", "king", "twisted"):
        for source, source_labels in sources:
            for key, value in source.items():
                values[key], labels[key] = value, source_labels[key]
        return family, values, labels
    for source, source_labels in sources:
        _merge_size(values, labels, source, source_labels)
        for key, value in source.items():
            if key not in ("n", "k", "radices"):
                values[key], labels[key] = value, source_labels[key]
    if preset is not None:
        _keep_preset_shape(preset, preset_label, values, labels)
    if family == "torus":
        configuration = values.get("configuration", "torus")
        if not isinstance(configuration, str) or configuration.strip().lower() != "torus":
            raise UsageError(f"{labels['configuration']} {configuration}: the torus family "
                             "is the plain torus: its configuration must be 'torus' (use the "
                             "twin-torus family for twin configurations)")
        values["configuration"] = "torus"
        labels.setdefault("configuration", "FAMILY torus")
    values.pop("topology", None)
    return family, values, labels


def split_value(text: str):
    """``--split`` text: a name, one α port list, or one list per stage separated by ';'."""
    if text in ("optimal", "paired", "down-alpha", "plain"):
        return text
    try:
        lists = [parse.integer_list(part.strip()) for part in text.split(";")]
    except Exception:  # argparse.ArgumentTypeError: reported below with the flag
        lists = None
    if lists is None:
        raise UsageError(f"--split {text}: must be optimal, paired, down-alpha or α's ports "
                         "such as 0,1,4,5 (one list per stage separated by ';')")
    return [list(ports) for ports in lists] if len(lists) > 1 else list(lists[0])


def _family(args, sources) -> str:
    """The family: the FAMILY argument, else the preset's or the TOML file's ``topology``
    (twin-torus by default); family-specific flags must match it."""
    named = [(source["topology"], source_labels["topology"]) for source, source_labels
             in sources if "topology" in source]
    family = args.family
    if family is not None and family not in family_words():
        raise UsageError(f"FAMILY {family!r}: must be one of {', '.join(family_words())}")
    for topology, label in named:
        words = family_words()
        group = words[topology][0].name if isinstance(topology, str) and topology in words \
            else None
        if group is None:
            raise UsageError(f"{label} {topology!r}: must be one of {', '.join(words)}")
        if family is None:
            family = topology
        elif words[family][0].name != group:
            raise UsageError(f"{label} {topology}: the network is a {family} (FAMILY); a "
                             f"{group} preset or file cannot describe it")
    family = family or "twin-torus"
    for dest in dict.fromkeys(d for flags in FAMILY_FLAGS.values() for d in flags):
        if dest in FAMILY_FLAGS[family] or getattr(args, dest) in (None, False):
            continue
        owners = [name for name, flags in FAMILY_FLAGS.items() if dest in flags]
        value = getattr(args, dest)
        shown = "" if value is True else f" {parse.describe_value(value)}"
        owner = " and ".join(filter(None, [", ".join(owners[:-1]), owners[-1]]))
        raise UsageError(f"{_flag(dest)}{shown}: must not be given to the {family} family; "
                         f"it applies to {owner} only")
    return family


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


def network_from_args(args):
    """The network configuration of the FAMILY, preset, TOML file and flags in ``args``: a
    :class:`TwinNetworkConfig`, a :class:`twinnet.model.fat_tree.FatTreeNetworkConfig` or a
    :class:`twinnet.model.king_network.KingNetworkConfig`."""
    family, values, labels = network_values(args)
    return family_words()[family][0].network(values, labels)


def run(args) -> Report:
    network = network_from_args(args)
    outdir = output.target(args.out, network.name, "--out")
    started = time.perf_counter()
    print(f"twinnet gen: {network.name} -> {outdir}", file=sys.stderr)
    from twinnet.families import family_for
    from twinnet.gen.generate import generate_network  # Amaranth is imported only when generating
    files = generate_network(network, outdir, family=family_for(network), trace=args.trace,
                             progress=lambda line: print(f"  {line}", file=sys.stderr))
    seconds = time.perf_counter() - started
    verdict = json.loads(files[-1].read_text())["deadlock"]
    if verdict is not None and not verdict["deadlock_free"]:
        print(f"twinnet gen: warning: {network.name} can deadlock: {verdict['rule']} has "
              f"the cycle {' -> '.join(verdict['cycle'])}", file=sys.stderr)
    text = "\n".join([f"{network.name}: {len(files)} files in {seconds:.1f} s"] +
                     [f"  {path}" for path in files])
    return Report(text, {"network": network.name, "parameters": network.to_dict(),
                         "files": [str(path) for path in files], "seconds": seconds,
                         "deadlock": verdict})
