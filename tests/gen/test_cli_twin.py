"""The twin-torus analyses through the command line: text, JSON, errors."""

import json

import pytest

from twinnet.cli import demo
from twinnet.cli.main import main
from twinnet.families import presets
from twinnet.model.twin_network import TwinNetworkConfig


def run(capsys, *argv):
    try:
        status = main(list(argv))
    except SystemExit as exit_info:  # argparse's own errors
        status = exit_info.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_help_lists_the_analyses(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in ("twin-links", "twin-distance", "deadlock", "twin-path"):
        assert name in out


def test_twin_links_json_all_configurations(capsys):
    status, out, _ = run(capsys, "analyze", "twin-links", "--n", "3", "--k", "6", "--config",
                         "all", "--json")
    assert status == 0
    rows = {row["configuration"]: row["paths"] for row in json.loads(out)["rows"]}
    k = 6
    assert rows["D"] == (k**4 - 4 * k**2 + 4) // 4  # 003 Table 8, D, even k
    assert rows["A"] == (3 * k**4 - 8 * k**3 + 6 * k**2 + 4 * k + 4) // 4
    assert len(rows) == 10


def test_deadlock_text_and_json(capsys):
    status, out, _ = run(capsys, "analyze", "deadlock", "--n", "3", "--k", "4", "--config", "D",
                         "--mode", "vc")
    assert status == 0 and "deadlock-free" in out
    status, out, _ = run(capsys, "analyze", "deadlock", "--config", "A", "--mode", "none",
                         "--json")
    (row,) = json.loads(out)["rows"]
    assert row["deadlock_free"] is False and len(row["cycle"]) >= 2


def test_mixed_radix_and_explicit_configuration(capsys):
    status, out, _ = run(capsys, "analyze", "twin-distance", "--radix", "4,4,2", "--config",
                         "X+,Y+,X-", "--json")
    assert status == 0
    data = json.loads(out)
    assert data["pe_count"] == 64 and data["torus_2d"]["radices"] == [8, 8]


def test_twin_path(capsys):
    status, out, _ = run(capsys, "analyze", "twin-path", "--mode", "bubble", "--src", "0,0,0:0",
                         "--dst", "0,0,0:1", "--json")
    hops = json.loads(out)["hops"]
    assert [(h["out_port"], h["vc"]) for h in hops] == [("I", 2), ("PE", 0)]


@pytest.mark.parametrize("argv, message", [
    (["analyze", "twin-links", "--k", "1"], "twinnet: --k must be an integer >= 2, not 1"),
    (["analyze", "twin-links", "--n", "1"], "twinnet: --n must be an integer from 2 to 10, not 1"),
    (["analyze", "deadlock", "--config", "Q"],
     "twinnet: --config Q: configuration 'Q' is not one of"),
    (["analyze", "twin-links", "--config", "X+,Y+"],
     "twinnet: --config X+,Y+: card-0 port list must hold"),
    (["analyze", "twin-links", "--radix", "4,x"],
     "twinnet: analyze twin-links: argument --radix: expected comma-separated integers"),
    (["analyze", "twin-path", "--src", "0,0,0:2", "--dst", "0,0,0:0"],
     "twinnet: --src 0,0,0:2: pe must be one of 0, 1, not 2"),
    (["analyze", "twin-path", "--src", "0,0,5:0", "--dst", "0,0,0:0"],
     "twinnet: --src 0,0,5:0: node digit 2 must be from 0 to 3, not 5"),
])
def test_bad_input_is_one_line_and_nonzero(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.startswith(message) and err.count("\n") == 1


def test_demo_simulates_the_default_network():
    """The main job's network is the papers' 3DT 4x4x4 in configuration D with bubble flow
    control (the network suite simulates this same instance on both simulators)."""
    network = TwinNetworkConfig.from_dict(presets()[demo.DEFAULT_PRESET])
    assert network.topology.radices == (4, 4, 4)
    assert network.topology.configuration.label == "D" and network.topology.mode == "bubble"


@pytest.mark.parametrize("argv, message", [
    (["gen", "--k", "abc"], "twinnet: gen: argument --k: expected an integer (ASCII digits"),
    (["sim", "--simulator", "xyz"], "twinnet: sim: argument --simulator: invalid choice"),
    (["analyze", "deadlock", "--mode", "credit"],
     "twinnet: analyze deadlock: argument --mode: invalid choice"),
    ([], "twinnet: the following arguments are required: COMMAND"),
])
def test_argument_errors_are_one_line_too(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.startswith(message) and err.count("\n") == 1, err
