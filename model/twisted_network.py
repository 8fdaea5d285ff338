"""A twisted torus as built in RTL (004): its topology, its escape scheme and router sizes.

Routing: dimension-order routing over the minimal record of
:func:`twinnet.model.twist.routing_record`, which needs a node-symmetric torus (004's
Theorem). Every router recomputes the record from its own coordinates and the destination's
and takes the first dimension with hops left; the path is the same as the source's record
would give (checked for every pair of every instance in
``tests/model/test_twisted_routing.py``).

Deadlock (the ``escape`` scheme). Following the links of one dimension and direction from a
node closes a cycle; a twist joins the rings of dimension J into longer cycles (the peripheral
link of J lands t_JK over in K). Dimension order enters these cycles in dimension order and
never comes back to one it left, so:

- ``bubble``: one VC per link; a packet enters a cycle (injected, or turning to a new
  dimension) only with room for two whole packets downstream (003 §6.3.2), so a cycle never
  fills; the dependencies between cycles follow the dimension order;
- ``dateline``: two VCs per link; the peripheral links of a dimension are its datelines: a
  packet moves to VC 1 after crossing one and starts each new dimension on VC 0. A leg crosses
  at most one peripheral link, so no VC-1 channel waits on a peripheral crossing;
- ``none``: one VC, no bubble: the cycles deadlock (kept to show it).

One PE per router: terminal ``t`` is node index ``t`` (X fastest).
"""

import functools
import re
from dataclasses import dataclass

from . import checks
from .deadlock import ChannelDependencyGraph
from .sizes import DEFAULT_PIPELINE, RouterSizes, sizes_from_dict
from .torus import dimension_name
from .twist import TwistedTorusConfig, parse_dimension_pair, routing_path, theorem_violations

#: Escape schemes of the RTL.
ESCAPES = ("bubble", "dateline", "none")
#: Most routers: as for the other families.
MAX_NODES = 1024
#: Largest radix of a dimension.
MAX_RADIX = 64
#: Keys a twisted-torus description may hold.
TWISTED_KEYS = ("topology", "radices", "twists", "escape", "flit_width", "packet_length",
                "buffer_depth", "pipeline")
Hop = tuple[tuple[int, ...], int, int]  # (node, dimension, sign)


def port_label(dim: int, sign: int) -> str:
    """``X+``, ``Y-``, …"""
    return dimension_name(dim) + ("+" if sign > 0 else "-")


def port_move(port: str) -> tuple[int, int]:
    """``(dimension, sign)`` of a link port label: ``Y-`` → ``(1, -1)``."""
    dim = next(d for d in range(3) if dimension_name(d) == port[:-1])
    return dim, 1 if port[-1] == "+" else -1


@dataclass(frozen=True)
class TwistedNetworkConfig(RouterSizes):
    """A twisted torus (:class:`TwistedTorusConfig`, node-symmetric), its escape scheme
    (:data:`ESCAPES`) and router sizes as for a twin torus (``buffer_depth`` ``None``: two
    packets)."""

    topology: TwistedTorusConfig
    escape: str = "bubble"
    flit_width: int = 32
    packet_length: int = 4
    buffer_depth: int | None = None
    pipeline: int = DEFAULT_PIPELINE

    def __post_init__(self):
        if not isinstance(self.topology, TwistedTorusConfig):
            raise TypeError(f"topology must be a TwistedTorusConfig, not {self.topology!r}")
        checks.check_choice("escape", self.escape, ESCAPES)
        self.check_sizes()

    @property
    def vc_count(self) -> int:
        return 2 if self.escape == "dateline" else 1

    @property
    def digit_widths(self) -> tuple[int, ...]:
        """Bits of each destination coordinate (a value ``>= d`` that fits is malformed)."""
        return tuple(max(1, (d - 1).bit_length()) for d in self.topology.radices)

    @property
    def source_width(self) -> int:
        return max(1, (self.topology.node_count - 1).bit_length())

    @property
    def header_width(self) -> int:
        return sum(self.digit_widths) + self.source_width

    @property
    def ports(self) -> tuple[str, ...]:
        """The link ports of every router, ``X+ X- Y+ Y- …`` (dimensions of size 1 have
        none)."""
        return tuple(port_label(dim, sign) for dim, d in enumerate(self.topology.radices)
                     if d > 1 for sign in (1, -1))

    @property
    def name(self) -> str:
        """``twisted_8x4_tyx4_bubble`` (``_t0`` untwisted), plus ``_w``/``_l``/``_d`` for
        non-default sizes as for a twin torus."""
        topology = self.topology
        twists = "_".join(f"t{dimension_name(j)}{dimension_name(k)}{t}".lower().replace("-", "m")
                          for j, k, t in topology.twists) or "t0"
        return (f"twisted_{'x'.join(map(str, topology.radices))}_{twists}_{self.escape}"
                f"{self.size_suffix}")

    def to_dict(self) -> dict:
        return {"topology": "twisted", "radices": list(self.topology.radices),
                "twists": {dimension_name(j) + dimension_name(k): t
                           for j, k, t in self.topology.twists},
                "escape": self.escape, "flit_width": self.flit_width,
                "packet_length": self.packet_length, "buffer_depth": self.buffer_depth,
                "pipeline": self.pipeline}

    def node_of(self, terminal: int) -> tuple[int, ...]:
        node, result = terminal, []
        for d in self.topology.radices:
            result.append(node % d)
            node //= d
        return tuple(result)


