"""How the network flags, presets and TOML files combine: the family found first, its flags
taken, later sources over earlier ones, and one canonical configuration per network."""

import pytest

from twinnet.cli.gen_cmd import network_from_words
from twinnet.cli.main import main
from twinnet.model.fat_tree import FatTreeNetworkConfig
from twinnet.model.twisted_network import TwistedNetworkConfig


def test_plain_over_a_presets_split():
    network = network_from_words(["--preset", "ft-4x2", "--plain"])
    # (A preset's router is the split router without the bypass.)
    assert network.plain and network.name == "fattree_k4_n2_plain_d16_nobypass"
    # And a split over a plain file's switches, with the preset's buffers kept.
    network = network_from_words(["--preset", "ft-4x2", "--split", "paired"])
    assert network.split == "paired" and network.buffer_depth == 16


@pytest.mark.parametrize("words", [["--split", "plain", "--internal-ports", "2"],
                                   ["--plain", "--internal-ports", "2"]])
def test_internal_ports_of_a_plain_tree_are_refused(capsys, words):
    assert main(["gen", "fat-tree", *words]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--internal-ports 2" in error
    assert "a plain fat tree has no internal ports" in error


@pytest.mark.parametrize("command", [["gen"], ["draw"], ["board", "build"], ["sim"]])
def test_a_familys_help_lists_its_flags_with_or_without_required_options(capsys, command):
    with pytest.raises(SystemExit):
        main([*command, "king", "--help"])
    out = capsys.readouterr().out
    assert "king (FAMILY king):" in out and "--side SIDE" in out and "--radix" not in out
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert "king (FAMILY king):" in out and "twisted (FAMILY twisted):" in out


def test_one_configuration_per_network():
    """The same network given two ways is one configuration (equal, same hash, same
    parameters in the manifest)."""
    pairs = [
        (TwistedNetworkConfig, {"radices": [8, 4, 2], "twists": "YX=2,ZX=2"},
         {"radices": [8, 4, 2], "twists": "ZX=2,YX=2"}),
        (TwistedNetworkConfig, {"radices": [8, 4], "twists": "XY=4"}, {"radices": [8, 4]}),
        (TwistedNetworkConfig, {"twists": [[1, 0, 4]]}, {"twists": {"YX": 4}}),
        (FatTreeNetworkConfig, {"split": [5, 4, 1, 0]}, {"split": "0,1,4,5;0,1,4,5"}),
    ]
    for cls, a, b in pairs:
        first, second = cls.from_dict(a), cls.from_dict(b)
        assert first == second and hash(first) == hash(second)
        assert first.to_dict() == second.to_dict()


def test_a_list_per_stage_needs_every_stage():
    with pytest.raises(ValueError, match=r"give one α port list per stage \(2\), not 1"):
        FatTreeNetworkConfig.from_dict({"split": [[0, 1, 4, 5]]})


@pytest.mark.parametrize("words", [["--help", "king"], ["--preset", "002-kt16", "--help"],
                                   ["--toml", "net.toml", "--help"]])
def test_a_help_finds_the_family_wherever_it_is_named(capsys, tmp_path, monkeypatch, words):
    """The family of a help: a FAMILY word after ``--help``, a preset's or a TOML file's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "net.toml").write_text('family = "king"\nside = 4\n')
    with pytest.raises(SystemExit):
        main(["gen", *words])
    out = capsys.readouterr().out
    assert "king (FAMILY king):" in out and "twisted (FAMILY" not in out
