"""``twinnet gen``: configuration (flags, a TOML file or a preset) → Verilog and a manifest."""

import argparse
import contextlib
import contextvars
import functools
import io
import json
import shutil
import sys
import textwrap
import time
from pathlib import Path

from twinnet.errors import UsageError
from twinnet.families import families, family_words, presets
from twinnet.gen import output
from twinnet.model import schema
from twinnet.model.sizes import (
    INTERFACE_PARAMETERS,
    MAX_BUFFER_DEPTH,
    MAX_FLIT_WIDTH,
    PACKET_LENGTH_LIMIT,
    RouterSizes,
)

from . import args as parse
from .report import Report, add_json_flag

#: The family whose flags the parser being built takes (a word of
#: :func:`twinnet.families.family_words`), or None while :func:`scan` looks for it: set by
#: :func:`twinnet.cli.main.main` around building the parser.
PARSED_FAMILY = contextvars.ContextVar("PARSED_FAMILY", default=None)
#: The family built when neither a FAMILY word, a preset nor a TOML file names one.
DEFAULT_FAMILY = "twin-torus"
#: argparse's destination prefix of another family's flags (refused with a one-line error).
FOREIGN = "foreign:"
#: :data:`PARSED_FAMILY` for a help that lists every family's flags, each under its heading.
EVERY = "*"


def limits_help() -> str:
    """Every family's size limits and the shared ones, for help texts."""
    limits = [family.limits for family in families().values() if family.limits]
    return (f"Limits: {', '.join(limits)}; flit width at most {MAX_FLIT_WIDTH}, packet length "
            f"at most {PACKET_LENGTH_LIMIT}, buffer depth at most {MAX_BUFFER_DEPTH} flits.")


def register(commands) -> None:
    parser = commands.add_parser(
        "gen", help="generate a network's Verilog and manifest",
        description="Generate the Verilog of a network of any family (twin tori, tori, fat "
                    "trees, king and diagonal networks, twisted tori: the network top plus one "
                    "module per distinct router, instantiated by name) and a JSON manifest into "
                    "OUT/<network name>/. Values come from a preset, then a TOML file, then "
                    "flags (later wins). The folder appears whole or not at all.",
        epilog=limits_help() + " Presets: " + ", ".join(presets()) + ". TOML keys: "
               + ", ".join(_toml_keys()) + ".")
    add_network_args(parser)
    parser.add_argument("--out", type=parse.path, default=Path("out"),
                        help="parent folder: the network goes to OUT/<network name>/ "
                             "(default ./out)")
    parser.add_argument("--trace", action="store_true",
                        help="add link-trace outputs for testbenches that follow every hop")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def add_network_args(parser, *, interfaces: bool = True) -> None:
    """The flags that describe a network (``gen``, ``sim``, ``sweep``, ``fpga``, ``draw``,
    ``prove``, ``board build``, ``trace``): FAMILY, ``--preset``, ``--toml``, the router sizes
    every family shares (without the PEs' interface settings,
    :data:`~twinnet.model.sizes.INTERFACE_PARAMETERS`, unless ``interfaces``), then the
    family's own flags (:data:`PARSED_FAMILY`), each from its
    parameter's declaration (:mod:`twinnet.model.schema`) under the family's heading. Other
    families' flags are taken only to be refused in one line naming the families they apply
    to. Without a family (:func:`scan`), every family's flags are taken as plain text."""
    # No argparse choices: a stray value after an unknown flag would land here and hide the
    # flag in argparse's message; the family is checked with the other values instead.
    words = family_words()
    parser.add_argument("family", nargs="?", metavar="FAMILY",
                        help=f"{', '.join(words)} (default {DEFAULT_FAMILY}); a preset or a "
                             "TOML file's 'topology' key may name it instead")
    parser.add_argument("--preset", choices=presets(), metavar="NAME",
                        help="start from a named instance of the papers: "
                             + ", ".join(presets()))
    parser.add_argument("--toml", type=parse.path, help="TOML file with configuration keys")
    shared = parser.add_argument_group("router (every family)")
    for each in RouterSizes.fields():
        if interfaces or each.name not in INTERFACE_PARAMETERS:
            add_flag(shared, each)
    word = PARSED_FAMILY.get()
    parser.set_defaults(network_family=None if word == EVERY else word)
    taken = {each.flag for each in RouterSizes.fields()}
    if word == EVERY:
        _list_every_family(parser)
    elif word is not None:
        family = words[word][0]
        group = parser.add_argument_group(f"{family.name} (FAMILY {word})")
        for each in _own_parameters(family):
            add_flag(group, each)
            taken.add(each.flag)
    for other in families().values():
        for each in _own_parameters(other):
            if each.flag not in taken:
                taken.add(each.flag)
                plain = isinstance(each.kind, schema.Flag)
                parser.add_argument(each.flag, dest=FOREIGN + each.flag, default=None,
                                    help=argparse.SUPPRESS,
                                    **({"action": "store_true"} if plain else {}))


