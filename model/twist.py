"""Twisted tori: N-dimensional tori whose peripheral links may be twisted (004 §II–IV).

Twist ``t_JK`` (J ≠ K): the peripheral link of dimension J from ``(…, x_J = d_J-1, x_K, …)``
lands on ``(…, x_J = 0, x_K + t_JK mod d_K, …)`` (004 §II, whose "mod K" means mod d_K); other
coordinates are unchanged, and several twists of the same J apply together. Dimension 0 is X
(see :func:`torus.dimension_name`).

Metrics (004 §II, computed as in §III) come from breadth-first search, averaged over all
ordered pairs of nodes, a node to itself included (a choice of this project): diameter, average
distance k̄, per-dimension average distance k̄_i (hops taken in dimension i, averaged over *all*
shortest paths of a pair — counted by dynamic programming over the BFS DAG, never by
enumerating paths), the maximum of the k̄_i and the imbalance ``N · max_i k̄_i / k̄`` with N the
number of dimensions. Averages are exact fractions.

Node symmetry, in the paper's sense (routing from coordinate differences works): the Theorem
of 004 §IV says a torus is not node-symmetric when some dimension J both receives a twist
(t_IJ ≠ 0) and applies one (t_JK ≠ 0). Conversely, when no dimension does both, the torus is
the Cayley graph of Z^N modulo the lattice spanned by ``d_J e_J − Σ_K t_JK e_K`` (the box of
coordinates is a transversal because every twisted-over dimension K is reduced by a plain
``d_K e_K``), so translations are automorphisms and one BFS source suffices. The brute-force
check (:func:`non_commuting_moves`) tests the same property directly: unit moves commute at
every node iff routing records are order-independent.
"""

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from . import checks
from .torus import RadixShape, dimension_name

Node = tuple[int, ...]
METRICS = ("diameter", "average_distance", "max_dimension_distance", "imbalance")


def parse_dimension_pair(text: str, n: int) -> tuple[int, int]:
    """``"YX"`` → ``(1, 0)``; names are X, Y, Z, D3, D4, … Raises ``ValueError``."""
    names = [dimension_name(d) for d in range(n)]
    for j, name_j in enumerate(names):
        for k, name_k in enumerate(names):
            if text.strip().upper() == name_j + name_k:
                return j, k
    raise ValueError(f"twist {text!r} must name two dimensions of an N={n} torus, such as "
                     f"{names[min(1, n - 1)]}{names[0]} (dimensions {', '.join(names)})")


