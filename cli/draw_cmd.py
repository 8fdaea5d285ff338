"""``twinnet draw``: a picture of a network, from the same preset/TOML/flags as ``twinnet gen``.

The drawing comes from the network's netlist (:meth:`twinnet.families.Family.netlist`:
the routers and the channels the generated Verilog joins), laid out by its family
(:meth:`~twinnet.families.Family.layout` places a box per router,
:meth:`~twinnet.families.Family.line` says how each cable is drawn; see
:mod:`twinnet.families.drawing`).
Each channel pair (a link's two directions) is one line, from the outline of one router's box
to the other's; cables that join the same two boxes fan out as arcs, so that each can be
followed.

Every router and link carries an SVG id (``router:<label>``, ``link:<legend>:<router>
<port>|<router> <port>``, the legend word the family gives the line) so that tools and tests
can read the drawing's structure.
"""

import sys
from pathlib import Path

from twinnet.families import drawing as shapes
from twinnet.families import family_for
from twinnet.gen import output

from . import args as parse
from . import gen_cmd
from .report import Report, add_json_flag

#: What ``--out`` may end with.
FORMATS = (".svg", ".png")
#: The widest and tallest drawing, in inches (at 150 dots per inch: 1,500 by 1,350 pixels),
#: and the text's largest size in points: a page that shows the picture 900 pixels wide still
#: shows the text about 10 pixels tall.
MAX_WIDTH, MAX_HEIGHT, FONT_SIZE = 10.0, 9.0, 9.0
#: How far apart (grid units) the arcs of cables that join the same two boxes stand.
FAN = 0.35


