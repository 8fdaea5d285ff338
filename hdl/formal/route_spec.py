"""Route computes written again from the papers' formulas, and the proof that a route
compute equals its specification for every input of the configured size.

The specifications are arithmetic over the header and the node's coordinates, built from the
papers' statements of the routing functions (003 Alg. 1–6 for twin tori, 001's DESTRO for fat
trees here; 002 §2–3 and Alg. 1 for the king family in :mod:`.king_spec`; 004 §II's twisted
torus in :mod:`.twisted_spec`) and the documented escape rules
(:mod:`twinnet.hdl.ring_escape`), not from the route computes under test nor from tables of
the reference model; only the port layout of a router (which ports it has, in which order)
is read from the configuration.
"""

from amaranth.hdl import Assume, Cat, Const, Elaboratable, Module, Mux, Signal, Value
from amaranth.lib.wiring import In

from twinnet.model.twin import INTERNAL, PE_PORT, Port

from ..fat_tree_route import FatTreeRouteCompute
from ..header_route import HeaderRouteCompute
from ..king_route import KingRouteCompute
from ..twin_route import TwinRouteCompute, card_ports
from ..twisted_route import TwistedRouteCompute
from .king_spec import king_spec
from .properties import Property, PropertySet
from .spec_common import ExpectedRoute
from .twisted_spec import twisted_spec

#: The properties of :class:`RouteComputeProof`: the whole result, or (for a specification
#: that leaves the VC and the bubble flag open) the output port, or (for one that allows
#: several ports) the result against the ports allowed; and, for adaptive routing, the
#: grades.
PROPERTIES = [Property("route_compute_matches_spec",
                       "for every header, input VC and node, each input port's route compute "
                       "flags the same headers malformed as the specification and otherwise "
                       "gives its output port, VC mask and bubble flag (under adaptive "
                       "routing: of the escape move)"),
              Property("route_port_matches_spec",
                       "for every header, input VC and node, each input port's route compute "
                       "flags the same headers malformed as the specification and otherwise "
                       "gives its output port (its VCs and bubble flag are not specified)"),
              Property("route_compute_within_spec",
                       "for every header, input VC and node, each input port's route compute "
                       "flags the same headers malformed as the specification and otherwise "
                       "gives one of the output ports it allows, with the VC mask and bubble "
                       "flag it gives for that port (a routing that chooses among several "
                       "ports by state, e.g. an LFSR)"),
              Property("route_grades_match_spec",
                       "for every header, input VC and node, each input port's adaptive route "
                       "compute offers, for every header not malformed, the grade-1 and "
                       "grade-2 outputs of the specification, on the adaptive VCs it names")]


def header_spec(m, rc, in_port: int) -> ExpectedRoute:
    """The test routing of :class:`HeaderRouteCompute`: the header names the output port, its
    VC and the bubble flag; a port or VC that does not exist is malformed."""
    config, header = rc.config, rc.header
    exists = Const(0, 1)
    for port, count in enumerate(config.output_vc_counts):
        exists = exists | ((header.port == port) & (header.vc < count))
    return ExpectedRoute(header.port, Const(1, config.max_vc_count) << header.vc,
                         header.bubble, ~exists)


def _internal_vcs(twin) -> dict:
    """The internal link's VCs (003 §6.3.1–2, numbered as 003 §6.3.2 numbers configuration D):
    type 1 first (when some dimension is not split), then per split dimension its up and low
    VCs (VC mode) or its one VC (bubble mode), then type 3; one VC in mode ``none``."""
    if twin.mode == "none":
        return {"type1": 0, "type3": 0, **{dim: 0 for dim in range(twin.n)}}
    split = twin.configuration.split_dims
    vcs, number = {}, 0
    if len(split) < twin.n:
        vcs["type1"], number = 0, 1
    for dim in split:
        vcs[dim] = number
        number += 2 if twin.mode == "vc" else 1
    vcs["type3"] = number
    return vcs


def twin_spec(m, rc, in_port: int) -> ExpectedRoute:
    """Twin DOR (003 Alg. 1–6): the lowest differing dimension, its ring direction by
    ``(d - c) mod k`` with the positive tie, the internal link when that port is on the other
    card; VCs up/low by ``d > c`` (VC mode) and bubbles on entering a ring (bubble mode)."""
    twin, card = rc.twin, rc.card
    ports = card_ports(twin, card)
    arrival = ports[in_port]
    vcs = _internal_vcs(twin)
    here = [rc.node_static[f"o{dim}"] for dim in range(twin.n)]
    dest = [rc.header.node[f"o{dim}"] for dim in range(twin.n)]
    assumptions = [c < k for c, k in zip(here, twin.radices)]
    malformed = Cat(d >= k for d, k in zip(dest, twin.radices)).any()
    if twin.card_count == 1:
        malformed = malformed | (rc.header.pe != 0)
    # Default: every digit equal, the packet is for this node.
    to_pe = (twin.card_count == 1) | (rc.header.pe == card)
    port = Mux(to_pe, ports.index(PE_PORT), ports.index(INTERNAL) if INTERNAL in ports else 0)
    vc = Mux(to_pe, 0, vcs["type3"])
    bubble = Const(0, 1)
    for dim in reversed(range(twin.n)):  # the lowest differing dimension is applied last
        c, d, k = here[dim], dest[dim], twin.radices[dim]
        ahead = (d + k - c) % k
        plus = (ahead * 2) <= k
        up = d > c
        step_port, step_vc, step_bubble = _dimension_move(twin, card, ports, arrival, dim,
                                                          plus, up, vcs)
        port = Mux(c != d, step_port, port)
        vc = Mux(c != d, step_vc, vc)
        bubble = Mux(c != d, step_bubble, bubble)
    mask = Const(1, rc.config.max_vc_count) << vc
    return ExpectedRoute(port, mask, bubble, malformed, assumptions)


