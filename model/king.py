"""Square meshes and tori with diagonals: M, DM, KM, T, DT, KT (002 §2, Def. 1–2, and §3).

Nodes are ``(x, y)`` with ``0 ≤ x, y < side``. Link directions are x ``(1, 0)``, y ``(0, 1)``,
z ``(1, 1)`` and t ``(-1, 1)``, each with a ``+`` and a ``-`` port; the eight ports in *vector
order* are ``x+ x- y+ y- z+ z- t+ t-``. M/T have x and y, DM/DT add z, KM/KT add z and t; the
tori take every link mod ``(side, side)``, the meshes lack the links that would leave them.

Routing records are tuples of hop counts per direction, signed by the port to take:
``(δx, δy)`` for DOR on M/T, ``(δx, δy, δz)`` for DM/DT, ``(δx, δy, δz, δt)`` (Knaive) for
KM/KT. Hop-by-hop routing works on the 8-entry vectors of :data:`PORTS`.

Deadlock of the king escape network (002 §3.1, §3.3.3): the escape VC takes the first grade-1
port in vector order, i.e. DOR over x, y, then z, t. On a mesh that is acyclic on one VC. On a
torus each direction's rings close a cycle on one VC (scheme ``"plain"``), which the checker
reports. Two remedies are modelled: ``"dateline"`` (two escape VCs per link: a packet moves to
VC 1 after crossing its ring's dateline — the hop that wraps x, or y for the y rings — so each
ring's VC dependency chain is cut) is checked channel by channel; ``"bubble"`` (the paper's
adaptive bubble routing: one escape VC, a packet may only *enter* a ring when the downstream
buffer holds two packets) is checked by the bubble argument: a ring with a free bubble cannot
fill, so each ring is one node of the graph and only the ring-to-ring dependencies must be
acyclic.
"""

import itertools
import random
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass

from . import checks
from .deadlock import ChannelDependencyGraph
from .torus import ring_direction, ring_distance

Node = tuple[int, int]
Record = tuple[int, ...]

KINDS = ("M", "DM", "KM", "T", "DT", "KT")
PORTS = ("x+", "x-", "y+", "y-", "z+", "z-", "t+", "t-")
DIRECTION_VECTORS = {"x": (1, 0), "y": (0, 1), "z": (1, 1), "t": (-1, 1)}
PORT_VECTORS = {f"{d}{s}": (sign * vx, sign * vy) for d, (vx, vy) in DIRECTION_VECTORS.items()
                for s, sign in (("+", 1), ("-", -1))}
KIND_DIRECTIONS = {"M": "xy", "DM": "xyz", "KM": "xyzt", "T": "xy", "DT": "xyz", "KT": "xyzt"}
ORTHOGONAL_PORTS = ("x+", "x-", "y+", "y-")
#: For broadcast: the two diagonal ports on either side of each orthogonal port.
SIDE_DIAGONALS = {"x+": ("z+", "t-"), "x-": ("t+", "z-"), "y+": ("z+", "t+"),
                  "y-": ("z-", "t-")}
ESCAPE_SCHEMES = ("plain", "dateline", "bubble")


