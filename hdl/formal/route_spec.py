"""Route computes written again from the papers' formulas, and the proof that a route
compute equals its specification for every input of the configured size.

The specifications here are arithmetic over the header and the node's coordinates, built
from the papers' statements of the routing functions (003 Alg. 1–6 for twin tori, 001's
DESTRO for fat trees, 002 Alg. 1 and §2 for the king family), not
from the route computes under test nor from tables of the reference model; only the port
layout of a card (which ports it has, in which order) is read from the configuration.
"""

from amaranth.hdl import Assume, Cat, Const, Elaboratable, Module, Mux, Signal, Value, signed
from amaranth.lib.wiring import In

from twinnet.model.twin import INTERNAL, PE_PORT, Port

from ..fat_tree_route import FatTreeRouteCompute
from ..header_route import HeaderRouteCompute
from ..king_route import KingRouteCompute
from ..twin_route import TwinRouteCompute, card_ports
from .properties import Property, PropertySet

#: The properties of :class:`RouteComputeProof`: the whole result, or (for a specification
#: that leaves the VC and the bubble flag open) the output port.
PROPERTIES = [Property("route_compute_matches_spec",
                       "for every header, input VC and node, each input port's route compute "
                       "flags the same headers malformed as the specification and otherwise "
                       "gives its output port, VC mask and bubble flag"),
              Property("route_port_matches_spec",
                       "for every header, input VC and node, each input port's route compute "
                       "flags the same headers malformed as the specification and otherwise "
                       "gives its output port (its VCs, bubble flag and adaptive grades are "
                       "not specified)")]


class Expected:
    """What a specification says for one input: ``port``, ``mask``, ``bubble``,
    ``malformed`` (Amaranth values; ``mask`` and ``bubble`` None when it leaves them open) and
    ``assumptions`` on the inputs (what a network guarantees, e.g. a node's coordinates are
    in range)."""

    def __init__(self, port, mask, bubble, malformed, assumptions=()):
        self.port, self.mask, self.bubble, self.malformed = port, mask, bubble, malformed
        self.assumptions = list(assumptions)


def header_spec(m, rc, in_port: int) -> Expected:
    """The test routing of :class:`HeaderRouteCompute`: the header names the output port, its
    VC and the bubble flag; a port or VC that does not exist is malformed."""
    config, header = rc.config, rc.header
    exists = Const(0, 1)
    for port, count in enumerate(config.output_vc_counts):
        exists = exists | ((header.port == port) & (header.vc < count))
    return Expected(header.port, Const(1, config.max_vc_count) << header.vc, header.bubble,
                    ~exists)


def _internal_channels(twin) -> dict:
    """The internal link's VCs (003 §6.3.1–2, numbered as 003 §6.3.2 numbers configuration D):
    type 1 first (when some dimension is not split), then per split dimension its up and low
    VCs (VC mode) or its one VC (bubble mode), then type 3; one VC in mode ``none``."""
    if twin.mode == "none":
        return {"type1": 0, "type3": 0, **{dim: 0 for dim in range(twin.n)}}
    split = twin.configuration.split_dims
    channels, number = {}, 0
    if len(split) < twin.n:
        channels["type1"], number = 0, 1
    for dim in split:
        channels[dim] = number
        number += 2 if twin.mode == "vc" else 1
    channels["type3"] = number
    return channels


def twin_spec(m, rc, in_port: int) -> Expected:
    """Twin DOR (003 Alg. 1–6): the lowest differing dimension, its ring direction by
    ``(d - c) mod k`` with the positive tie, the internal link when that port is on the other
    card; VCs up/low by ``d > c`` (VC mode) and bubbles on entering a ring (bubble mode)."""
    twin, card = rc.twin, rc.card
    ports = card_ports(twin, card)
    arrival = ports[in_port]
    channels = _internal_channels(twin)
    here = [rc.node_static[f"o{dim}"] for dim in range(twin.n)]
    dest = [rc.header.node[f"o{dim}"] for dim in range(twin.n)]
    assumptions = [c < k for c, k in zip(here, twin.radices)]
    malformed = Cat(d >= k for d, k in zip(dest, twin.radices)).any()
    if twin.card_count == 1:
        malformed = malformed | (rc.header.pe != 0)
    # Default: every digit equal, the packet is for this node.
    to_pe = (twin.card_count == 1) | (rc.header.pe == card)
    port = Mux(to_pe, ports.index(PE_PORT), ports.index(INTERNAL) if INTERNAL in ports else 0)
    vc = Mux(to_pe, 0, channels["type3"])
    bubble = Const(0, 1)
    for dim in reversed(range(twin.n)):  # the lowest differing dimension is applied last
        c, d, k = here[dim], dest[dim], twin.radices[dim]
        ahead = (d + k - c) % k
        plus = (ahead * 2) <= k
        up = d > c
        step_port, step_vc, step_bubble = _dimension_move(twin, card, ports, arrival, dim,
                                                          plus, up, channels)
        port = Mux(c != d, step_port, port)
        vc = Mux(c != d, step_vc, vc)
        bubble = Mux(c != d, step_bubble, bubble)
    mask = Const(1, rc.config.max_vc_count) << vc
    return Expected(port, mask, bubble, malformed, assumptions)


