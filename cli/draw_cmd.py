"""``twinnet draw``: a picture of a network, from the same preset/TOML/flags as ``twinnet gen``.

The drawing comes from the network's netlist (:meth:`twinnet.families.Family.netlist`:
the routers and the channels the generated Verilog joins) laid out per family:

- tori and twin tori on a grid of nodes, a 3-D torus as its Z planes side by side (a Z link
  as two stubs pointing to the other plane); a twin node is two cards with the internal link
  between them, each card labelled with the torus ports it holds; wrap-around links are arcs;
- fat trees by stage (leaves at the bottom), each twin switch as its two halves side by side
  with their internal links;
- king and diagonal meshes and tori on their grid, the diagonals drawn; wrap-around links as
  arcs;
- twisted tori on their grid, the twisted wrap links (which land on another column) drawn in
  their own colour.

Each channel pair (a link's two directions) is one line. Every router and link carries an SVG
id (``router:<label>``, ``link:<kind>:<router> <port>|<router> <port>``, kind ``mesh``,
``wrap``, ``twisted``, ``internal``, ``plane`` or ``tree``) so that tools and tests can read
the drawing's structure. Readable up to about 8x8x8 (as planes), 32x32 tori and 16x16 king
networks; larger networks are drawn all the same.
"""

import sys
from pathlib import Path

from twinnet.families import family_for
from twinnet.gen import output

from . import args as parse
from . import gen_cmd
from .report import Report, add_json_flag

#: What ``--out`` may end with.
FORMATS = (".svg", ".png")
#: Link kinds, and their colours.
COLOURS = {"mesh": "#4c72b0", "wrap": "#8c8c8c", "twisted": "#dd8452", "internal": "#c44e52",
           "tree": "#4c72b0", "plane": "#55a868"}


def register(commands) -> None:
    parser = commands.add_parser(
        "draw", help="draw a network's routers and links (SVG or PNG)",
        description="Draw a network of any family from the same preset, TOML and flags as "
                    "'twinnet gen': twin nodes as two cards with their internal link, fat "
                    "trees by stage with the two halves of each twin switch, king and "
                    "diagonal networks with their diagonals, twisted tori with their twisted "
                    "wrap links, 3-D tori as planes.",
        epilog="Network flags as for 'twinnet gen'. " + gen_cmd.limits_help())
    gen_cmd.add_network_args(parser)
    parser.add_argument("--out", type=parse.path, required=True,
                        help="the picture to write: FILE.svg or FILE.png")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def picture(flag: str, value) -> Path:
    """The picture file ``value`` of option ``flag``, checked: SVG or PNG by its name, not a
    folder, in a folder this can write in."""
    return output.file(value, flag, FORMATS)


def run(args) -> Report:
    out = picture("--out", args.out)
    network = gen_cmd.network_from_args(args)
    family = family_for(network)
    print(f"twinnet draw: {network.name} -> {out}", file=sys.stderr)
    drawing = layout(network, family)
    render(drawing, out, f"{network.name} ({family.name})")
    counts = {kind: sum(1 for link in drawing["links"] if link["kind"] == kind)
              for kind in COLOURS}
    text = (f"{network.name}: {len(drawing['routers'])} routers, "
            + ", ".join(f"{n} {kind} links" for kind, n in counts.items() if n)
            + f" -> {out}")
    return Report(text, {"network": network.name, "family": family.name, "file": str(out),
                         "routers": len(drawing["routers"]),
                         "links": {kind: n for kind, n in counts.items() if n}})


# -- layout ------------------------------------------------------------------------------------

def layout(network, family) -> dict:
    """The drawing: ``routers`` (label → dict of ``x``, ``y``, ``w``, ``h``, ``text``) and
    ``links`` (``a``, ``b``, their ``ports``, ``kind``), one per cable (a pair of opposite
    directed links), and ``directed_links``, their count."""
    from twinnet.gen.fpga import unconverted

    with unconverted():  # the netlist's routers are only looked at, never converted
        return _layout(family.netlist(network), family)


def _layout(netlist, family) -> dict:
    place = {"fat-tree": _tree_positions}.get(family.name, _grid_positions)
    routers = place(netlist)
    ports: dict[str, list[str]] = {label: [] for label in routers}
    links: dict[frozenset, dict] = {}
    for link in netlist.links:
        ports[link.source].append(link.source_port_label)
        # A cable's two directions: a's port p to b's port q, and b's q to a's p.
        ends = frozenset({(link.source, link.source_port_label),
                          (link.target, link.target_port_label)})
        links.setdefault(ends, {"a": link.source, "b": link.target,
                                "ports": (link.source_port_label, link.target_port_label),
                                "kind": _kind(family.name, routers, link.source,
                                              link.target)})
    for label, box in routers.items():
        if box.get("card"):
            box["text"] = ",".join(p for p in ports[label] if p != "I")
    return {"routers": routers, "links": list(links.values()),
            "directed_links": len(netlist.links)}