@dataclass(frozen=True)
class KingTopology:
    """One of the six square networks: ``kind`` in M, DM, KM, T, DT, KT and its ``side``.

    Raises ``ValueError`` for an unknown kind or a side below 2, ``TypeError`` for a side that
    is not an integer.
    """

    kind: str
    side: int

    def __post_init__(self):
        checks.check_choice("kind", self.kind, KINDS)
        checks.check_int("side", self.side, minimum=2)

    @property
    def wrap(self) -> bool:
        return self.kind in ("T", "DT", "KT")

    @property
    def is_king(self) -> bool:
        return self.kind in ("KM", "KT")

    @property
    def ports(self) -> tuple[str, ...]:
        """The ports this kind has, in vector order."""
        return tuple(p for p in PORTS if p[0] in KIND_DIRECTIONS[self.kind])

    @property
    def node_count(self) -> int:
        return self.side ** 2

    @property
    def name(self) -> str:
        return f"{self.kind}{self.side}"

    def nodes(self) -> Iterator[Node]:
        return itertools.product(range(self.side), repeat=2)

    def check_node(self, node, name: str = "node") -> Node:
        node = checks.check_int_tuple(name, node, length=2)
        for axis, value in zip("xy", node):
            if not 0 <= value < self.side:
                raise ValueError(f"{name} {axis} must be from 0 to {self.side - 1}, not {value}")
        return node

    def require_king(self, what: str) -> None:
        if not self.is_king:
            raise ValueError(f"{what} needs a king network (kind KM or KT), not {self.kind}")

    def neighbor(self, node: Node, port: str) -> Node | None:
        """The node one hop through ``port``; ``None`` off a mesh or for a port it lacks."""
        if port not in self.ports:
            return None
        vx, vy = PORT_VECTORS[port]
        x, y = node[0] + vx, node[1] + vy
        if self.wrap:
            return x % self.side, y % self.side
        if 0 <= x < self.side and 0 <= y < self.side:
            return x, y
        return None

    def neighbors(self, node: Node) -> list[tuple[str, Node]]:
        """``(port, neighbour)`` for every port of ``node`` that has a link."""
        return [(p, nb) for p in self.ports if (nb := self.neighbor(node, p)) is not None]

    def channels(self) -> Iterator[tuple[Node, str]]:
        """Every channel (one direction of one link) as ``(node, output port)``."""
        for node in self.nodes():
            for port, _ in self.neighbors(node):
                yield node, port

    def offset(self, a: Node, b: Node) -> tuple[int, int]:
        """``(Δx, Δy)`` from ``a`` to ``b``: the difference on a mesh, the shorter signed ring
        offset on a torus (exactly ``side/2`` goes ``+``, the positive tie rule)."""
        if not self.wrap:
            return b[0] - a[0], b[1] - a[1]
        return tuple(ring_direction(p, q, self.side) * ring_distance(p, q, self.side)
                     for p, q in zip(a, b))


# --- distances ---------------------------------------------------------------------------------

def bfs_distances(config: KingTopology, source: Node) -> dict[Node, int]:
    """Hops from ``source`` to every node, by breadth-first search."""
    source = config.check_node(source, "source")
    distances = {source: 0}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        for _, nb in config.neighbors(node):
            if nb not in distances:
                distances[nb] = distances[node] + 1
                queue.append(nb)
    return distances


def _diagonal_mesh_length(dx: int, dy: int) -> int:
    if dx * dy > 0:
        return max(abs(dx), abs(dy))
    return abs(dx) + abs(dy)


def distance(config: KingTopology, a: Node, b: Node) -> int:
    """Closed-form hop distance (cross-checked against :func:`bfs_distances` by the tests).

    M/T: |Δx| + |Δy|; KM/KT: max(|Δx|, |Δy|) (ring distances on a torus); DM: max in the
    diagonal's quadrant, else the sum; DT: the shortest diagonal-mesh route over the four
    wrap-around images of ``b``.
    """
    if config.kind == "DT":
        return min(_diagonal_mesh_length(dx, dy)
                   for dx, dy in _torus_images(config.side, a, b))
    dx, dy = config.offset(a, b)
    if config.kind in ("M", "T"):
        return abs(dx) + abs(dy)
    if config.kind == "DM":
        return _diagonal_mesh_length(dx, dy)
    return max(abs(dx), abs(dy))


@dataclass(frozen=True)
class KingDistanceSummary:
    """Diameter and average distance over all ordered pairs, a node to itself included."""

    diameter: int
    distance_sum: int
    pair_count: int

    @property
    def average_distance(self) -> float:
        return self.distance_sum / self.pair_count


