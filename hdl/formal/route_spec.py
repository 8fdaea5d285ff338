"""The proof that a route compute equals its specification for every input of the configured
size, and the specification of the proofs' header-routed test routing (:func:`header_spec`).

A family's specification is its own (:attr:`twinnet.families.Family.route_spec` names it):
arithmetic over the header and the node's coordinates, built from the paper's statement of the
routing function and the documented escape rules (:mod:`twinnet.hdl.ring_escape`), not from
the route compute under test nor from tables of the reference model; only the port layout of
a router (which ports it has, in which order) is read from the configuration.
"""

from amaranth.hdl import Assume, Const, Elaboratable, Module, Signal, Value
from amaranth.lib.wiring import In

from .properties import Property, PropertySet
from .spec_common import ExpectedRoute

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
              Property("route_copies_match_spec",
                       "for every header, input VC and node, each input port's route compute "
                       "tells broadcasts as the specification does and, for a broadcast, flags "
                       "the same ones malformed and otherwise gives the outputs of its copies, "
                       "the rings they enter and the route fields they carry on (the TTL)"),
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


class RouteComputeProof(Elaboratable):
    """Each input port's route compute against its specification, for every input.

    Parameters:
        route_computes: one route compute per input port (as a router builds them).
        spec: the specification, a function ``(m, rc, in_port) -> ExpectedRoute`` that may add
            named signals to module ``m`` (a test may give a wrong one to see the proof fail).
        unit: the unit's name in reports.
    """

    def __init__(self, route_computes: list, spec, unit: str = "route compute"):
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
            check = lambda name, test: self.properties.check(m, name, test,  # noqa: E731
                                                            src_loc_at=1)
            assumptions = check_spec(m, rc, p, self.spec, check)
            m.d.comb += [Assume(test) for test in [*assumptions,
                                                   rc.in_vc < rc.config.vc_counts[p]]]
        return m


def check_spec(m, rc, p: int, spec, check, when=1) -> list:
    """Assert, through ``check(name, test)`` (one of :data:`PROPERTIES`' names; a test per
    line), that route compute ``rc`` of input port ``p`` gives what ``spec`` says for its
    inputs whenever ``when``; returns the specification's assumptions on the inputs.

    The route compute's own proof (:class:`RouteComputeProof`) checks it for every input; a
    router's (:mod:`.router`) for every head its input unit computes a route for, with the
    route compute wired into the router."""
    when = Value.cast(when)  # (a Python 1 would invert to -2, true)
    expected = spec(m, rc, p)
    # Named, so that a counterexample trace shows what the specification says.
    malformed = Signal(name=f"expected_malformed_{p}")
    m.d.comb += malformed.eq(expected.malformed)
    unicast = Const(1, 1)
    if expected.copies is not None:
        unicast = ~_check_copies(m, rc, p, expected.copies, check, when)
    if rc.adaptive_vcs:
        _check_grades(m, rc, p, expected, malformed | ~unicast, check, when)
    if expected.port is None:
        port_ok = Signal(name=f"expected_port_allowed_{p}")
        m.d.comb += port_ok.eq(expected.allowed)
    else:
        port = Signal.like(rc.out_port, name=f"expected_port_{p}")
        m.d.comb += port.eq(expected.port)
        port_ok = rc.out_port == port
    unchecked = ~when | ~unicast
    if expected.mask is None:
        check("route_port_matches_spec", unchecked | (
            (rc.malformed == malformed) & (malformed | port_ok)))
        return expected.assumptions
    mask = Signal.like(rc.vc_mask, name=f"expected_mask_{p}")
    bubble = Signal(name=f"expected_bubble_{p}")
    m.d.comb += [mask.eq(expected.mask), bubble.eq(expected.bubble)]
    result = unchecked | ((rc.malformed == malformed) & (malformed | (
        port_ok & (rc.vc_mask == mask) & (rc.bubble == bubble))))
    if expected.port is None:
        check("route_compute_within_spec", result)
    else:
        check("route_compute_matches_spec", result)
    return expected.assumptions


def _check_copies(m, rc, p: int, copies, check, when):
    """``route_copies_match_spec`` for the route compute ``rc`` of port ``p`` (whenever
    ``when``); returns "the header is a broadcast" by the specification."""
    broadcast = Signal(name=f"expected_broadcast_{p}")
    malformed = Signal(name=f"expected_copy_malformed_{p}")
    targets = Signal.like(rc.targets, name=f"expected_targets_{p}")
    enter = Signal.like(rc.enter, name=f"expected_enter_{p}")
    header_out = Signal.like(rc.header_out, name=f"expected_header_out_{p}")
    m.d.comb += [broadcast.eq(copies.broadcast), malformed.eq(copies.malformed),
                 targets.eq(copies.targets), enter.eq(copies.enter),
                 header_out.eq(copies.header_out)]
    check("route_copies_match_spec", ~when | ((rc.broadcast == broadcast) & (
        ~broadcast | ((rc.malformed == malformed) & (malformed | (
            (rc.targets == targets) & (rc.enter == enter)
            & (rc.header_out.as_value() == header_out.as_value())))))))
    return broadcast


def _check_grades(m, rc, p: int, expected, unchecked, check, when) -> None:
    """``route_grades_match_spec`` for the adaptive route compute ``rc`` of port ``p``
    (whenever ``when``, and not where ``unchecked``: a malformed header or a broadcast)."""
    if expected.grades is None:
        raise ValueError(f"the specification of {type(rc).__name__} gives no grades for "
                         "an adaptive route compute")
    grade_1 = Signal.like(rc.grade_1, name=f"expected_grade_1_{p}")
    grade_2 = Signal.like(rc.grade_2, name=f"expected_grade_2_{p}")
    m.d.comb += [grade_1.eq(expected.grades[0]), grade_2.eq(expected.grades[1])]
    # The adaptive VCs are a parameter of the route compute, not an output: a constant.
    vcs = Const(int(rc.adaptive_vcs == expected.adaptive_vcs), 1)
    check("route_grades_match_spec", vcs & (
        ~when | unchecked | ((rc.grade_1 == grade_1) & (rc.grade_2 == grade_2))))