def _dimension_move(twin, card, ports, arrival, dim, plus, up, channels):
    """Output port, VC and bubble flag for a packet whose DOR port is in dimension ``dim``
    (``+`` when ``plus``)."""
    results = []
    for sign in (+1, -1):
        wanted = Port.external(dim, sign)
        # Entering the ring: unless it arrived in the same dimension, or over the internal
        # link toward a split dimension (it continues that ring).
        enters = twin.mode == "bubble" and not (
            (arrival.is_external and arrival.dim == dim)
            or (arrival == INTERNAL and dim in twin.configuration.split_dims))
        if twin.configuration.card_of(wanted) == card:
            vc = Mux(up, 0, 1) if twin.mode == "vc" else Const(0, 1)
            results.append((Const(ports.index(wanted)), vc, Const(int(enters), 1)))
        elif dim not in twin.configuration.split_dims or twin.mode == "none":
            results.append((Const(ports.index(INTERNAL)), Const(channels["type1"]),
                            Const(0, 1)))
        else:
            base = channels[dim]
            vc = Mux(up, base, base + 1) if twin.mode == "vc" else Const(base)
            results.append((Const(ports.index(INTERNAL)), vc, Const(int(enters), 1)))
    (p_port, p_vc, p_bubble), (m_port, m_vc, m_bubble) = results
    return Mux(plus, p_port, m_port), Mux(plus, p_vc, m_vc), Mux(plus, p_bubble, m_bubble)


def destro_spec(m, rc, in_port: int) -> Expected:
    """DESTRO (001 App. A.7.1) on switch ``<s, o>``: the destination terminal ``h`` is below the
    switch when its number, with the digits below ``s + 1`` cleared, is the switch's prefix
    ``sum(o_{i-1} k^i, i > s)``; then down through port ``h_s``, else up through ``k + h_s``.
    A half of a twin switch reaches the other half's ports over internal port ``port mod
    r`` (001 §4.1, the twin switch); without internal ports such a port is unreachable
    (malformed)."""
    k, n = rc.tree.k, rc.tree.n
    r, local = rc.internal_port_count, list(rc.external_ports)
    h = [rc.header[f"h{i}"] for i in range(n)]
    o = [rc.node_static[f"o{i}"] for i in range(n - 1)]
    stage = rc.node_static.stage
    assumptions = [stage < n, *(digit < k for digit in o)]
    malformed = Cat(digit >= k for digit in h).any()
    number = sum(digit * k ** i for i, digit in enumerate(h))
    below, digit_s = Const(0, 1), Const(0, 1)
    for s in range(n):
        span = k ** (s + 1)
        prefix = sum(o[i - 1] * k ** i for i in range(s + 1, n))
        here = stage == s
        below = below | (here & ((number - number % span) == prefix))
        digit_s = Mux(here, h[s], digit_s)
    wanted = Mux(below, digit_s, digit_s + k)
    port = Const(0, range(max(2, rc.config.port_count)))
    reachable = Const(0, 1)
    for switch_port in range(2 * k):
        if switch_port in local:
            target = local.index(switch_port)
        elif r:
            target = len(local) + switch_port % r
        else:
            continue
        port = Mux(wanted == switch_port, target, port)
        reachable = reachable | (wanted == switch_port)
    return Expected(port, Const(1, rc.config.max_vc_count), Const(0, 1),
                    malformed | ~reachable, assumptions)


