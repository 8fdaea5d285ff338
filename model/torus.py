"""k-ary n-cubes: tori (with wrap-around links) and meshes, with a radix per dimension.

Coordinates are digit tuples ``(o_0, …, o_{n-1})``; dimension 0 is X. Plain dimension-order
routing (DOR) corrects the lowest differing dimension first, in the shorter ring direction on a
torus (ties at exactly ``k/2`` go ``+``, the *positive tie rule*).
"""

import itertools
import math
from dataclasses import dataclass

from . import checks

Node = tuple[int, ...]

DIMENSION_NAMES = "XYZ"


def dimension_name(dim: int) -> str:
    """``X``, ``Y``, ``Z`` for the first three dimensions, then ``D3``, ``D4``, …"""
    return DIMENSION_NAMES[dim] if dim < len(DIMENSION_NAMES) else f"D{dim}"


def ring_direction(current: int, destination: int, k: int) -> int:
    """Direction (+1 or -1) of the shorter way from ``current`` to ``destination`` on a k-ring.

    ``aux = (d - c) mod k``; if ``aux > k/2`` (real division) it is taken as negative. A
    destination exactly ``k/2`` away goes ``+``; ``current == destination`` also gives ``+``.
    """
    aux = (destination - current) % k
    if 2 * aux > k:
        aux -= k
    return +1 if aux >= 0 else -1


def ring_distance(a: int, b: int, k: int) -> int:
    """Hops between positions ``a`` and ``b`` of a bidirectional ring of ``k`` nodes."""
    d = (b - a) % k
    return min(d, k - d)


class RadixShape:
    """What a configuration with per-dimension ``radices`` derives from them."""

    radices: tuple[int, ...]

    @property
    def n(self) -> int:
        return len(self.radices)

    @property
    def node_count(self) -> int:
        return math.prod(self.radices)


@dataclass(frozen=True)
class CubeTopology(RadixShape):
    """A k-ary n-cube with ``radices[i]`` nodes in dimension ``i``; a torus if ``wrap`` else a mesh.

    Raises ``ValueError`` for fewer than one dimension or a radix below 2.
    """

    radices: tuple[int, ...]
    wrap: bool = True

    def __post_init__(self):
        object.__setattr__(self, "radices", checks.check_int_tuple("radix", self.radices,
                                                                   minimum=2))


    def nodes(self):
        """Every node, in lexicographic order of its digits (X slowest)."""
        return itertools.product(*(range(k) for k in self.radices))

    def check_node(self, node, name: str = "node") -> Node:
        node = checks.check_int_tuple(name, node, length=self.n)
        for dim, (digit, k) in enumerate(zip(node, self.radices)):
            if not 0 <= digit < k:
                raise ValueError(f"{name} digit {dim} must be from 0 to {k - 1}, not {digit}")
        return node

    def neighbor(self, node: Node, dim: int, sign: int) -> Node | None:
        """The node one hop from ``node`` in dimension ``dim`` and direction ``sign``.

        ``None`` when the hop would leave a mesh.
        """
        digit = node[dim] + sign
        k = self.radices[dim]
        if not self.wrap and not 0 <= digit < k:
            return None
        return node[:dim] + (digit % k,) + node[dim + 1:]

    def distance(self, a: Node, b: Node) -> int:
        if self.wrap:
            return sum(ring_distance(x, y, k) for x, y, k in zip(a, b, self.radices))
        return sum(abs(x - y) for x, y in zip(a, b))

    def dor_direction(self, current: Node, destination: Node) -> tuple[int, int] | None:
        """``(dim, sign)`` of the next DOR hop, or ``None`` when ``current == destination``."""
        for dim, (c, d, k) in enumerate(zip(current, destination, self.radices)):
            if c != d:
                if self.wrap:
                    return dim, ring_direction(c, d, k)
                return dim, (+1 if d > c else -1)
        return None

    def dor_path(self, source: Node, destination: Node) -> list[tuple[Node, int, int]]:
        """The DOR hops from ``source`` to ``destination`` as ``(node, dim, sign)`` tuples."""
        hops = []
        current = source
        while (step := self.dor_direction(current, destination)) is not None:
            dim, sign = step
            hops.append((current, dim, sign))
            current = self.neighbor(current, dim, sign)
        return hops
