"""``twinnet analyze fat-tree / king / twist`` through the command line: text, JSON, errors."""

import json
import re

import pytest

from twinnet.cli.main import main


def run(capsys, *argv):
    try:
        status = main(list(argv))
    except SystemExit as exit_info:  # argparse's own errors
        status = exit_info.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("analysis", ["fat-tree", "king", "twist"])
def test_help(capsys, analysis):
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", analysis, "--help"])
    assert exit_info.value.code == 0
    assert "--json" in capsys.readouterr().out


def test_analyze_help_lists_the_families(capsys):
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in ("fat-tree", "king", "twist"))


# --- fat-tree ------------------------------------------------------------------------------------

def test_fat_tree_json(capsys):
    status, out, _ = run(capsys, "analyze", "fat-tree", "--k", "4", "--n", "3", "--json")
    assert status == 0
    data = json.loads(out)
    k, n = 4, 3
    for s in data["stages"]:
        through = k ** (n + 1) - k ** (s["stage"] + 2) if s["stage"] < n - 1 else 0
        assert s["forward"] == s["backward"] == [through, through]
        assert s["turnaround"] == [(k - 1) * k ** (s["stage"] + 1)] * 2
        crossings = k ** (n + 1) // 2 if s["stage"] < n - 1 else 0
        assert s["internal_crossings"] == [crossings, crossings]
    assert all(link["min"] == link["max"] for link in data["links"])
    assert data["deadlock"] == {"links": None, "links+internal": None}


def test_fat_tree_text_and_a_cyclic_split(capsys):
    status, out, _ = run(capsys, "analyze", "fat-tree", "--split", "down-alpha")
    assert status == 0
    assert "4-ary 2-tree: 16 terminals" in out and " 96 " in out
    status, out, _ = run(capsys, "analyze", "fat-tree", "--split", "0,1,6,7", "--json")
    assert json.loads(out)["deadlock"]["links+internal"] is not None


def test_fat_tree_random_routing_reports_its_seed(capsys):
    status, out, _ = run(capsys, "analyze", "fat-tree", "--routing", "random", "--seed", "5",
                         "--json")
    assert status == 0 and json.loads(out)["seed"] == 5


@pytest.mark.parametrize("argv, message", [
    (["--k", "3"], r"k must be even for the paired split .*not 3"),
    (["--split", "0,1,2"], r"alpha must hold exactly k = 4 of the 8 ports"),
    (["--split", "best"], r"--split best: must be optimal, paired, down-alpha or α.s ports"),
    (["--n", "0"], r"--n must be an integer from 1 to 9, not 0"),
])
def test_fat_tree_errors(capsys, argv, message):
    status, out, err = run(capsys, "analyze", "fat-tree", *argv)
    assert status == 2 and out == ""
    assert err.startswith("twinnet: ") and err.count("\n") == 1
    assert re.search(message, err)


# --- king ----------------------------------------------------------------------------------------

def test_king_json(capsys):
    status, out, _ = run(capsys, "analyze", "king", "--kind", "KT", "--side", "16", "--src",
                         "0,0", "--dst", "3,0", "--json")
    assert status == 0
    data = json.loads(out)
    assert data["diameter"] == 8 and data["cut_channels"] == 12 * 16
    assert data["average_distance"] == pytest.approx(5.344, abs=0.001)
    assert data["broadcast_exactly_once"] is True
    route = data["route"]
    assert route["record"] == [3, 0, 0, 0] and route["minimal_paths"] == 7  # 002 Fig. 5(a)
    assert route["escape_port"] == "x+" and route["grades"]["x+"] == 1


def test_king_deadlock_text(capsys):
    status, out, _ = run(capsys, "analyze", "king", "--kind", "KT", "--side", "5", "--deadlock")
    assert status == 0
    assert "escape network (plain): CYCLE of 5" in out
    assert "escape network (dateline): acyclic" in out
    assert "escape network (bubble): acyclic" in out


def test_diagonal_torus_route_lists_ties(capsys):
    status, out, _ = run(capsys, "analyze", "king", "--kind", "dt", "--side", "8", "--src",
                         "0,0", "--dst", "4,4")
    assert status == 0 and "tied records: (0, 0, 4), (0, 0, -4)" in out


@pytest.mark.parametrize("argv, message", [
    (["--side", "1"], "--side must be an integer from 2 to 64, not 1"),
    (["--kind", "XT"], "analyze king: argument --kind: invalid choice: 'XT' (choose from 'M', "
                        "'DM', 'KM', 'T', 'DT', 'KT') (see 'twinnet analyze king --help')"),
    (["--src", "0,0"], "--src 0,0 needs --dst: a routing query takes both"),
    (["--src", "0,0", "--dst", "0,9"], "--dst 0,9: node y must be from 0 to 7, not 9"),
    (["--src", "0", "--dst", "1,1"], "--src 0: a node is x,y (two numbers), not 1"),
])
def test_king_errors(capsys, argv, message):
    status, out, err = run(capsys, "analyze", "king", *argv)
    assert status == 2 and out == ""
    assert err == f"twinnet: {message}\n"


# --- twist ---------------------------------------------------------------------------------------

def test_twist_json_8x4(capsys):
    status, out, _ = run(capsys, "analyze", "twist", "--radices", "8,4", "--twist", "YX=4",
                         "--json")
    assert status == 0
    data = json.loads(out)
    assert data["diameter"] == 4 and data["average_distance"] == 2.625
    assert data["imbalance"] == 1.0 and data["twists"] == {"YX": 4}
    assert data["node_symmetric_by_theorem"] and data["moves_commute"]


def test_twist_text_not_node_symmetric(capsys):
    status, out, _ = run(capsys, "analyze", "twist", "--radices", "4,4", "--twist", "XY=-1",
                         "--twist", "YX=1")
    assert status == 0
    assert "node-symmetric by the Theorem: no" in out
    assert "unit moves commute at every node (brute force): no" in out


def test_twist_sweep(capsys):
    status, out, _ = run(capsys, "analyze", "twist", "--radices", "24,12", "--sweep", "YX",
                         "--json")
    assert status == 0
    data = json.loads(out)
    assert len(data["rows"]) == 24
    assert 12 in data["best"]["diameter"]["twists"]
    assert data["rows"][0]["diameter"] == 18  # untwisted: 12 + 6


@pytest.mark.parametrize("argv, message", [
    (["--radices", "4,1", "--twist", "YX=1"], "--radices[1] must be an integer >= 2, not 1"),
    (["--twist", "YX"], "--twist 'YX': a twist looks like YX=4"),
    (["--twist", "QX=1"], "--twist QX=1: twist 'QX' must name two dimensions of an N=2 torus"),
    (["--radices", "8,x"], "analyze twist: argument --radices: expected comma-separated "
                             "integers such as 4,4,2, not '8,x'"),
    (["--sweep", "YX", "--twist", "YX=1"], "--sweep YX tries every value of one twist"),
])
def test_twist_errors(capsys, argv, message):
    status, out, err = run(capsys, "analyze", "twist", *argv)
    assert status == 2 and out == ""
    assert err.startswith(f"twinnet: {message}") and err.count("\n") == 1