def _ring(b, a, side: int):
    """The signed ring offset from ``a`` to ``b`` on a ring of ``side``: ``(b - a) mod side``,
    less ``side`` above half of it (an offset of exactly half goes +)."""
    ahead = _ahead(b, a, side)
    return Mux(ahead * 2 > side, ahead - side, ahead)


def _ahead(b, a, side: int):
    """``(b - a) mod side`` for ``a``, ``b`` in ``[0, side)`` (a conditional subtraction: a
    divider by a ``side`` that is not a power of two would cost the prover minutes)."""
    return Mux(b >= a, b - a, b + side - a).as_signed()


def _diagonal_mesh_length(cx, cy):
    """Hops of the diagonal-mesh route for offset ``(cx, cy)`` (002 §2): the larger
    magnitude when both have one sign, else the sum of the magnitudes."""
    same = ((cx >= 0) & (cy >= 0)) | ((cx <= 0) & (cy <= 0))
    ax, ay = abs(cx), abs(cy)
    return Mux(same, Mux(ax >= ay, ax, ay), ax + ay)


def _king_offset(m, rc):
    """The offset the route follows: plain on a mesh, the ring offsets on a torus, and on DT
    002 Alg. 1's wrap-around image of the destination with the shortest diagonal-mesh route
    (the first of ``(x, y)``, ``(x - s, y - s)``, ``(x - s, y)``, ``(x, y - s)`` on a tie).
    Intermediate values are signals of ``m``: an expression used twice is converted twice."""
    topology = rc.network.topology
    side, width = topology.side, rc.network.coordinate_width + 2
    here, there = rc.node_static, rc.header
    p = rc.port_index
    dx, dy = Signal(signed(width), name=f"spec_dx_{p}"), Signal(signed(width), name=f"spec_dy_{p}")
    if not topology.wrap:
        m.d.comb += [dx.eq(there.x - here.x), dy.eq(there.y - here.y)]
    elif topology.kind != "DT":
        m.d.comb += [dx.eq(_ring(there.x, here.x, side)), dy.eq(_ring(there.y, here.y, side))]
    else:
        x, y = Signal(signed(width), name=f"spec_x_{p}"), Signal(signed(width), name=f"spec_y_{p}")
        m.d.comb += [x.eq(_ahead(there.x, here.x, side)), y.eq(_ahead(there.y, here.y, side))]
        images = [(x, y), (x - side, y - side), (x - side, y), (x, y - side)]
        # The first shortest image: each stage keeps the earlier one unless strictly longer.
        best_x, best_y, best = x, y, Signal(range(2 * side + 1), name=f"spec_best_{p}_0")
        m.d.comb += best.eq(_diagonal_mesh_length(x, y))
        for k, (cx, cy) in enumerate(images[1:], 1):
            length = Signal(range(2 * side + 1), name=f"spec_length_{p}_{k}")
            stage_x = Signal(signed(width), name=f"spec_x_{p}_{k}")
            stage_y = Signal(signed(width), name=f"spec_y_{p}_{k}")
            stage = Signal(range(2 * side + 1), name=f"spec_best_{p}_{k}")
            m.d.comb += [length.eq(_diagonal_mesh_length(cx, cy)),
                         stage_x.eq(Mux(length < best, cx, best_x)),
                         stage_y.eq(Mux(length < best, cy, best_y)),
                         stage.eq(Mux(length < best, length, best))]
            best_x, best_y, best = stage_x, stage_y, stage
        m.d.comb += [dx.eq(best_x), dy.eq(best_y)]
    return dx, dy