def _list_every_family(parser) -> None:
    """Help without a FAMILY: each family's flags under its own heading, after the
    command's own text (wrapped here: the formatter keeps these sections as they are)."""
    sections = []
    for family in families().values():
        listing = argparse.ArgumentParser(usage=argparse.SUPPRESS, add_help=False)
        words = [word for word, (each, _) in family_words().items() if each is family]
        group = listing.add_argument_group(f"{family.name} (FAMILY {' or '.join(words)})")
        for each in _own_parameters(family):
            add_flag(group, each)
        sections.append(listing.format_help().strip("\n"))
    wrap = functools.partial(textwrap.fill, width=shutil.get_terminal_size().columns - 2)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = wrap(parser.description or "")
    parser.epilog = "\n\n".join([*sections, wrap(parser.epilog or "")])


def _help_family(argv: list[str]) -> str:
    """The family a help request names when its command line does not parse (a required
    option left out): a FAMILY word or a preset's, else :data:`EVERY`."""
    words, known = family_words(), presets()
    for before, word in zip(["", *argv], argv):
        if before == "--preset" and word in known:
            return known[word]["topology"]
        if word in words and not before.startswith("-"):
            return word
    return EVERY


def _own_parameters(family) -> list:
    """A family's parameters less the router sizes every family shares."""
    shared = {each.name for each in RouterSizes.fields()}
    return [each for each in family.configuration.parameters() if each.name not in shared]


def add_flag(group, each) -> None:
    """The flag of parameter ``each``: its text read by the kind's command-line form (ranges
    are checked with the TOML files' and presets' values, by the configuration)."""
    kind = each.kind
    options = {"dest": each.name, "default": None, "help": each.help,
               "metavar": each.flag.lstrip("-").upper().replace("-", "_")}
    if isinstance(kind, schema.Flag):
        options.pop("metavar")
        options["action"] = "store_true"
    elif isinstance(kind, schema.Choice) and kind.fold is None:
        options.update(choices=kind.choices, metavar=None)
    elif isinstance(kind, schema.Integer):
        options["type"] = parse.integer
    elif isinstance(kind, schema.Integers):
        options["type"] = parse.integer_list
    else:
        options["type"] = parse.name
    group.add_argument(each.flag, **options)


def scan(argv: list[str]) -> str | None:
    """The family word a network command's ``argv`` builds: its FAMILY word, else its
    preset's or TOML file's ``topology``, else :data:`DEFAULT_FAMILY`; :data:`EVERY` for a
    help request that names no family (its help lists every family's flags); None for a
    command that takes no network. Every family's flags are read as text here, so that the
    family is known before the real parser, which takes only its own, is built."""
    from .main import build_parser

    token = PARSED_FAMILY.set(None)
    try:
        parser = build_parser()
    finally:
        PARSED_FAMILY.reset(token)
    helping = bool({"-h", "--help"} & set(argv))
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            args, _ = parser.parse_known_args([w for w in argv if w not in ("-h", "--help")])
    except SystemExit:  # a bad or missing value: the real parser says so
        return _help_family(argv) if helping else DEFAULT_FAMILY
    if not hasattr(args, "preset"):
        return None
    try:
        sources = _sources(args)[0]
        if helping and args.family is None and len(sources) == 1:
            return EVERY
        return _family(args, sources, refuse_foreign=False)
    except (TypeError, ValueError):  # the real parse reports it
        return DEFAULT_FAMILY


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


def _sources(args) -> tuple[list[tuple[dict, dict]], str | None, str]:
    """The sources of values in order (the preset's, the TOML file's, the flags'), each
    ``(values, labels)``, with the preset's name and how it was given."""
    file_values = load_toml(args.toml) if args.toml else {}
    preset, preset_label = args.preset, "--preset"
    if preset is None and "preset" in file_values:
        preset, preset_label = file_values["preset"], f"{args.toml}: preset"
    file_values.pop("preset", None)
    sources = []
    if preset is not None:
        known = presets()
        if not isinstance(preset, str) or preset not in known:
            raise UsageError(f"{preset_label} must be one of {', '.join(known)}, "
                             f"not {preset!r}")
        sources.append((known[preset], {key: f"preset {preset} ({preset_label}): {key}"
                                        for key in known[preset]}))
    if file_values:
        sources.append((file_values, {key: f"{args.toml}: {key}" for key in file_values}))
    word = args.network_family
    own = _own_parameters(family_words()[word][0]) if word is not None else []
    flags, flag_labels = {}, {}
    for each in own + list(RouterSizes.fields()):
        value = getattr(args, each.name, None)
        if value is not None:
            flags[each.name], flag_labels[each.name] = value, each.flag
    sources.append((flags, flag_labels))
    return sources, preset, preset_label