def _numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


def _grid_positions(netlist) -> dict:
    """Tori, twin tori, king and twisted networks: labels ``x,y[,z][/cN]``."""
    coordinates = {}
    for router in netlist.routers:
        node, _, card = router.label.partition("/")
        coordinates[router.label] = (_numbers(node), int(card[1:]) if card else None)
    cards = 1 + max((card or 0) for _, card in coordinates.values())
    width = max(c[0] for c, _ in coordinates.values()) + 1
    routers = {}
    for label, (node, card) in coordinates.items():
        node_label = label.partition("/")[0]
        x, y = node[0], node[1] if len(node) > 1 else 0
        plane = node[2] if len(node) > 2 else 0
        # A 3-D torus: its Z planes side by side, a column apart.
        x += plane * (width + 1)
        box = {"x": float(x), "y": float(y), "w": 0.7, "h": 0.5, "node": tuple(node),
               "text": node_label}
        if cards > 1:
            box.update(x=x - 0.2 + 0.4 * card, w=0.34, h=0.5, card=True)
        routers[label] = box
    return routers


def _tree_positions(netlist) -> dict:
    """Fat trees: labels ``<stage,digits>/half``; stage 0 (the leaves) at the bottom."""
    switches: dict[int, list[str]] = {}
    for router in netlist.routers:
        switch, _, half = router.label.partition("/")
        stage = int(switch.strip("<>").split(",")[0])
        if switch not in switches.setdefault(stage, []):
            switches[stage].append(switch)
    widest = max(len(row) for row in switches.values())
    routers = {}
    for router in netlist.routers:
        switch, _, half = router.label.partition("/")
        stage = int(switch.strip("<>").split(",")[0])
        row = switches[stage]
        spread = widest / len(row)
        x = (row.index(switch) + 0.5) * spread * 1.2
        halves = sorted({r.label.partition("/")[2] for r in netlist.routers
                         if r.label.startswith(switch + "/")})
        offset = (halves.index(half) - (len(halves) - 1) / 2) * 0.45 if half else 0
        routers[router.label] = {"x": x + offset, "y": 1.6 * stage, "w": 0.4, "h": 0.5,
                                 "node": switch, "text": half[:1] if half else ""}
    return routers


def _kind(family: str, routers: dict, a: str, b: str) -> str:
    """``internal`` (two halves of one node or switch), ``tree`` (a fat tree's up/down link),
    ``plane`` (a 3-D torus's Z link, between planes drawn apart), ``mesh`` (grid neighbours,
    diagonals included), ``twisted`` (a twisted torus's wrap link that lands on another
    column) or ``wrap``."""
    first, second = routers[a]["node"], routers[b]["node"]
    if first == second:
        return "internal"
    if family == "fat-tree":
        return "tree"
    steps = [abs(p - q) for p, q in zip(first, second)]
    if any(steps[2:]):
        return "plane"
    if max(steps) <= 1:
        return "mesh"
    return "twisted" if family == "twisted" and all(steps) else "wrap"


# -- rendering ---------------------------------------------------------------------------------

