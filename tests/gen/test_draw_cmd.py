"""``twinnet draw``: the drawing's structure, read back from the SVG's ids, against hand counts
of each family's routers and links; every link of the netlist drawn between its two routers'
boxes, for every family (the ring from ``examples/ring`` too); every preset lays out; PNG
too; bad ``--out`` values."""

import re
from collections import Counter
from pathlib import Path

import pytest

from twinnet.cli.draw_cmd import layout, render
from twinnet.cli.gen_cmd import network_from_words
from twinnet.cli.main import main
from twinnet.families import drawing, family_for, presets
from twinnet.gen.fpga import unconverted

RING = Path(__file__).resolve().parents[2] / "examples" / "ring"

#: (flags, routers, link legends): hand counts.
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
    flags, routers, legends = CASES[family]
    out = tmp_path / "net.svg"
    assert main(["draw", *flags, "--out", str(out)]) == 0
    svg = out.read_text()
    assert len(set(ids(svg, "router"))) == routers
    links = ids(svg, "link")
    assert len(links) == len(set(links))
    assert Counter(name.split(":")[1] for name in links) == legends
    assert f"{routers} routers" in capsys.readouterr().out


def _network(name, monkeypatch):
    """The network and family of case ``name``: a :data:`CASES` key, or ``ring`` (the example
    plug-in, imported from its folder: 6 nodes)."""
    if name == "ring":
        monkeypatch.syspath_prepend(str(RING))
        from twinnet_ring import RingFamily

        family = RingFamily()
        return family.network({"nodes": 6}), family
    network = network_from_words(CASES[name][0])
    return network, family_for(network)


@pytest.mark.parametrize("name", [*sorted(CASES), "ring"])
def test_every_link_ends_on_its_two_routers_boxes(name, tmp_path, monkeypatch):
    """Each directed link of the netlist is in exactly one drawn line, with its reverse, and
    that line starts on the outline of its first router's box and ends on the other's; the
    SVG has each line once."""
    network, family = _network(name, monkeypatch)
    picture = layout(network, family)
    boxes = picture["routers"]
    drawn = {frozenset({(link["a"], link["ports"][0]), (link["b"], link["ports"][1])}): link
             for link in picture["links"]}
    with unconverted():
        netlist = family.netlist(network)
        directed = [(link.source, link.source_port_label, link.target, link.target_port_label)
                    for link in netlist.links]
        labels = {router.label for router in netlist.routers}
        del netlist
    assert set(boxes) == labels
    assert 2 * len(drawn) == len(directed) == picture["directed_links"]
    for source, source_port, target, target_port in directed:
        link = drawn[frozenset({(source, source_port), (target, target_port)})]
        start, end = link["points"][0], link["points"][-1]
        assert boxes[link["a"]].on_edge(start), (link, boxes[link["a"]])
        assert boxes[link["b"]].on_edge(end), (link, boxes[link["b"]])
        assert {link["a"], link["b"]} == {source, target}
    render(picture, tmp_path / "net.svg", name)
    svg_links = ids((tmp_path / "net.svg").read_text(), "link")
    assert len(svg_links) == len(set(svg_links)) == len(drawn)


def test_the_ring_is_drawn_as_a_ring(monkeypatch):
    """The contract's default layout: 6 routers evenly round a circle, so every link of the
    ring (node to node + 1) is as long as every other."""
    network, family = _network("ring", monkeypatch)
    picture = layout(network, family)
    boxes = picture["routers"]
    centre = [sum(box.x for box in boxes.values()) / 6, sum(box.y for box in boxes.values()) / 6]
    radii = {round(((box.x - centre[0]) ** 2 + (box.y - centre[1]) ** 2) ** 0.5, 9)
             for box in boxes.values()}
    assert len(radii) == 1
    assert {link["legend"] for link in picture["links"]} == {"network"}


def test_a_box_outline_is_told_from_its_inside():
    """The check above can fail: the centre and a point beyond the box are not on its outline;
    a line's ends are, straight or bent."""
    box = drawing.Box(0, 0, 2, 1)
    assert box.on_edge((1, 0.2)) and box.on_edge((-0.3, -0.5))
    assert not box.on_edge((0, 0)) and not box.on_edge((1.5, 0)) and not box.on_edge((1, 0.7))
    other = drawing.Box(5, 3, 1, 1)
    for bend in (0, 0.8, -0.4):
        points = drawing.path(box, other, bend)
        assert box.on_edge(points[0]) and other.on_edge(points[-1])


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
