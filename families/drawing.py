"""What a family's drawing is made of (:meth:`twinnet.families.Family.layout` and
:meth:`~twinnet.families.Family.line`): a box per router, a line per cable (a link's two
directions), and the geometry that ends each line on its two routers' boxes.

Pure Python, so that a family supplies its drawing with its model part; ``twinnet draw``
(:mod:`twinnet.cli.draw_cmd`) renders it. Lengths are in grid units: a plain grid's routers
stand :func:`grid_point`'s spacing apart.
"""

import math
from dataclasses import dataclass

#: The colour of each legend word of a line a family may use (a family may give its own).
COLOURS = {"network": "#4c72b0", "mesh": "#4c72b0", "tree": "#4c72b0", "wrap": "#8c8c8c",
           "plane": "#55a868", "internal": "#c44e52"}
#: Room between two boxes of a grid, and the default box.
GAP, BOX_WIDTH, BOX_HEIGHT = 0.5, 0.8, 0.55


@dataclass(frozen=True)
class Box:
    """A router's box: centre ``x``, ``y``, width ``w``, height ``h``, the ``text`` written in
    it (lines split at newlines), and its ``group`` (the node or switch it is part of: a line
    between two boxes of one group is an internal link)."""

    x: float
    y: float
    w: float = BOX_WIDTH
    h: float = BOX_HEIGHT
    text: str = ""
    group: object = None

    def edge(self, toward: tuple[float, float]) -> tuple[float, float]:
        """Where the ray from the centre toward the point ``toward`` leaves the box."""
        dx, dy = toward[0] - self.x, toward[1] - self.y
        scales = [self.w / 2 / abs(dx) if dx else math.inf,
                  self.h / 2 / abs(dy) if dy else math.inf]
        scale = min(scales)
        if scale == math.inf:  # the point is the centre: any edge point will do
            return self.x + self.w / 2, self.y
        return self.x + scale * dx, self.y + scale * dy

    def on_edge(self, point: tuple[float, float], tolerance: float = 1e-6) -> bool:
        """``point`` lies on the box's outline."""
        across, up = abs(point[0] - self.x), abs(point[1] - self.y)
        inside = across <= self.w / 2 + tolerance and up <= self.h / 2 + tolerance
        return inside and (abs(across - self.w / 2) <= tolerance
                           or abs(up - self.h / 2) <= tolerance)


@dataclass(frozen=True)
class Line:
    """How a cable is drawn: its ``legend`` (the word the legend gives it), ``colour`` (by
    default the word's in :data:`COLOURS`) and ``bend``: 0 for a straight line, else an arc
    whose middle stands ``bend`` grid units to the side of the straight line (up, or right for
    a vertical one; a negative bend the other way)."""

    legend: str
    colour: str = ""
    bend: float = 0.0

    def __post_init__(self):
        if not self.colour:
            object.__setattr__(self, "colour", COLOURS.get(self.legend, COLOURS["network"]))


def path(first: Box, second: Box, bend: float) -> list[tuple[float, float]]:
    """The points of a line from ``first`` to ``second``: its two ends, each on its box's
    outline, and between them (for an arc) the control point of a quadratic curve whose middle
    stands ``bend`` to the side; the ends leave each box toward that control point."""
    dx, dy = second.x - first.x, second.y - first.y
    length = math.hypot(dx, dy) or 1.0
    normal = (-dy / length, dx / length)
    if normal[1] < 0 or (normal[1] == 0 and normal[0] < 0):
        normal = (-normal[0], -normal[1])
    if not bend:
        return [first.edge((second.x, second.y)), second.edge((first.x, first.y))]
    # A quadratic curve's middle lies halfway between its chord's middle and its control.
    control = ((first.x + second.x) / 2 + 2 * bend * normal[0],
               (first.y + second.y) / 2 + 2 * bend * normal[1])
    return [first.edge(control), control, second.edge(control)]


def circle(labels: list[str]) -> dict[str, Box]:
    """Boxes evenly round a circle, the first at the top and the next clockwise, about a
    grid spacing apart: any netlist can be drawn so, and a ring is drawn as a ring."""
    count = len(labels)
    radius = max(1.0, count * (BOX_WIDTH + GAP) / (2 * math.pi))
    return {label: Box(radius * math.sin(2 * math.pi * index / count),
                       radius * math.cos(2 * math.pi * index / count), text=label)
            for index, label in enumerate(labels)}


def coordinates(label: str) -> tuple[int, ...]:
    """A grid node's coordinates from its label ``x,y[,z]``."""
    return tuple(int(number) for number in label.split(","))


def grid_point(node: tuple[int, ...], radices: tuple[int, ...], width: float = BOX_WIDTH,
               height: float = BOX_HEIGHT) -> tuple[float, float]:
    """The centre of ``node`` (coordinates x, y[, z]) of a grid of ``radices``, for nodes
    ``width`` by ``height``: a 2-D grid as it is; a 3-D one in oblique projection, each Z
    plane a node and a gap up and to the right of the one before, and the nodes of a plane
    far enough apart that the planes' nodes never overlap and a plane's X and Y lines pass
    between the other planes' nodes (each Z link is then a short diagonal)."""
    planes = radices[2] if len(radices) > 2 else 1
    shift_x, shift_y = width + GAP, height + GAP
    z = node[2] if len(node) > 2 else 0
    y = node[1] if len(node) > 1 else 0
    return (node[0] * (planes * shift_x + GAP) + z * shift_x,
            y * (planes * shift_y + GAP) + z * shift_y)


def grid(labels: list[str], radices: tuple[int, ...]) -> dict[str, Box]:
    """A box per grid node (labels ``x,y[,z]``, each node its own group) at its
    :func:`grid_point`."""
    return {label: Box(*grid_point(coordinates(label), radices), text=label, group=label)
            for label in labels}


def grid_line(first: tuple[int, ...], second: tuple[int, ...], radices: tuple[int, ...],
              *, skewed: Line | None = None) -> Line:
    """The line between grid nodes ``first`` and ``second`` (different nodes): ``plane``
    between Z planes, ``mesh`` between neighbours (diagonals included), else ``wrap``, or
    ``skewed`` when given and the wrap link changes every coordinate (a twist); links that
    skip nodes are arcs, so that they pass beside the nodes they skip."""
    steps = [abs(p - q) for p, q in zip(first, second)]
    if any(steps[2:]):
        return Line("plane", bend=0.0 if max(steps) <= 1 else 0.9)
    if max(steps) <= 1:
        return Line("mesh")
    if skewed is not None and all(steps):
        return skewed
    return Line("wrap", bend=0.6)