def register(commands) -> None:
    parser = commands.add_parser(
        "draw", help="draw a network's routers and links (SVG or PNG)",
        description="Draw a network of any family from the same preset, TOML and flags as "
                    "'twinnet gen', laid out by its family: every router a box, every link a "
                    "line between its two routers' boxes.",
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
    counts: dict[str, int] = {}
    for link in drawing["links"]:
        counts[link["legend"]] = counts.get(link["legend"], 0) + 1
    text = (f"{network.name}: {len(drawing['routers'])} routers, "
            + ", ".join(f"{n} {legend} links" for legend, n in counts.items() if n)
            + f" -> {out}")
    return Report(text, {"network": network.name, "family": family.name, "file": str(out),
                         "routers": len(drawing["routers"]),
                         "links": {legend: n for legend, n in counts.items() if n}})


# -- layout ------------------------------------------------------------------------------------

def layout(network, family) -> dict:
    """The drawing: ``routers`` (label → :class:`~twinnet.families.drawing.Box`) and
    ``links``, one per cable (a pair of opposite directed links): ``a``, ``b``, their
    ``ports``, ``legend``, ``colour`` and ``points`` (the two ends, on ``a``'s and ``b``'s
    boxes, and between them an arc's control point), and ``directed_links``, their count."""
    from twinnet.gen.fpga import unconverted

    with unconverted():  # the netlist's routers are only looked at, never converted
        netlist = family.netlist(network)
        boxes = family.layout(network, netlist)
        cables: dict[frozenset, dict] = {}
        for link in netlist.links:
            # A cable's two directions: a's port p to b's port q, and b's q to a's p.
            ends = frozenset({(link.source, link.source_port_label),
                              (link.target, link.target_port_label)})
            if ends not in cables:
                line = family.line(network, link, boxes)
                cables[ends] = {"a": link.source, "b": link.target,
                                "ports": (link.source_port_label, link.target_port_label),
                                "legend": line.legend, "colour": line.colour, "bend": line.bend}
        count = len(netlist.links)
        del netlist  # (its routers are let go here, where their warning is off)
    fans: dict[frozenset, int] = {}
    for cable in cables.values():
        pair = frozenset({cable["a"], cable["b"]})
        # The first cable between two boxes as the family draws it, the others fanned out to
        # alternate sides.
        order = fans[pair] = fans.get(pair, -1) + 1
        bend = cable.pop("bend") + FAN * ((order + 1) // 2) * (-1) ** order
        first, second = sorted((cable["a"], cable["b"]))
        points = shapes.path(boxes[first], boxes[second], bend)
        cable["points"] = points if first == cable["a"] else points[::-1]
    return {"routers": boxes, "links": list(cables.values()), "directed_links": count}


# -- rendering ---------------------------------------------------------------------------------

def render(drawing: dict, out: Path, title: str, loads: dict | None = None) -> None:
    """Write the drawing to ``out`` (SVG or PNG by its suffix), whole or not at all. With
    ``loads`` (a link's two ends, as :func:`layout` keys them, → its load in flits per cycle)
    each link is coloured and sized by its load, with a colour bar."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import cm, colors, patches, pyplot
    from matplotlib.path import Path as Curve

    routers = drawing["routers"]
    left = min(box.x - box.w / 2 for box in routers.values()) - 1
    right = max(box.x + box.w / 2 for box in routers.values()) + 1
    bottom = min(box.y - box.h / 2 for box in routers.values()) - 1
    top = max(box.y + box.h / 2 for box in routers.values()) + 1
    scale = min(1.0, MAX_WIDTH / (right - left), MAX_HEIGHT / (top - bottom))  # inch per unit
    figure, axis = pyplot.subplots(figsize=(max(4, (right - left) * scale),
                                            max(3, (top - bottom) * scale + 1)))
    shade = None
    if loads is not None:
        shade = cm.ScalarMappable(colors.Normalize(0, max(max(loads.values(), default=0), 1e-9)),
                                  "viridis")
    for link in drawing["links"]:
        gid = (f"link:{link['legend']}:{link['a']} {link['ports'][0]}|"
               f"{link['b']} {link['ports'][1]}")
        colour = link["colour"]
        width = 1.6 if link["legend"] == "internal" else 0.9
        if shade is not None:
            load = loads.get(frozenset({(link["a"], link["ports"][0]),
                                        (link["b"], link["ports"][1])}), 0)
            colour, width = shade.to_rgba(load), 0.5 + 3 * shade.norm(load)
        points = link["points"]
        codes = [Curve.MOVETO] + [Curve.CURVE3 if len(points) == 3 else Curve.LINETO] * (
            len(points) - 1)
        line = patches.PathPatch(Curve(points, codes), facecolor="none", edgecolor=colour,
                                 linewidth=width, zorder=1)
        line.set_gid(gid)
        axis.add_patch(line)
    # Text no larger than its box holds: a line of text per line of the box's height.
    points_per_unit = 72 * scale
    for label, box in routers.items():
        rectangle = patches.Rectangle((box.x - box.w / 2, box.y - box.h / 2), box.w, box.h,
                                      facecolor="#f2f2f2", edgecolor="#333333", linewidth=0.6,
                                      zorder=2)
        rectangle.set_gid(f"router:{label}")
        axis.add_patch(rectangle)
        lines = box.text.split("\n")
        size = min(FONT_SIZE, box.h * points_per_unit / (1.25 * len(lines)),
                   box.w * points_per_unit / (0.65 * max(len(line) for line in lines)))
        if box.text and size >= 4:
            axis.text(box.x, box.y, box.text, ha="center", va="center", fontsize=size,
                      linespacing=1.0, zorder=3)
    if shade is None:
        legends = {link["legend"]: link["colour"] for link in drawing["links"]}
        for legend, colour in legends.items():
            axis.plot([], [], color=colour, label=f"{legend} link")
        axis.legend(loc="upper center", bbox_to_anchor=(0.5, 0), ncol=len(legends),
                    fontsize=FONT_SIZE, frameon=False)
    else:
        bar = figure.colorbar(shade, ax=axis, fraction=0.04, pad=0.02)
        bar.set_label("flits per cycle (the busier direction)", fontsize=FONT_SIZE)
        bar.ax.tick_params(labelsize=FONT_SIZE)
    axis.set_xlim(left, right)
    axis.set_ylim(bottom, top)
    axis.set_aspect("equal")
    axis.axis("off")
    axis.set_title(title, fontsize=FONT_SIZE + 2)
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
    for channel in ("network", "internal"):
        values = [load["busy"] for load in link_loads if load["channel"] == channel]
        if values:
            axis.hist(values, bins=20, alpha=0.7, label=f"{channel} channels ({len(values)})")
    axis.set_xlabel("flits per cycle", fontsize=8)
    axis.set_ylabel("channels", fontsize=8)
    axis.tick_params(labelsize=7)
    axis.legend(fontsize=7)
    axis.set_title(f"{title}: channel loads", fontsize=9)
    save(figure, histogram)
    return histogram