def network_values(args) -> tuple[str, dict, dict]:
    """Merge preset, TOML file and flags (in that order): the family word and ``(values,
    labels)``, each value's label naming where it came from (``--k``, ``net.toml: k``,
    ``preset 2d-8x8: radices``)."""
    sources, preset, preset_label = _sources(args)
    word = _family(args, sources)
    family, fixed = family_words()[word]
    values, labels = {}, {}
    for source, source_labels in sources:
        family.merge(values, labels, source, source_labels)
    if preset is not None:
        family.keep_preset(preset, preset_label, values, labels)
    for key, value in fixed.items():
        given = values.get(key, value)
        if not isinstance(given, str) or given.strip().lower() != value:
            raise UsageError(f"{labels[key]} {given}: FAMILY {word} is the {family.name} "
                             f"family with {key} {value!r}: its {key} must be {value!r} (use "
                             f"FAMILY {family.name} for another)")
        values[key] = value
        labels.setdefault(key, f"FAMILY {word}")
    values.pop("topology", None)
    return word, values, labels


def _family(args, sources, *, refuse_foreign: bool = True) -> str:
    """The family word: the FAMILY argument, else the preset's or the TOML file's
    ``topology`` (:data:`DEFAULT_FAMILY` by default); another family's flags are refused."""
    words = family_words()
    word = args.family
    if word is not None and word not in words:
        raise UsageError(f"FAMILY {word!r}: must be one of {', '.join(words)}")
    for source, source_labels in sources:
        topology = source.get("topology")
        if topology is None:
            continue
        label = source_labels["topology"]
        if not isinstance(topology, str) or topology not in words:
            raise UsageError(f"{label} {topology!r}: must be one of {', '.join(words)}")
        if word is None:
            word = topology
        elif words[word][0] is not words[topology][0]:
            raise UsageError(f"{label} {topology}: the network is a {word} (FAMILY); a "
                             f"{words[topology][0].name} preset or file cannot describe it")
    word = word or DEFAULT_FAMILY
    foreign = {dest.removeprefix(FOREIGN): value for dest, value in vars(args).items()
               if refuse_foreign and dest.startswith(FOREIGN)
               and value is not None and value is not False}
    for flag, value in foreign.items():
        owners = [other.name for other in families().values()
                  if any(each.flag == flag for each in _own_parameters(other))]
        if words[word][0].name in owners:
            raise RuntimeError(f"{flag}: the parser was built without the {word} family's "
                               "flags (build it as twinnet.cli.main does, or call "
                               "network_from_words)")
        shown = "" if value is True else f" {value}"
        owner = " and ".join(filter(None, [", ".join(owners[:-1]), owners[-1]]))
        raise UsageError(f"{flag}{shown}: must not be given to the {word} family; it applies "
                         f"to {owner} only")
    return word


def flags_given(args, *, ignore=()) -> bool:
    """Whether ``args`` describe a network: a FAMILY word, a preset, a TOML file or a
    network flag other than those of ``ignore`` (parameter names): else a command may build
    its default."""
    dests = _network_dests() - set(ignore)
    return (args.family is not None or args.preset is not None or args.toml is not None
            or any(value is not None and value is not False
                   for dest, value in vars(args).items()
                   if dest.startswith(FOREIGN) or dest in dests))


def _network_dests() -> set[str]:
    return {each.name for family in families().values()
            for each in family.configuration.parameters()}


def network_from_words(words: list[str]):
    """The network configuration that network flags (``["king", "--side", "4"]``, as after
    ``twinnet gen``) describe, for scripts and tests: parsed as ``twinnet gen`` parses them."""
    from .main import build_parser

    token = PARSED_FAMILY.set(scan(["gen", *words]))
    try:
        args = build_parser().parse_args(["gen", *words])
    finally:
        PARSED_FAMILY.reset(token)
    return network_from_args(args)


def network_from_args(args):
    """The network configuration (of its family's configuration class) that the FAMILY,
    preset, TOML file and flags in ``args`` describe."""
    word, values, labels = network_values(args)
    return family_words()[word][0].network(values, labels)


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