def _dimension_move(twin, card, ports, arrival, dim, plus, up, vcs):
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
            results.append((Const(ports.index(INTERNAL)), Const(vcs["type1"]),
                            Const(0, 1)))
        else:
            base = vcs[dim]
            vc = Mux(up, base, base + 1) if twin.mode == "vc" else Const(base)
            results.append((Const(ports.index(INTERNAL)), vc, Const(int(enters), 1)))
    (p_port, p_vc, p_bubble), (m_port, m_vc, m_bubble) = results
    return Mux(plus, p_port, m_port), Mux(plus, p_vc, m_vc), Mux(plus, p_bubble, m_bubble)


def destro_spec(m, rc, in_port: int) -> ExpectedRoute:
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
    every_vc = Const((1 << rc.config.max_vc_count) - 1, rc.config.max_vc_count)
    return ExpectedRoute(port, every_vc, Const(0, 1), malformed | ~reachable, assumptions)


#: Specifications by route compute class.
SPECS = {HeaderRouteCompute: header_spec, TwinRouteCompute: twin_spec,
         FatTreeRouteCompute: destro_spec, KingRouteCompute: king_spec,
         TwistedRouteCompute: twisted_spec}


def spec_for(rc):
    """The specification of route compute ``rc`` (a function ``(m, rc, in_port) ->
    ExpectedRoute`` that may add named signals to module ``m``), or None when there is none:
    a king route compute with broadcast (the routers that replicate are not proven)."""
    if isinstance(rc, KingRouteCompute) and rc.network.broadcast:
        return None
    for cls, spec in SPECS.items():
        if isinstance(rc, cls):
            return spec
    return None


class RouteComputeProof(Elaboratable):
    """Each input port's route compute against its specification, for every input.

    Parameters:
        route_computes: one route compute per input port (as a router builds them).
        unit: the unit's name in reports.
        spec: the specification (a function as :func:`spec_for` returns); by default
            :func:`spec_for`'s (a test may give a wrong one to see the proof fail).
    """

    def __init__(self, route_computes: list, unit: str = "route compute", spec=None):
        self.route_computes = route_computes
        self.spec = spec
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
            expected = (self.spec or spec_for(rc))(m, rc, p)
            count = rc.config.vc_counts[p]
            assumptions = [*expected.assumptions, rc.in_vc < count]
            m.d.comb += [Assume(test) for test in assumptions]
            # Named, so that a counterexample trace shows what the specification says.
            malformed = Signal(name=f"expected_malformed_{p}")
            m.d.comb += malformed.eq(expected.malformed)
            if rc.adaptive_vcs:
                self._check_grades(m, rc, p, expected, malformed)
            if expected.port is None:
                port_ok = Signal(name=f"expected_port_allowed_{p}")
                m.d.comb += port_ok.eq(expected.allowed)
            else:
                port = Signal.like(rc.out_port, name=f"expected_port_{p}")
                m.d.comb += port.eq(expected.port)
                port_ok = rc.out_port == port
            if expected.mask is None:
                self.properties.check(m, "route_port_matches_spec", (
                    (rc.malformed == malformed) & (malformed | port_ok)))
                continue
            mask = Signal.like(rc.vc_mask, name=f"expected_mask_{p}")
            bubble = Signal(name=f"expected_bubble_{p}")
            m.d.comb += [mask.eq(expected.mask), bubble.eq(expected.bubble)]
            result = (rc.malformed == malformed) & (malformed | (
                port_ok & (rc.vc_mask == mask) & (rc.bubble == bubble)))
            if expected.port is None:
                self.properties.check(m, "route_compute_within_spec", result)
            else:
                self.properties.check(m, "route_compute_matches_spec", result)
        return m

    def _check_grades(self, m, rc, p: int, expected, malformed) -> None:
        """``route_grades_match_spec`` for the adaptive route compute ``rc`` of port ``p``."""
        if expected.grades is None:
            raise ValueError(f"the specification of {type(rc).__name__} gives no grades for "
                             "an adaptive route compute")
        grade_1 = Signal.like(rc.grade_1, name=f"expected_grade_1_{p}")
        grade_2 = Signal.like(rc.grade_2, name=f"expected_grade_2_{p}")
        m.d.comb += [grade_1.eq(expected.grades[0]), grade_2.eq(expected.grades[1])]
        # The adaptive VCs are a parameter of the route compute, not an output: a constant.
        vcs = Const(int(rc.adaptive_vcs == expected.adaptive_vcs), 1)
        self.properties.check(m, "route_grades_match_spec", vcs & (
            malformed | ((rc.grade_1 == grade_1) & (rc.grade_2 == grade_2))))