def distance_summary(config: KingTopology) -> KingDistanceSummary:
    """Diameter and average distance by BFS: from one node on a torus (translations are
    automorphisms, so every node sees the same distances), from every node on a mesh."""
    sources = [(0, 0)] if config.wrap else list(config.nodes())
    diameter, total = 0, 0
    for source in sources:
        distances = bfs_distances(config, source).values()
        diameter = max(diameter, max(distances))
        total += sum(distances)
    return KingDistanceSummary(diameter, total * (config.node_count // len(sources)),
                           config.node_count ** 2)


def bisection_channel_count(config: KingTopology) -> int:
    """Channels (links × 2 directions) crossing the vertical cut between columns
    ``x < ⌊side/2⌋`` and ``x ≥ ⌊side/2⌋`` (wrap-around links included on a torus)."""
    cut = config.side // 2
    return sum(1 for node, port in config.channels()
               if (node[0] < cut) != (config.neighbor(node, port)[0] < cut))


def minimal_path_counts(config: KingTopology, source: Node) -> dict[Node, int]:
    """Number of minimal paths from ``source`` to every node, by counting over the BFS DAG
    (parallel links between the same two nodes count as distinct paths)."""
    distances = bfs_distances(config, source)
    counts = {config.check_node(source, "source"): 1}
    for node in sorted(distances, key=distances.get)[1:]:
        # Links come in ± pairs, so a node's neighbours are also its predecessors.
        counts[node] = sum(counts[prev] for _, prev in config.neighbors(node)
                           if distances[prev] == distances[node] - 1)
    return counts


# --- routing records ---------------------------------------------------------------------------

def record_length(record: Record) -> int:
    return sum(abs(c) for c in record)


def record_displacement(record: Record) -> tuple[int, int]:
    """``(Δx, Δy)`` travelled by following ``record`` (components in x, y, z, t order)."""
    vectors = list(DIRECTION_VECTORS.values())
    return (sum(c * vectors[i][0] for i, c in enumerate(record)),
            sum(c * vectors[i][1] for i, c in enumerate(record)))


def diagonal_mesh_record(dx: int, dy: int) -> Record:
    """``(δx, δy, δz)`` on a diagonal mesh: in z's quadrant (same signs) z takes
    min(|Δx|, |Δy|) hops; otherwise ``(Δx, Δy, 0)``."""
    if dx * dy > 0:
        if abs(dx) >= abs(dy):
            return dx - dy, 0, dy
        return 0, dy - dx, dx
    return dx, dy, 0


def _torus_images(side: int, a: Node, b: Node) -> list[tuple[int, int]]:
    """The four wrap-around offsets ``(x, y)``, ``(x-s, y-s)``, ``(x-s, y)``, ``(x, y-s)``
    from ``a`` to ``b`` with ``x, y`` in ``[0, s)`` (002 Alg. 1's p0 … p3)."""
    x, y = (b[0] - a[0]) % side, (b[1] - a[1]) % side
    return [(x, y), (x - side, y - side), (x - side, y), (x, y - side)]


def diagonal_torus_candidates(side: int, source: Node, destination: Node) -> tuple[Record, ...]:
    """Every distinct diagonal-mesh record to a wrap-around image of ``destination`` whose
    length is minimal, in image order p0 … p3. Routing may pick any of them."""
    records = [diagonal_mesh_record(dx, dy) for dx, dy in _torus_images(side, source,
                                                                          destination)]
    shortest = min(record_length(r) for r in records)
    return tuple(dict.fromkeys(r for r in records if record_length(r) == shortest))


def diagonal_torus_record(side: int, source: Node, destination: Node,
                          rng: random.Random | None = None) -> Record:
    """002 Alg. 1: a shortest record among the images; ties go to the first candidate, or to
    ``rng.choice`` (replayable with a seeded ``random.Random``) when ``rng`` is given."""
    candidates = diagonal_torus_candidates(side, source, destination)
    return candidates[0] if rng is None else rng.choice(candidates)


def knaive_record(dx: int, dy: int) -> Record:
    """Knaive ``(δx, δy, δz, δt)``: z in the same-sign quadrants as on a diagonal mesh;
    with opposite signs t takes the smaller component (002 §3.3.1)."""
    if dx * dy >= 0:
        return (*diagonal_mesh_record(dx, dy), 0)
    if abs(dx) >= abs(dy):
        return dx + dy, 0, 0, dy
    return 0, dx + dy, 0, -dx


def routing_record(config: KingTopology, source: Node, destination: Node,
                   rng: random.Random | None = None) -> Record:
    """The source-computed record: DOR ``(Δx, Δy)`` on M/T, diagonal records on DM/DT
    (``rng`` breaks DT ties), Knaive on KM/KT. Torus offsets follow the positive tie rule."""
    source = config.check_node(source, "source")
    destination = config.check_node(destination, "destination")
    if config.kind == "DT":
        return diagonal_torus_record(config.side, source, destination, rng)
    dx, dy = config.offset(source, destination)
    if config.kind in ("M", "T"):
        return dx, dy
    if config.kind == "DM":
        return diagonal_mesh_record(dx, dy)
    return knaive_record(dx, dy)


def record_ports(record: Record) -> tuple[str, ...]:
    """The ports a record uses (one per non-zero component), in x, y, z, t order."""
    return tuple(f"{d}{'+' if c > 0 else '-'}" for d, c in zip("xyzt", record) if c)


def routing_port(config: KingTopology, current: Node, destination: Node) -> str | None:
    """Deterministic routing hop by hop: the first port, in vector order, of the record from
    ``current`` to ``destination`` (:func:`routing_record`, DT ties to the first image);
    ``None`` on arrival. Every router recomputes it from its own coordinates, so a path never
    needs a record in the header."""
    ports = record_ports(routing_record(config, current, destination))
    return ports[0] if ports else None


def routing_path(config: KingTopology, source: Node, destination: Node) -> list[tuple[Node, str]]:
    """The hops ``(node, port)`` of :func:`routing_port` from ``source`` to ``destination``:
    a minimal path whose ports never go back in vector order (the tests check both for every
    pair of every kind at sides 3 to 9), so it enters each ring at most once."""
    hops, node = [], config.check_node(source, "source")
    for _ in range(2 * config.side + 1):
        port = routing_port(config, node, destination)
        if port is None:
            return hops
        hops.append((node, port))
        node = config.neighbor(node, port)
    raise AssertionError(f"path {source}→{destination} does not arrive")


# --- hop-by-hop routing ------------------------------------------------------------------------

def profitable_vector(config: KingTopology, current: Node, destination: Node) -> tuple[int, ...]:
    """The 8-entry vector over :data:`PORTS`: 1 where the neighbour is one hop closer to
    ``destination``, 0 otherwise (and for ports the node lacks)."""
    current = config.check_node(current, "current")
    destination = config.check_node(destination, "destination")
    here = distance(config, current, destination)
    return tuple(int((nb := config.neighbor(current, p)) is not None
                     and distance(config, nb, destination) == here - 1) for p in PORTS)


def tied_offsets(config: KingTopology, current: Node, destination: Node) -> list[tuple[int, int]]:
    """Every shortest ``(Δx, Δy)`` from ``current`` to ``destination``: on a torus of even
    side an axis offset of exactly ``side/2`` goes either way round its ring (the offset of
    :meth:`KingTopology.offset`, which takes ``+``, first)."""
    dx, dy = config.offset(current, destination)
    half = config.side // 2 if config.wrap and config.side % 2 == 0 else None

    def ways(d: int) -> tuple[int, ...]:
        return (d, -d) if half is not None and d == half else (d,)

    return [(ox, oy) for ox in ways(dx) for oy in ways(dy)]


def graded_vector(config: KingTopology, current: Node, destination: Node,
                  both_ties: bool = False) -> tuple[int, ...]:
    """2S hop-by-hop grades over :data:`PORTS`: 1 = profitable and a port Knaive would use
    from ``current``, 2 = profitable otherwise, 0 = not profitable. King networks only.

    Knaive's record starts from the offset of :meth:`KingTopology.offset` (a tie goes ``+``);
    with ``both_ties``, from every offset of :func:`tied_offsets`, so that at a tie both ways
    round the ring are Knaive's (the papers' simulator breaks such ties at random)."""
    config.require_king("2S hop-by-hop grading")
    offsets = (tied_offsets(config, current, destination) if both_ties
               else [config.offset(current, destination)])
    knaive = {port for offset in offsets for port in record_ports(knaive_record(*offset))}
    return tuple(0 if not useful else 1 if port in knaive else 2
                 for port, useful in zip(PORTS, profitable_vector(config, current,
                                                                  destination)))


def escape_port(config: KingTopology, current: Node, destination: Node) -> str | None:
    """The escape VC's port: the first grade-1 port in vector order (``None`` on arrival),
    of the grades that take a tie ``+``: the first port of the Knaive record."""
    grades = graded_vector(config, current, destination)
    return next((port for port, grade in zip(PORTS, grades) if grade == 1), None)


def escape_path(config: KingTopology, source: Node, destination: Node) -> list[tuple[Node, str]]:
    """The escape network's hops ``(node, port)`` from ``source`` to ``destination``."""
    hops, node = [], config.check_node(source, "source")
    for _ in range(4 * config.side + 1):
        port = escape_port(config, node, destination)
        if port is None:
            return hops
        hops.append((node, port))
        node = config.neighbor(node, port)
    raise AssertionError(f"escape path {source}→{destination} does not arrive")


# --- escape-network deadlock -------------------------------------------------------------------

def wraps(config: KingTopology, node: Node, port: str) -> bool:
    """True if the hop from ``node`` through ``port`` crosses its ring's dateline: the wrap
    in x for the x, z and t rings, the wrap in y for the y rings."""
    axis = 1 if port[0] == "y" else 0
    step = PORT_VECTORS[port][axis]
    return not 0 <= node[axis] + step < config.side


def ring_of(config: KingTopology, node: Node, port: str) -> tuple[str, int]:
    """The directed ring a hop belongs to: ``(port, invariant)`` with the invariant y for x
    rings, x for y rings, (y − x) mod s for z rings, (x + y) mod s for t rings."""
    x, y = node
    invariant = {"x": y, "y": x, "z": (y - x) % config.side, "t": (x + y) % config.side}
    return port, invariant[port[0]]


def escape_channels(config: KingTopology, source: Node, destination: Node,
                    scheme: str = "plain") -> list:
    """The escape channels a packet holds in order under ``scheme`` (see the module doc):
    ``(node, port)`` for ``plain``, ``(node, port, vc)`` for ``dateline``, ``(port, ring)``
    (one entry per ring entered) for ``bubble``."""
    checks.check_choice("scheme", scheme, ESCAPE_SCHEMES)
    return scheme_channels(config, escape_path(config, source, destination), scheme)


def scheme_channels(config: KingTopology, hops: list[tuple[Node, str]], scheme: str) -> list:
    """The channels a path of hops ``(node, port)`` holds under ``scheme``: the hops for
    ``plain``, ``(node, port, vc)`` for ``dateline`` (VC 1 once the packet has crossed its
    ring's dateline, back to 0 on a turn), ``(port, ring)`` per ring entered for ``bubble``."""
    if scheme == "plain":
        return hops
    if scheme == "bubble":
        rings = [ring_of(config, node, port) for node, port in hops]
        return [ring for i, ring in enumerate(rings) if i == 0 or rings[i - 1] != ring]
    channels, crossed, previous = [], False, None
    for node, port in hops:
        if port != previous:
            crossed = False
        channels.append((node, port, int(crossed)))
        crossed = crossed or wraps(config, node, port)
        previous = port
    return channels


def escape_dependency_graph(config: KingTopology, scheme: str = "plain") -> ChannelDependencyGraph:
    """Dependencies of the escape network over every ordered pair of nodes (packets may take
    the escape VC at any node, and its route depends only on where it is and where it goes)."""
    config.require_king("the escape network")
    return ChannelDependencyGraph.from_paths(
        escape_channels(config, a, b, scheme)
        for a in config.nodes() for b in config.nodes() if a != b)


# --- broadcast ---------------------------------------------------------------------------------

def broadcast_ttl(config: KingTopology, source: Node, port: str,
                  even_side_rule: bool = True) -> int:
    """The TTL the source gives the copy it sends through ``port`` (002 §3.3.4).

    King mesh: max(x, s−1−x, y, s−1−y) (the paper writes s−x; with coordinates 0 … s−1 the
    farthest node is s−1−x columns away). King torus: the diameter ⌊s/2⌋, and with
    ``even_side_rule`` (a choice of this project, see docs/background.md) one less on an even
    side for copies heading in a negative x or y direction (x−, y−, z−, t+, t−) so that nodes
    s/2 away are reached once (without it, the paper's rule, they are reached twice).
    """
    config.require_king("broadcast")
    x, y = config.check_node(source, "source")
    s = config.side
    if not config.wrap:
        return max(x, s - 1 - x, y, s - 1 - y)
    negative = min(PORT_VECTORS[port]) < 0
    return s // 2 - (1 if even_side_rule and s % 2 == 0 and negative else 0)


def broadcast_sends(config: KingTopology, source: Node,
                    even_side_rule: bool = True) -> list[tuple[Node, str]]:
    """Every link crossing of one broadcast from ``source``, as ``(sending node, port)``.

    The source sends a copy through each of its ports (:func:`broadcast_ttl`). A receiver
    consumes the copy and decrements its TTL; while the TTL is positive it forwards it:
    straight on after an orthogonal port plus the two diagonals beside it, straight on only
    after a diagonal port. Copies that would leave a mesh are not sent.
    """
    source = config.check_node(source, "source")
    sends = []
    pending = deque((source, port, broadcast_ttl(config, source, port, even_side_rule))
                    for port, _ in config.neighbors(source))
    while pending:
        node, port, ttl = pending.popleft()
        sends.append((node, port))
        nb, ttl = config.neighbor(node, port), ttl - 1
        if ttl <= 0:
            continue
        onward = (port, *SIDE_DIAGONALS[port]) if port in ORTHOGONAL_PORTS else (port,)
        pending.extend((nb, out, ttl) for out in onward if config.neighbor(nb, out) is not None)
    return sends


def broadcast_deliveries(config: KingTopology, source: Node,
                         even_side_rule: bool = True) -> Counter:
    """Copies of one broadcast from ``source`` received by each node (the source excluded):
    one per link crossing of :func:`broadcast_sends`."""
    return Counter(config.neighbor(node, port)
                   for node, port in broadcast_sends(config, source, even_side_rule))
