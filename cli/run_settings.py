"""The flags of a simulation run's settings (``sim``, ``sweep``, ``demo``, ``trace``), each
from its declaration in :mod:`twinnet.sim_tb.settings`: the flag's form, help, range and
default are the declaration's; a command may give a setting another default (``demo`` checks
hops), and only there.

argparse leaves each setting None when its flag is not given; :func:`resolve` then puts in
each the value checked by its declaration's domain, or the default, and records which flags
were given (:func:`given`), for the rules between settings that each command applies.
"""

from twinnet.errors import UsageError
from twinnet.model import schema
from twinnet.model.traffic import PATTERNS
from twinnet.sim_tb import settings

from .gen_cmd import add_flag


def add_settings(parser, names, **defaults) -> None:
    """Flags for the settings ``names`` (in that order), with ``defaults`` (name → value)
    replacing the declarations' for this command."""
    own = dict(parser.get_default("setting_defaults") or {})
    for name in names:
        each = settings.SETTINGS[name]
        default = defaults[name] if name in defaults else settings.default(name)
        add_flag(parser, each, help=_help(each, default, name in defaults))
        own[name] = default
    parser.set_defaults(setting_defaults=own)


def _help(each: schema.Parameter, default, replaced: bool) -> str:
    """A setting's help: its text, what it allows (a range) and its default."""
    text = each.help
    if isinstance(each.domain, (schema.Integer, schema.Number, schema.Integers,
                              schema.Numbers)):
        text += f"; {each.domain.allowed()}"
    if isinstance(each.domain, schema.Flag) or default is None or (
            callable(each.default) and not replaced):
        return text
    shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
    return f"{text} (default {shown})"


def resolve(args) -> None:
    """Each setting of the command: the value given, or the command's default, as its
    declaration holds it (a path as a path), checked (one line naming the flag, the value
    and what is allowed)."""
    taken = args.setting_defaults
    args.given_settings = frozenset(name for name in taken if getattr(args, name) is not None)
    for name, default in taken.items():
        value = default if getattr(args, name) is None else getattr(args, name)
        setattr(args, name, None if value is None else settings.check(name, value))


def refuse_unrated(args, missing: str, taker: str) -> None:
    """Refuse ``--traffic all-pairs`` (one packet per pair, at no rate) where a command needs
    a rate: ``missing`` says what the pattern lacks, ``taker`` who takes the rest."""
    if args.pattern == "all-pairs":
        raise UsageError(f"--traffic all-pairs: sends one packet per pair, with no {missing}; "
                         f"{taker} takes one of "
                         + ", ".join(p for p in PATTERNS if p != "all-pairs"))


def given(args, name: str) -> bool:
    """Whether setting ``name``'s flag was given (after :func:`resolve`)."""
    return name in args.given_settings