def king_spec(m, rc, in_port: int) -> Expected | None:
    """The king family's deterministic move (002 §2–3; the escape move under adaptive
    routing): DOR (x while ``dx != 0``, then y), diagonal (with offsets of one sign: x while
    ``|dx| > |dy|``, z when equal, y while smaller; otherwise DOR) or Knaive (as diagonal for
    one sign; for opposite signs t instead of z); arrived: the PE port the header names.
    Ports the router lacks (a mesh border) and coordinates or PEs out of range are malformed.
    None for DT with pseudo-random ties (not a function of the inputs)."""
    network = rc.network
    side = network.topology.side
    if network.ties != "first":
        return None
    here, there = rc.node_static, rc.header
    assumptions = [here.x < side, here.y < side]
    malformed = (there.x >= side) | (there.y >= side)
    pe = Const(0, 1)
    if network.pe_width:
        pe = there.pe
        malformed = malformed | (pe >= network.pe_ports)
    dx, dy = _king_offset(m, rc)
    ax = Signal(range(2 * side), name=f"spec_ax_{in_port}")
    ay = Signal(range(2 * side), name=f"spec_ay_{in_port}")
    m.d.comb += [ax.eq(abs(dx)), ay.eq(abs(dy))]
    same = ((dx >= 0) & (dy >= 0)) | ((dx <= 0) & (dy <= 0))
    x, y = Mux(dx > 0, 0, 1), Mux(dy > 0, 0, 1)  # 0: the + port, 1: the - port
    moves = {"dor": [(dx != 0, "x", x), (dy != 0, "y", y)]}
    moves["diagonal"] = [(same & (ax > ay), "x", x), (same & (ax < ay), "y", y),
                         (same & (ax != 0), "z", x), *moves["dor"]]
    moves["knaive"] = [(ax > ay, "x", x), (ax < ay, "y", y), (same & (ax != 0), "z", x),
                       (ax != 0, "t", y)]
    local = {label: index for index, label in enumerate(rc.ports)}
    pes = [local[f"pe{k}"] for k in range(network.pe_ports)]
    port = Const(pes[0], range(max(2, len(rc.ports))))
    for k, index in enumerate(pes[1:], 1):
        port = Mux(pe == k, index, port)
    present = Const(1, 1)
    for condition, axis, minus in reversed(moves[network.escape_routing]):
        plus_index, minus_index = local.get(f"{axis}+"), local.get(f"{axis}-")
        index = Mux(minus, minus_index or 0, plus_index or 0)
        exists = Mux(minus, int(minus_index is not None), int(plus_index is not None))
        port = Mux(condition, index, port)
        present = Mux(condition, exists, present)
    return Expected(port, None, None, malformed | ~present, assumptions)


#: Specifications by route compute class.
SPECS = {HeaderRouteCompute: header_spec, TwinRouteCompute: twin_spec,
         FatTreeRouteCompute: destro_spec, KingRouteCompute: king_spec}


def spec_for(rc):
    """The specification of route compute ``rc`` (a function ``(m, rc, in_port) ->
    Expected`` that may add named signals to module ``m``), or None when there is none
    (yet)."""
    for cls, spec in SPECS.items():
        if isinstance(rc, cls) and (spec is not king_spec or rc.network.ties == "first"):
            return spec
    return None


class RouteComputeProof(Elaboratable):
    """Each input port's route compute against its specification, for every input.

    Parameters:
        route_computes: one route compute per input port (as a router builds them).
        unit: the unit's name in reports.
    """

    def __init__(self, route_computes: list, unit: str = "route compute"):
        self.route_computes = route_computes
        self.properties = PropertySet(unit, PROPERTIES)

    def ports(self) -> list:
        """Every route compute's inputs but ``in_port`` (the router ties it off)."""
        return [Value.cast(value) for rc in self.route_computes
                for path, member, value in rc.signature.flatten(rc)
                if member.flow == In and path != ("in_port",)]

    def elaborate(self, platform):
        m = Module()
        for p, rc in enumerate(self.route_computes):
            m.submodules[f"route_{p}"] = rc
            m.d.comb += rc.in_port.eq(p)
            expected = spec_for(rc)(m, rc, p)
            count = rc.config.vc_counts[p]
            assumptions = [*expected.assumptions, rc.in_vc < count]
            m.d.comb += [Assume(test) for test in assumptions]
            # Named, so that a counterexample trace shows what the specification says.
            port = Signal.like(rc.out_port, name=f"expected_port_{p}")
            malformed = Signal(name=f"expected_malformed_{p}")
            m.d.comb += [port.eq(expected.port), malformed.eq(expected.malformed)]
            if expected.mask is None:
                self.properties.check(m, "route_port_matches_spec", (
                    (rc.malformed == malformed) & (malformed | (rc.out_port == port))))
                continue
            mask = Signal.like(rc.vc_mask, name=f"expected_mask_{p}")
            bubble = Signal(name=f"expected_bubble_{p}")
            m.d.comb += [mask.eq(expected.mask), bubble.eq(expected.bubble)]
            self.properties.check(m, "route_compute_matches_spec", (
                (rc.malformed == malformed)
                & (malformed | ((rc.out_port == port) & (rc.vc_mask == mask)
                                & (rc.bubble == bubble)))))
        return m