@dataclass(frozen=True)
class TwistedTorusTopology(RadixShape):
    """A torus with ``radices[i]`` nodes in dimension i and twists ``t_JK``.

    ``twists`` may be a mapping ``{(J, K): t}`` or ``{"YX": t}``, or an iterable of
    ``(J, K, t)``; it is stored as sorted ``(J, K, t)`` triples with zero twists dropped.
    Raises ``ValueError`` for a radix below 1, J == K, a dimension out of range, a repeated
    twist, or a twist on a dimension of size 1; ``TypeError`` for non-integers.
    """

    radices: tuple[int, ...]
    twists: tuple[tuple[int, int, int], ...] = ()

    def __post_init__(self):
        radices = checks.check_int_tuple("radices", self.radices, minimum=1)
        object.__setattr__(self, "radices", radices)
        object.__setattr__(self, "twists", self._normalise(self.twists))

    def _normalise(self, twists) -> tuple[tuple[int, int, int], ...]:
        n = self.n
        if isinstance(twists, Mapping):
            items = [(*(parse_dimension_pair(key, n) if isinstance(key, str) else key), t)
                     for key, t in twists.items()]
        elif isinstance(twists, Iterable) and not isinstance(twists, (str, bytes)):
            items = [tuple(item) for item in twists]
        else:
            raise TypeError(f"twists must be a mapping or (J, K, t) triples, not {twists!r}")
        seen, result = set(), []
        for item in items:
            j, k, t = checks.check_int_tuple("twist", item, length=3)
            checks.check_int("twist dimension J", j, minimum=0, maximum=n - 1)
            checks.check_int("twist dimension K", k, minimum=0, maximum=n - 1)
            label = "t_" + dimension_name(j) + dimension_name(k)
            if j == k:
                raise ValueError(f"{label}: a twist needs two different dimensions J ≠ K")
            if (j, k) in seen:
                raise ValueError(f"{label} is given twice")
            seen.add((j, k))
            for dim in (j, k):
                if self.radices[dim] < 2:
                    raise ValueError(f"{label} = {t}: dimension {dimension_name(dim)} has "
                                     f"size {self.radices[dim]}; twists need both dimensions "
                                     "of size >= 2")
            if t % self.radices[k]:
                result.append((j, k, t))
        return tuple(sorted(result))


    def skew(self, j: int, k: int) -> int:
        """``t_JK mod d_K`` (0 when untwisted)."""
        twist = next((t for jj, kk, t in self.twists if (jj, kk) == (j, k)), 0)
        return twist % self.radices[k]

    def label(self) -> str:
        """``8x4 t_YX=4``."""
        twists = " ".join(f"t_{dimension_name(j)}{dimension_name(k)}={t}"
                          for j, k, t in self.twists)
        return "x".join(map(str, self.radices)) + (f" {twists}" if twists else "")

    def nodes(self):
        """Every node, X fastest (index order)."""
        return (tuple(reversed(p)) for p in itertools.product(*(range(d) for d in
                                                                   reversed(self.radices))))

    def check_node(self, node, name: str = "node") -> Node:
        node = checks.check_int_tuple(name, node, length=self.n)
        for dim, (x, d) in enumerate(zip(node, self.radices)):
            if not 0 <= x < d:
                raise ValueError(f"{name} {dimension_name(dim)} must be from 0 to {d - 1}, "
                                 f"not {x}")
        return node

    def step(self, node: Node, dim: int, sign: int) -> Node:
        """One hop from ``node`` along dimension ``dim`` in direction ``sign`` (+1 or −1)."""
        x = list(node)
        d = self.radices[dim]
        if sign > 0 and x[dim] == d - 1 or sign < 0 and x[dim] == 0:
            x[dim] = 0 if sign > 0 else d - 1
            for j, k, t in self.twists:
                if j == dim:
                    x[k] = (x[k] + sign * t) % self.radices[k]
        else:
            x[dim] += sign
        return tuple(x)

    def index(self, node: Node) -> int:
        return sum(x * s for x, s in zip(node, self._strides))

    @cached_property
    def _strides(self) -> tuple[int, ...]:
        strides, s = [], 1
        for d in self.radices:
            strides.append(s)
            s *= d
        return tuple(strides)

    @cached_property
    def adjacency(self) -> tuple[tuple[tuple[int, int], ...], ...]:
        """Per node index, ``(neighbour index, dimension)`` for each of its 2N links (size-1
        dimensions give none; parallel links are kept, they are distinct paths)."""
        table = []
        for node in self.nodes():
            table.append(tuple((self.index(self.step(node, dim, sign)), dim)
                               for dim in range(self.n) if self.radices[dim] > 1
                               for sign in (1, -1)))
        return tuple(table)


# --- node symmetry ------------------------------------------------------------------------------

def theorem_violations(config: TwistedTorusTopology) -> list[tuple[int, int, int]]:
    """``(I, J, K)`` for each dimension J that receives t_IJ ≠ 0 and applies t_JK ≠ 0."""
    return [(i, j, k) for i, j, _ in config.twists for jj, k, _ in config.twists if jj == j]


def is_node_symmetric(config: TwistedTorusTopology) -> bool:
    """The Theorem's criterion (with the Cayley-graph converse in the module doc)."""
    return not theorem_violations(config)


def non_commuting_moves(config: TwistedTorusTopology):
    """Brute force: the first ``(node, (dim_a, sign_a), (dim_b, sign_b))`` where the two unit
    moves taken in either order end on different nodes, or ``None`` if all moves commute."""
    moves = [(dim, sign) for dim in range(config.n) for sign in (1, -1)]
    for node in config.nodes():
        for (a, sa), (b, sb) in itertools.combinations(moves, 2):
            if a == b:
                continue
            one = config.step(config.step(node, a, sa), b, sb)
            other = config.step(config.step(node, b, sb), a, sa)
            if one != other:
                return node, (a, sa), (b, sb)
    return None