def parse_twists(text: str, n: int) -> dict[str, int]:
    """``"YX=4"`` or ``"YX=4,ZX=1"`` → ``{"YX": 4, "ZX": 1}``. Raises ``ValueError``."""
    twists = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        pair, equals, amount = item.partition("=")
        if not equals or not re.fullmatch(r"[+-]?[0-9]{1,9}", amount.strip()):
            raise ValueError(f"twist {item!r} must be a pair of dimensions and an integer, "
                             "such as YX=4")
        j, k = parse_dimension_pair(pair, n)
        key = dimension_name(j) + dimension_name(k)
        if key in twists:
            raise ValueError(f"twist t_{key} is given twice")
        twists[key] = int(amount)
    return twists


def twisted_network_from_dict(values: dict, labels: dict | str = "configuration"
                              ) -> TwistedNetworkConfig:
    """Build a :class:`TwistedNetworkConfig` from plain values (the keys of
    :data:`TWISTED_KEYS`; :meth:`TwistedNetworkConfig.to_dict` writes them). ``radices``
    (2 or 3 of them, each 2 to 64; default 8,4) and ``twists`` (a mapping ``{"YX": 4}`` or the
    text ``YX=4,ZX=1``; default none: the plain torus, t = 0). Raises ``TypeError`` /
    ``ValueError`` naming the label, the value and what is allowed, before anything is
    built; a torus that is not node-symmetric is refused naming 004's Theorem."""
    names = checks.labels_of(values, labels)
    unknown = sorted(set(values) - set(TWISTED_KEYS))
    if unknown:
        raise ValueError(f"{names[unknown[0]]}: unknown key; allowed keys: "
                         f"{', '.join(TWISTED_KEYS)}")
    if values.get("topology", "twisted") != "twisted":
        raise ValueError(f"{names['topology']} must be 'twisted', not {values['topology']!r}")
    label = names.get("radices", "radices")
    radices = checks.check_int_tuple(label, values.get("radices", (8, 4)), minimum=2)
    for radix in radices:
        if radix > MAX_RADIX:
            raise ValueError(f"{label} {','.join(map(str, radices))}: each radix must be from "
                             f"2 to {MAX_RADIX}, not {radix}")
    if len(radices) not in (2, 3):
        raise ValueError(f"{label} {','.join(map(str, radices))}: a twisted torus here must "
                         f"have 2 or 3 dimensions, not {len(radices)}")
    nodes = functools.reduce(lambda a, b: a * b, radices)
    if nodes > MAX_NODES:
        raise ValueError(f"{label} {','.join(map(str, radices))}: {nodes} routers; at most "
                         f"{MAX_NODES} are allowed")
    given = values.get("twists", {})
    twist_label = names.get("twists", "twists")
    try:
        twists = parse_twists(given, len(radices)) if isinstance(given, str) else given
        topology = TwistedTorusConfig(radices, twists)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{twist_label} {_shown(given)}: {error}") from None
    violations = theorem_violations(topology)
    if violations:
        i, j, k = violations[0]
        raise ValueError(
            f"{twist_label} {_shown(given)}: {topology.label()} is not node-symmetric (004's "
            f"Theorem: dimension {dimension_name(j)} both receives t_{dimension_name(i)}"
            f"{dimension_name(j)} and applies t_{dimension_name(j)}{dimension_name(k)}), so "
            "routing from coordinate differences does not apply; only node-symmetric twists "
            "are allowed")
    escape = values.get("escape", "bubble")
    checks.check_choice(names.get("escape", "escape"), escape, ESCAPES)
    sizes = sizes_from_dict(values, names, bubble=escape == "bubble")
    network = TwistedNetworkConfig(topology, escape, **sizes)
    if network.flit_width < network.header_width:
        raise ValueError(f"{names.get('flit_width', 'flit_width')} {network.flit_width}: a head "
                         f"flit of {topology.label()} needs {network.header_width} bits (the "
                         "destination's coordinates and the source)")
    return network


