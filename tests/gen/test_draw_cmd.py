"""``twinnet draw``: the drawing's structure, read back from the SVG's ids, against hand counts
of each family's routers and links; every preset lays out; PNG too; bad ``--out`` values."""

import re
from collections import Counter

import pytest

from twinnet.cli.draw_cmd import layout
from twinnet.cli.gen_cmd import network_from_words
from twinnet.cli.main import main
from twinnet.families import family_for, presets
from twinnet.gen.fpga import unconverted

#: (flags, routers, link kinds): hand counts.
CASES = {
    # 18 nodes of two cards; X and Y rings of 3 (2 mesh links and a wrap each, 6 rings per
    # dimension); Z of radix 2: two links between each pair of planes' nodes (9 pairs).
    "twin-torus": (["twin-torus", "--radix", "3,3,2"], 36,
                   {"mesh": 24, "wrap": 12, "plane": 18, "internal": 18}),
    # 4x4 plain torus: 8 rings of 4, each 3 mesh links and a wrap.
    "torus": (["torus", "--radix", "4,4"], 16, {"mesh": 24, "wrap": 8}),
    # 2-ary 3-tree: 4 switches per stage, the two lower stages twin switches (two halves
    # and an internal link each), the top stage one half each; 8 PEs, each stage boundary
    # carries 8 links.
    "fat-tree": (["fat-tree", "--k", "2", "--n", "3"], 20, {"internal": 8, "tree": 16}),
    # KT4: 8 neighbours each, 64 links; inside the grid 12 + 12 straight and 2 x 9
    # diagonals, the other 22 wrap.
    "king": (["king", "--kind", "KT", "--side", "4"], 16, {"mesh": 42, "wrap": 22}),
    # 4x2 with t_YX = 2: 2 X rings of 4 (3 mesh + 1 wrap), 4 straight Y links and 4 Y wraps
    # that land two columns over.
    "twisted": (["twisted", "--radix", "4,2", "--twist", "YX=2"], 8,
                {"mesh": 10, "wrap": 2, "twisted": 4}),
}


def ids(svg: str, prefix: str) -> list[str]:
    return re.findall(rf'id="({prefix}:[^"]+)"', svg)


@pytest.mark.parametrize("family", sorted(CASES))
def test_drawing_structure(family, tmp_path, capsys):
    flags, routers, kinds = CASES[family]
    out = tmp_path / "net.svg"
    assert main(["draw", *flags, "--out", str(out)]) == 0
    svg = out.read_text()
    assert len(set(ids(svg, "router"))) == routers
    # A 3-D torus's Z link is two stubs (#0, #1), one element each.
    links = {name.split("#")[0] for name in ids(svg, "link")}
    assert Counter(name.split(":")[1] for name in links) == kinds
    assert f"{routers} routers" in capsys.readouterr().out


def test_png_is_written_whole(tmp_path):
    out = tmp_path / "net.png"
    assert main(["draw", "king", "--kind", "DT", "--side", "5", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [path.name for path in tmp_path.iterdir()] == ["net.png"]  # no partial file left


@pytest.mark.parametrize("preset", sorted(presets()))
def test_every_preset_lays_out(preset):
    """Every router drawn once and every netlist link (one direction of a cable) in exactly
    one drawn link with its reverse."""
    network = network_from_words(["--preset", preset])
    family = family_for(network)
    drawing = layout(network, family)
    with unconverted():  # (the routers go when the block ends)
        netlist = family.netlist(network)
        labels = [router.label for router in netlist.routers]
        links = len(netlist.links)
        del netlist
    assert set(drawing["routers"]) == set(labels)
    assert 2 * len(drawing["links"]) == links
    # The count the size checks use without building routers.
    assert family.router_count(network) == len(labels)


def test_router_count_of_a_plain_fat_tree():
    network = network_from_words(["fat-tree", "--k", "4", "--n", "3", "--plain"])
    family = family_for(network)
    with unconverted():
        assert family.router_count(network) == len(family.netlist(network).routers) == 3 * 16


@pytest.mark.parametrize("out, message", [
    ("net.pdf", r"--out .*net\.pdf: must end with \.svg or \.png"),
    (".", r"--out \.: must end with"),
    ("missing/net.svg", r"--out missing/net\.svg: missing is not a folder"),
])
def test_bad_out_is_one_line(out, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["draw", "torus", "--radix", "4,4", "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith("twinnet: ") and err.count("\n") == 1, err
    assert re.search(message, err), err
    assert not any(tmp_path.iterdir())
