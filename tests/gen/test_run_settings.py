"""The settings of ``sim``, ``sweep``, ``demo`` and ``trace`` come from one declaration each
(:mod:`twinnet.sim_tb.settings`): every flag of those commands is a network flag, a declared
setting or one of the few file flags below; each setting's default and range is the
declaration's, in every command that takes it."""

import re

import pytest

from twinnet.cli.main import build_parser, main
from twinnet.sim_tb import settings
from twinnet.sim_tb.settings import SETTINGS, Point

#: Flags of these commands that are neither network flags nor settings: files a run writes
#: or reads, and the output form.
OTHER_FLAGS = {"--link-loads", "--trace", "--latencies", "--json", "--help"}
#: A command's own default for a setting (the only places a default is given twice).
OVERRIDES = {("demo", "packets"): 5000, ("demo", "check"): "hops", ("trace", "packets"): 1000}


def _defaults(name: str) -> dict:
    """The settings command ``name`` takes and their defaults, as its parser holds them."""
    required = ["--out", "made.trace"] if name == "trace" else []
    args, _ = build_parser(name).parse_known_args([name, *required])
    return args.setting_defaults


@pytest.mark.parametrize("command", ["sim", "sweep", "demo", "trace"])
def test_every_setting_default_is_the_declarations(command):
    taken = _defaults(command)
    assert taken, "the command takes settings"
    for name, value in taken.items():
        expected = OVERRIDES.get((command, name), settings.default(name))
        assert value == expected, (command, name)


@pytest.mark.parametrize("command", ["sim", "sweep", "demo", "trace"])
def test_every_flag_is_a_network_flag_a_setting_or_a_file(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", capsys.readouterr().out))
    from twinnet.cli.gen_cmd import family_flags
    from twinnet.model.sizes import RouterSizes

    network = {"--preset", "--toml"} | set(family_flags()) | {
        flag for each in RouterSizes.fields() for flag in each.flags}
    declared = {each.flag for each in SETTINGS.values() if each.flag}
    # (Flags named inside help texts are flags of the same commands, or of 'twinnet gen'.)
    stray = shown - network - declared - OTHER_FLAGS - {"--out", "--ni", "--broadcast"}
    assert not stray, stray
    own = {flag for flag in shown if flag in declared}
    assert {SETTINGS[name].flag for name in _defaults(command)} <= own


@pytest.mark.parametrize("command, flag, default", [
    ("sim", "--warmup", "1000"), ("sweep", "--warmup", "1000"), ("demo", "--warmup", "1000"),
    ("sim", "--seed", "1"), ("trace", "--seed", "1"), ("demo", "--check", "hops"),
    ("sim", "--check", "end-to-end"), ("sweep", "--loads", "0.05,0.1,0.15"),
])
def test_the_help_gives_the_default(command, flag, default, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    entries = re.split(r"\n  (?=-)", capsys.readouterr().out)
    entry = " ".join(next(e for e in entries if e.startswith(flag + " ")).split())
    assert f"(default {default}" in entry, entry


def test_a_point_holds_the_declared_defaults_and_checks_its_values():
    point = Point.from_dict({"rate": 0.1, "warmup": 5})
    assert (point.rate, point.warmup, point.measure) == (0.1, 5, settings.default("measure"))
    assert point.to_dict()["seed"] == settings.default("seed")
    with pytest.raises(ValueError, match="point warmup must be an integer from 0 to"):
        Point.from_dict({"warmup": -1})
    with pytest.raises(ValueError, match="point eject_ready 0.001: must be a probability"):
        Point.from_dict({"eject_ready": 0.001})
    with pytest.raises(ValueError, match="point key 'packets': unknown"):
        Point.from_dict({"packets": 10})


@pytest.mark.parametrize("lengths, message", [
    ([[1, 4]], r"must be a list of \[lo, hi, weight\]"),
    ("1-4", r"must be a list of \[lo, hi, weight\]"),
    ([[0, 4, 1]], "packet length 0-4: must be a length of at least 1"),
    ([[1, 2, -1]], "weight -1: must be a number of at least 0"),
    ([[1, 1, 0], [2, 2, 0]], "the weights are all 0"),
])
def test_a_points_length_mix_is_checked_as_the_mix_checks_it(lengths, message):
    assert Point.from_dict({"lengths": [[1, 4, 1], [6, 6, 0.5]]}).lengths == [[1, 4, 1],
                                                                             [6, 6, 0.5]]
    assert Point.from_dict({"lengths": None}).lengths is None
    with pytest.raises(ValueError, match=f"^point lengths .*: {message}"):
        Point.from_dict({"lengths": lengths})