# --- minimal routing on node-symmetric instances -------------------------------------------------

#: The images of a twisting dimension J tried by :func:`routing_record`, in tie order: the
#: offset ``v_J - c * d_J`` for these ``c`` (0: no peripheral link crossed).
IMAGES = (0, 1, -1, 2)


def routing_record(config: TwistedTorusTopology, source: Node, destination: Node
                   ) -> tuple[int, ...]:
    """A minimal routing record (signed hops per dimension) from ``source`` to ``destination``
    on a node-symmetric twisted torus, from the coordinate difference alone.

    On such a torus (the module doc) nodes are Z^N modulo the lattice of the rows
    ``d_J e_J - sum_K t_JK e_K``. The difference ``v = destination - source`` is first brought
    into ``[0, d_J)`` in every twisting dimension J, carrying ``t_JK`` per wrap into each K it
    twists; then each twisting dimension takes one of the images ``v_J - c d_J``
    (:data:`IMAGES`), its twists moving ``v_K`` by ``c t_JK``, and every other dimension its
    ring offset (``(v_K mod d_K)``, less ``d_K`` above ``d_K / 2``: exactly half goes ``+``).
    The record is the shortest; ties go to the first in :data:`IMAGES` order (dimension 0's
    choice varying slowest). Minimal against breadth-first search for every pair of every
    node-symmetric 2-D instance with one twist up to 6 x 6, of 8 x 4 with t_YX = 4 and of three
    3-D instances (``tests/model/test_twist.py``); the four images are what that takes (two
    are not enough on 2 x 7 with t_XY = 3).

    Raises ``ValueError`` naming 004's Theorem and the offending twists when the torus is not
    node-symmetric: no record from differences routes it.
    """
    violations = theorem_violations(config)
    if violations:
        names = ", ".join(f"t_{dimension_name(i)}{dimension_name(j)} and "
                          f"t_{dimension_name(j)}{dimension_name(k)}" for i, j, k in violations)
        raise ValueError(f"{config.label()} is not node-symmetric (004's Theorem: a dimension "
                         f"both receives and applies a twist: {names}); routing from "
                         "coordinate differences needs a node-symmetric torus")
    source = config.check_node(source, "source")
    destination = config.check_node(destination, "destination")
    radices = config.radices
    v = [b - a for a, b in zip(source, destination)]
    twisting = sorted({j for j, _, _ in config.twists})
    for j in twisting:
        wraps = v[j] // radices[j]
        v[j] -= wraps * radices[j]
        for jj, k, t in config.twists:
            if jj == j:
                v[k] += wraps * t
    best = None
    for choice in itertools.product(IMAGES, repeat=len(twisting)):
        record = list(v)
        for j, c in zip(twisting, choice):
            record[j] -= c * radices[j]
            for jj, k, t in config.twists:
                if jj == j:
                    record[k] += c * t
        for k in range(config.n):
            if k not in twisting:
                offset = record[k] % radices[k]
                record[k] = offset - radices[k] if offset > radices[k] // 2 else offset
        length = sum(map(abs, record))
        if best is None or length < best[0]:
            best = (length, tuple(record))
    return best[1]


def routing_path(config: TwistedTorusTopology, source: Node, destination: Node
                 ) -> list[tuple[Node, int, int]]:
    """The hops ``(node, dimension, sign)`` of dimension-order routing over
    :func:`routing_record`: all hops of dimension 0 (X), then 1, …"""
    hops, node = [], source
    for dim, count in enumerate(routing_record(config, source, destination)):
        sign = 1 if count > 0 else -1
        for _ in range(abs(count)):
            hops.append((node, dim, sign))
            node = config.step(node, dim, sign)
    if node != destination:
        raise AssertionError(f"path {source}→{destination} ends at {node}")
    return hops