def render(drawing: dict, out: Path, title: str, loads: dict | None = None) -> None:
    """Write the drawing to ``out`` (SVG or PNG by its suffix), whole or not at all. With
    ``loads`` (a link's two ends, as :func:`layout` keys them, → its load in flits per cycle)
    each link is coloured and sized by its load, with a colour bar."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import cm, colors, patches, pyplot

    routers = drawing["routers"]
    xs = [box["x"] for box in routers.values()]
    ys = [box["y"] for box in routers.values()]
    span_x, span_y = max(xs) - min(xs) + 2, max(ys) - min(ys) + 2
    scale = min(0.9, 40 / max(span_x, span_y))
    figure, axis = pyplot.subplots(figsize=(max(4, span_x * scale), max(3, span_y * scale)))
    shade = None
    if loads is not None:
        shade = cm.ScalarMappable(colors.Normalize(0, max(max(loads.values(), default=0), 1e-9)),
                                  "viridis")
    for link in drawing["links"]:
        first, second = routers[link["a"]], routers[link["b"]]
        start, end = (first["x"], first["y"]), (second["x"], second["y"])
        gid = (f"link:{link['kind']}:{link['a']} {link['ports'][0]}|"
               f"{link['b']} {link['ports'][1]}")
        colour = COLOURS[link["kind"]]
        width = 1.6 if link["kind"] == "internal" else 0.8
        if shade is not None:
            load = loads.get(frozenset({(link["a"], link["ports"][0]),
                                        (link["b"], link["ports"][1])}), 0)
            colour, width = shade.to_rgba(load), 0.5 + 3 * shade.norm(load)
        if link["kind"] == "plane":
            # Two stubs under the routers, each pointing toward the other plane.
            direction = 0.45 if end[0] > start[0] else -0.45
            for number, (x, y, towards) in enumerate([(*start, direction),
                                                      (*end, -direction)]):
                line, = axis.plot([x, x + towards], [y - 0.32, y - 0.32],
                                  color=colour, linewidth=0.6 if shade is None else width,
                                  zorder=1)
                line.set_gid(f"{gid}#{number}")
            continue
        curved = link["kind"] in ("wrap", "twisted")
        arrow = patches.FancyArrowPatch(
            start, end, arrowstyle="-", color=colour, linewidth=width,
            connectionstyle=f"arc3,rad={0.25 if curved else 0}", zorder=1)
        arrow.set_gid(gid)
        axis.add_patch(arrow)
    small = len(routers) <= 128
    for label, box in routers.items():
        rectangle = patches.Rectangle((box["x"] - box["w"] / 2, box["y"] - box["h"] / 2),
                                      box["w"], box["h"], facecolor="#f2f2f2",
                                      edgecolor="#333333", linewidth=0.6, zorder=2)
        rectangle.set_gid(f"router:{label}")
        axis.add_patch(rectangle)
        if small and box["text"]:
            text = box["text"].replace(",", "\n") if box.get("card") else box["text"]
            axis.text(box["x"], box["y"], text, ha="center", va="center", fontsize=4,
                      zorder=3)
    if shade is None:
        for kind, colour in COLOURS.items():
            if any(link["kind"] == kind for link in drawing["links"]):
                axis.plot([], [], color=colour, label=f"{kind} link")
        axis.legend(loc="upper left", bbox_to_anchor=(1, 1), fontsize=7)
    else:
        bar = figure.colorbar(shade, ax=axis, fraction=0.04, pad=0.02)
        bar.set_label("flits per cycle (the busier direction)", fontsize=7)
        bar.ax.tick_params(labelsize=6)
    axis.set_xlim(min(xs) - 1, max(xs) + 1)
    axis.set_ylim(min(ys) - 1, max(ys) + 1)
    axis.set_aspect("equal")
    axis.axis("off")
    axis.set_title(title, fontsize=9)
    save(figure, out)


def save(figure, out: Path) -> None:
    """Write ``figure`` to ``out`` (SVG or PNG by its suffix), whole or not at all, and close
    it."""
    from matplotlib import pyplot

    figure.tight_layout()
    partial = out.with_name(f".{out.name}.partial")
    try:
        figure.savefig(partial, format=out.suffix[1:].lower(), dpi=150)
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
        pyplot.close(figure)


def load_map(network, family, link_loads: list[dict], out: Path, title: str) -> Path:
    """Draw ``network`` with each link coloured and sized by its measured load (``link_loads``
    of a traffic point: each link drawn once, at the load of its busier direction) into
    ``out``, and the histogram of every channel's load beside it (``<out>-histogram``, same
    format); return the histogram's path."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    drawing = layout(network, family)
    loads: dict[frozenset, float] = {}
    for load in link_loads:
        if "link" in load:
            ends = frozenset({(load["router"], load["port"]),
                              (load["to"]["router"], load["to"]["port"])})
            loads[ends] = max(loads.get(ends, 0), load["busy"])
    render(drawing, out, title, loads)
    histogram = out.with_name(f"{out.stem}-histogram{out.suffix}")
    figure, axis = pyplot.subplots(figsize=(5, 3))
    for kind in ("network", "internal"):
        values = [load["busy"] for load in link_loads if load["kind"] == kind]
        if values:
            axis.hist(values, bins=20, alpha=0.7, label=f"{kind} channels ({len(values)})")
    axis.set_xlabel("flits per cycle", fontsize=8)
    axis.set_ylabel("channels", fontsize=8)
    axis.tick_params(labelsize=7)
    axis.legend(fontsize=7)
    axis.set_title(f"{title}: channel loads", fontsize=9)
    save(figure, histogram)
    return histogram