def _shown(twists) -> str:
    if isinstance(twists, dict):
        return ",".join(f"{key}={value}" for key, value in twists.items())
    return str(twists)


def node_label(node: tuple[int, ...]) -> str:
    return ",".join(map(str, node))


def crosses(topology: TwistedTorusConfig, node, dim: int, sign: int) -> bool:
    """Whether the hop from ``node`` along ``dim`` in direction ``sign`` takes the dimension's
    peripheral (possibly twisted) link."""
    return node[dim] == (topology.radices[dim] - 1 if sign > 0 else 0)


@functools.lru_cache(maxsize=16)
def _cycles(topology: TwistedTorusConfig) -> dict:
    """``(node, dim, sign)`` → the cycle its channel lies on: the smallest node (in index
    order) reached by following ``dim`` in direction ``sign`` from it."""
    cycle = {}
    for dim, d in enumerate(topology.radices):
        if d < 2:
            continue
        for sign in (1, -1):
            for start in topology.nodes():
                if (start, dim, sign) in cycle:
                    continue
                members, node = [], start
                while True:
                    members.append(node)
                    node = topology.step(node, dim, sign)
                    if node == start:
                        break
                name = min(members, key=topology.index)
                for member in members:
                    cycle[member, dim, sign] = name
    return cycle


def scheme_channels(network: TwistedNetworkConfig, hops: list[Hop]) -> list:
    """The channels a path holds under the network's escape scheme: ``(node, dim, sign)``
    with one VC (``none``), ``(node, dim, sign, vc)`` with the dateline, ``(dim, sign,
    cycle)`` per cycle entered with the bubble."""
    topology = network.topology
    if network.escape == "none":
        return hops
    if network.escape == "bubble":
        cycles = _cycles(topology)
        entered = [(dim, sign, cycles[node, dim, sign]) for node, dim, sign in hops]
        return [c for i, c in enumerate(entered) if i == 0 or entered[i - 1] != c]
    channels, crossed, previous = [], False, None
    for node, dim, sign in hops:
        if (dim, sign) != previous:
            crossed = False
        channels.append((node, dim, sign, int(crossed)))
        crossed = crossed or crosses(topology, node, dim, sign)
        previous = (dim, sign)
    return channels


def router_hops(network: TwistedNetworkConfig, source: int,
                destination: int) -> list[tuple[str, str, int]]:
    """The links a packet from terminal ``source`` to ``destination`` crosses, as ``(router
    label, output port, VC)``."""
    topology = network.topology
    hops = routing_path(topology, network.node_of(source), network.node_of(destination))
    vcs = ([vc for *_, vc in scheme_channels(network, hops)]
           if network.escape == "dateline" else [0] * len(hops))
    return [(node_label(node), port_label(dim, sign), vc)
            for (node, dim, sign), vc in zip(hops, vcs)]


def dependency_graph(network: TwistedNetworkConfig) -> ChannelDependencyGraph:
    """The dependencies of every pair's path under the escape scheme (with the bubble, of the
    cycles entered)."""
    topology = network.topology
    nodes = list(topology.nodes())
    return ChannelDependencyGraph.from_paths(
        scheme_channels(network, routing_path(topology, a, b))
        for a in nodes for b in nodes if a != b)