# --- metrics ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TwistMetrics:
    """Distance metrics over all ordered pairs, a node to itself included."""

    dimension_count: int
    diameter: int
    average_distance: Fraction
    dimension_averages: tuple[Fraction, ...]

    @property
    def max_dimension_distance(self) -> Fraction:
        return max(self.dimension_averages)

    @property
    def imbalance(self) -> Fraction:
        """``N · max_i k̄_i / k̄`` (1 for a network with a single node)."""
        if not self.average_distance:
            return Fraction(1)
        return self.dimension_count * self.max_dimension_distance / self.average_distance

    def value(self, metric: str) -> Fraction:
        checks.check_choice("metric", metric, METRICS)
        return Fraction(getattr(self, metric))


def _bfs_distances(adjacency, source: int) -> list[int]:
    distances = [-1] * len(adjacency)
    distances[source] = 0
    queue = [source]
    for u in queue:
        du = distances[u] + 1
        for v, _ in adjacency[u]:
            if distances[v] < 0:
                distances[v] = du
                queue.append(v)
    return distances


def _bfs_dimension_hops(adjacency, source: int, n: int):
    """Distances, shortest-path counts and, per dimension, hops summed over all shortest
    paths, from ``source``; a node's predecessors are complete before it leaves the queue."""
    size = len(adjacency)
    distances, counts = [-1] * size, [0] * size
    hops = [[0] * size for _ in range(n)]
    distances[source], counts[source] = 0, 1
    queue = [source]
    for u in queue:
        du = distances[u] + 1
        for v, dim in adjacency[u]:
            if distances[v] < 0:
                distances[v] = du
                queue.append(v)
            if distances[v] == du:
                counts[v] += counts[u]
                for i in range(n):
                    hops[i][v] += hops[i][u]
                hops[dim][v] += counts[u]
    return distances, counts, hops


def _sources(config: TwistedTorusTopology) -> list[int]:
    return [0] if is_node_symmetric(config) else list(range(config.node_count))


def diameter(config: TwistedTorusTopology) -> int:
    """The longest shortest path (one BFS when node-symmetric, else one per node)."""
    adjacency = config.adjacency
    return max(max(_bfs_distances(adjacency, s)) for s in _sources(config))


def metrics(config: TwistedTorusTopology) -> TwistMetrics:
    """All four metrics of 004 §II (plus the per-dimension averages)."""
    adjacency, n = config.adjacency, config.n
    sources = _sources(config)
    diam, distance_sum = 0, 0
    dimension_sums = [Fraction(0)] * n
    for source in sources:
        distances, counts, hops = _bfs_dimension_hops(adjacency, source, n)
        diam = max(diam, max(distances))
        distance_sum += sum(distances)
        for i in range(n):
            dimension_sums[i] += sum(Fraction(h, c) for h, c in zip(hops[i], counts) if h)
    pairs = len(sources) * config.node_count
    return TwistMetrics(n, diam, Fraction(distance_sum, pairs),
                        tuple(s / pairs for s in dimension_sums))


# --- twist search -------------------------------------------------------------------------------

def _single_twist(radices, j: int, k: int, t: int) -> TwistedTorusTopology:
    return TwistedTorusTopology(tuple(radices), {(j, k): t} if t else {})


def twist_sweep(radices, j: int = 1, k: int = 0) -> dict[int, TwistMetrics]:
    """Metrics of the torus with the single twist ``t_JK = t`` for every ``t`` in
    ``0 … d_K − 1`` (default t_YX: dimension Y twisted over X)."""
    radices = TwistedTorusTopology(tuple(radices)).radices
    return {t: metrics(_single_twist(radices, j, k, t)) for t in range(radices[k])}


def diameter_sweep(radices, j: int = 1, k: int = 0) -> dict[int, int]:
    """Like :func:`twist_sweep` for the diameter alone (much faster)."""
    radices = TwistedTorusTopology(tuple(radices)).radices
    return {t: diameter(_single_twist(radices, j, k, t)) for t in range(radices[k])}


def best_twists(sweep: Mapping[int, object], metric: str = "diameter") -> tuple[Fraction, list]:
    """``(best value, every twist attaining it)`` of a sweep, smaller being better. The
    sweep maps twists to :class:`TwistMetrics` or, for ``"diameter"``, to plain integers."""
    checks.check_choice("metric", metric, METRICS)
    values = {t: Fraction(m) if isinstance(m, int) else m.value(metric)
              for t, m in sweep.items()}
    best = min(values.values())
    return best, [t for t, v in values.items() if v == best]
