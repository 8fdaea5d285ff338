"""``twinnet gen``: configuration (flags, a TOML file or a preset) → Verilog and a manifest."""

import argparse
import copy
import dataclasses
import functools
import json
import shutil
import sys
import textwrap
import time
from pathlib import Path

from twinnet.errors import UsageError
from twinnet.families import default_family, families, family_words, presets
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
from .parser import ArgumentParser
from .report import Report, add_json_flag

#: :func:`family_help`'s word for a help that lists every family's flags, each under its
#: heading.
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
    :data:`~twinnet.model.sizes.INTERFACE_PARAMETERS`, unless ``interfaces``), then every
    family's own flags (:func:`family_flags`), each from its parameter's declaration
    (:mod:`twinnet.model.schema`). The command line is parsed once, with all of them: the
    family is known only after the parse (a preset or a TOML file may name it), and then
    :func:`network_values` takes its flags and refuses other families' in one line naming the
    families they apply to. A help request lists the flags of the family it names, or of
    every family, each under its heading (:func:`family_help`, built only then)."""
    # No argparse choices: a stray value after an unknown flag would land here and hide the
    # flag in argparse's message; the family is checked with the other values instead.
    words = family_words()
    parser.add_argument("family", nargs="?", metavar="FAMILY",
                        help=f"{', '.join(words)} (default {default_family().name}); a preset "
                             "or a TOML file's 'family' key may name it instead")
    parser.add_argument("--preset", choices=presets(), metavar="NAME",
                        help="start from a named instance of the papers: "
                             + ", ".join(presets()))
    parser.add_argument("--toml", type=parse.path, help="TOML file with configuration keys")
    shared = parser.add_argument_group("router (every family)")
    for each in RouterSizes.fields():
        if interfaces or each.name not in INTERFACE_PARAMETERS:
            add_flag(shared, each)
    for each in family_flags().values():
        add_flag(parser, each, help=argparse.SUPPRESS)
    parser.set_defaults(help_text=family_help)


@functools.cache
def family_flags() -> dict[str, schema.Parameter]:
    """Every family's own flags, flag → the parameter the command line takes it as: the first
    family's that declares it. Two families may declare the same flag (``--vcs``); where they
    read it differently (``--escape`` with other choices), it is taken as text and read by
    the family's own form once the family is known (:func:`_flag_values`). A flag that is
    plain in one family and takes a value in another cannot be shared."""
    flags, owners = {}, {}
    for family in families().values():
        for each in _own_parameters(family):
            first = flags.setdefault(each.flag, each)
            owners.setdefault(each.flag, family.name)
            if _form(first) == _form(each):
                continue
            if "action" in _form(first) or "action" in _form(each):
                raise TypeError(f"{each.flag}: the {owners[each.flag]} family declares it "
                                f"{_flag_kind(first)}, the {family.name} family "
                                f"{_flag_kind(each)}; a flag two families share must take a "
                                "value in both or in neither")
            flags[each.flag] = dataclasses.replace(first, domain=schema.Text(_as_given, "text"))
    return flags


def _flag_kind(each) -> str:
    return "as a plain flag" if "action" in _form(each) else "with a value"


def _as_given(label: str, value):
    return value


def family_help(parser, argv: list[str]) -> str:
    """``parser``'s help for a help request ``argv``: the family's own flags under its
    heading after the command's text (every family's when ``argv`` names none), from a
    parser built for the listing alone (the command's keeps them out of its help: they are
    the same flags for every family)."""
    word = _help_family(argv)
    chosen = (families().values() if word == EVERY else [family_words()[word][0]])
    sections = []
    for family in chosen:
        listing = argparse.ArgumentParser(usage=argparse.SUPPRESS, add_help=False)
        words = [each for each, (owner, _) in family_words().items() if owner is family]
        if word != EVERY:
            words = [word]
        group = listing.add_argument_group(f"{family.name} (FAMILY {' or '.join(words)})")
        for each in _own_parameters(family):
            add_flag(group, each)
        sections.append(listing.format_help().strip("\n"))
    wrap = functools.partial(textwrap.fill, width=shutil.get_terminal_size().columns - 2)
    shown = copy.copy(parser)
    shown.formatter_class = argparse.RawDescriptionHelpFormatter
    shown.description = wrap(parser.description or "")
    shown.epilog = "\n\n".join([*sections, wrap(parser.epilog or "")])
    return shown.format_help()


def _help_family(argv: list[str]) -> str:
    """The family word a help request names: a FAMILY word, a preset's or a TOML file's
    ``family``, else :data:`EVERY` (the request is not parsed: a required option may be
    left out, and the family's flags are what the help is for)."""
    words, known = family_words(), presets()
    for before, word in zip(["", *argv], argv):
        if before == "--preset" and word in known:
            return known[word]["family"]
        if before == "--toml":
            try:
                named = output.read_toml(Path(word), "--toml").get("family")
            except UsageError:
                continue
            if named in words:
                return named
        if word in words and (not before.startswith("-") or before in ("-h", "--help")):
            return word
    return EVERY


def _own_parameters(family) -> list:
    """A family's parameters less the router sizes every family shares."""
    shared = {each.name for each in RouterSizes.fields()}
    return [each for each in family.configuration.parameters() if each.name not in shared]


def add_flag(group, each, *, help: str | None = None) -> None:
    """The flag of parameter ``each``: its text read by its domain's command-line form (ranges
    are checked with the TOML files' and presets' values, by the configuration); ``help``
    replaces the parameter's own (``argparse.SUPPRESS`` leaves the flag out of the help)."""
    options = {"dest": each.name, "default": None, "help": each.help if help is None else help,
               "metavar": each.flag.lstrip("-").upper().replace("-", "_"), **_form(each)}
    if "action" in options or "choices" in options:
        options.pop("metavar")
    group.add_argument(each.flag, **options)


def _form(each) -> dict:
    """How the command line reads parameter ``each``'s flag: argparse's ``action``,
    ``choices`` or ``type``."""
    domain = each.domain
    if isinstance(domain, schema.Flag):  # (argparse adds the --no-<flag> of each.flags)
        return {"action": argparse.BooleanOptionalAction if each.negatable else "store_true"}
    if isinstance(domain, schema.Choice) and domain.fold is None:
        return {"choices": domain.choices}
    if isinstance(domain, schema.Integer):
        return {"type": parse.integer}
    if isinstance(domain, schema.Integers):
        return {"type": parse.integer_list}
    if isinstance(domain, schema.Number):
        return {"type": parse.number}
    if isinstance(domain, schema.Numbers):
        return {"type": parse.number_list}
    if isinstance(domain, schema.Path):
        return {"type": parse.path}
    return {"type": parse.name}


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
    sources.append(({}, {}))
    return sources, preset, preset_label


def _flag_values(args, word: str) -> tuple[dict, dict]:
    """The values of family ``word``'s flags and the shared router sizes' given in ``args``,
    and their labels (the flags)."""
    flags, labels = {}, {}
    for each in _own_parameters(family_words()[word][0]) + list(RouterSizes.fields()):
        taken = family_flags().get(each.flag, each)
        value = getattr(args, taken.name, None)
        if value is not None and _form(taken) != _form(each):
            value = _read(each, value)
        if value is not None:
            flags[each.name], labels[each.name] = value, each.flag
    return flags, labels


def _read(each, text: str):
    """A shared flag's text read as parameter ``each`` (its family's) reads it, with
    argparse's message for a bad one."""
    form = _form(each)
    if "choices" in form and text not in form["choices"]:
        shown = ", ".join(map(repr, form["choices"]))
        raise UsageError(f"argument {each.flag}: invalid choice: {text!r} (choose from "
                         f"{shown})")
    try:
        return form["type"](text) if "type" in form else text
    except argparse.ArgumentTypeError as error:
        raise UsageError(f"argument {each.flag}: {error}") from None


def network_values(args) -> tuple[str, dict, dict]:
    """Merge preset, TOML file and flags (in that order): the family word and ``(values,
    labels)``, each value's label naming where it came from (``--k``, ``net.toml: k``,
    ``preset 2d-8x8: radices``)."""
    sources, preset, preset_label = _sources(args)
    word = _family(args, sources)
    sources[-1] = _flag_values(args, word)
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
    values.pop("family", None)
    return word, values, labels


def _family(args, sources) -> str:
    """The family word: the FAMILY argument, else the preset's or the TOML file's
    ``family`` (by default, the default family's name); another family's flags are
    refused."""
    words = family_words()
    word = args.family
    if word is not None and word not in words:
        raise UsageError(f"FAMILY {word!r}: must be one of {', '.join(words)}")
    for source, source_labels in sources:
        named = source.get("family")
        if named is None:
            continue
        label = source_labels["family"]
        if not isinstance(named, str) or named not in words:
            raise UsageError(f"{label} {named!r}: must be one of {', '.join(words)}")
        if word is None:
            word = named
        elif words[word][0] is not words[named][0]:
            raise UsageError(f"{label} {named}: the network is a {word} (FAMILY); a "
                             f"{words[named][0].name} preset or file cannot describe it")
    word = word or default_family().name
    own = {each.flag for each in _own_parameters(words[word][0])}
    for flag, each in family_flags().items():
        value = getattr(args, each.name, None)
        if flag in own or not _given(value):
            continue
        owners = [other.name for other in families().values()
                  if any(mine.flag == flag for mine in _own_parameters(other))]
        shown = "" if value is True else f" {value}"
        owner = " and ".join(filter(None, [", ".join(owners[:-1]), owners[-1]]))
        raise UsageError(f"{flag}{shown}: must not be given to the {word} family; it applies "
                         f"to {owner} only")
    return word


def flags_given(args, *, ignore=()) -> bool:
    """Whether ``args`` describe a network: a FAMILY word, a preset, a TOML file or a
    network flag other than those of ``ignore`` (parameter names): else a command may build
    its default."""
    dests = ({each.name for each in RouterSizes.fields()}
             | {each.name for each in family_flags().values()}) - set(ignore)
    return (args.family is not None or args.preset is not None or args.toml is not None
            or any(_given(getattr(args, dest, None)) for dest in dests))


def _given(value) -> bool:
    """A flag's value that was given: not None (a value flag's default), nor False (a plain
    flag's; ``0`` is a value given)."""
    return value is not None and value is not False


def network_from_words(words: list[str]):
    """The network configuration that network flags (``["king", "--side", "4"]``, as after
    ``twinnet gen``) describe, for scripts and tests: parsed as ``twinnet gen`` parses them."""
    parser = ArgumentParser(prog="twinnet gen")
    add_network_args(parser)
    return network_from_args(parser.parse_args(words))


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
