"""King-family route compute in the Amaranth simulator, against the reference model.

Expected ports come from :func:`twinnet.model.king.routing_port` (the routing record of 002
§3 from the router's coordinates); expected bubble flags and dateline VCs from
:func:`twinnet.model.king.scheme_channels` on the two hops that bring a packet in and take it
out. Every (router, destination) pair of each kind is driven at sides 3 to 6. Under adaptive
routing the grades come from :func:`twinnet.model.king.profitable_vector` (hop-by-hop) and
:func:`twinnet.model.king.graded_vector` (2S), and the escape move from the same model
functions, with a packet on an adaptive VC entering its escape ring afresh. Broadcast copies
are propagated through the route computes' own results and compared with the model's
forwarding rule (:func:`twinnet.model.king.broadcast_sends`).
"""

from collections import Counter

import pytest
from route_sim import run_route_compute
from tiers import marked

from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.king import router_ports
from twinnet.hdl.king_route import KingRouteCompute, is_pe, pe_label
from twinnet.hdl.ring_escape import opposite
from twinnet.model.king import (
    KINDS,
    PORTS,
    broadcast_sends,
    graded_vector,
    profitable_vector,
    routing_port,
    scheme_channels,
)
from twinnet.model.king_network import KingNetworkConfig, tied_ports


def route_compute(network: KingNetworkConfig, ports, in_port: int) -> KingRouteCompute:
    vcs = network.vc_count
    config = RouterConfig(32, 1, tuple(PortConfig("pe") if is_pe(p) else
                                       PortConfig("network", vcs) for p in ports))
    return KingRouteCompute(config, in_port, network=network, ports=ports)


def run(dut, cases, extra=()):
    """Drive ``(here, destination, in_vc)``; return ``(out_port, vc_mask, bubble,
    malformed)`` of each, then the outputs named in ``extra``, sampled combinationally."""
    def drive(ctx, dut, case):
        here, there, vc, *pe = case
        ctx.set(dut.node_static.x, here[0])
        ctx.set(dut.node_static.y, here[1])
        ctx.set(dut.header.x, there[0])
        ctx.set(dut.header.y, there[1])
        if pe:
            ctx.set(dut.header.pe, pe[0])
        ctx.set(dut.in_vc, vc)

    return run_route_compute(dut, cases, drive, extra)


def expected(network: KingNetworkConfig, ports, in_label: str, here, there, vc: int):
    """``(out_port, vc_mask, bubble, malformed)`` from the model."""
    topology = network.topology
    port = routing_port(topology, here, there)
    if port is None:
        return ports.index(pe_label(0)), 1, 0, 0
    local = ports.index(port)
    if not topology.wrap or network.escape == "none":
        return local, 1, 0, 0
    if is_pe(in_label):  # injection: a first hop enters its ring on VC 0
        return local, 1, int(network.escape == "bubble"), 0
    previous = topology.neighbor(here, in_label)
    hops = [(previous, opposite(in_label)), (here, port)]
    scheme = scheme_channels(topology, hops, network.escape)
    if network.escape == "bubble":
        return local, 1, int(len(scheme) == 2), 0
    straight = port == opposite(in_label)
    out_vc = 1 if straight and vc == 1 else scheme[1][2]
    return local, 1 << out_vc, 0, 0


NETWORKS = [(kind, side, escape) for kind in KINDS for side in (3, 4, 5, 6)
            for escape in (("bubble", "dateline", "none") if kind in ("T", "DT", "KT")
                           else ("none",))]


#: Side 6 in the slow tier (sides 3 to 5 have an odd and an even side by default).
@pytest.mark.parametrize("kind, side, escape",
                         marked(NETWORKS, {case for case in NETWORKS if case[1] == 6}),
                         ids=[f"{k}{s}-{e}" for k, s, e in NETWORKS])
def test_every_router_and_destination(kind, side, escape):
    network = KingNetworkConfig.from_dict({"kind": kind, "side": side, "escape": escape})
    topology = network.topology
    # One router of every module kind (a torus: one; a mesh: every border shape).
    shapes = {}
    for node in topology.nodes():
        shapes.setdefault(router_ports(network, node), []).append(node)
    for ports, nodes in shapes.items():
        for in_port, in_label in enumerate(ports):
            dut = route_compute(network, ports, in_port)
            vcs = (0, 1) if network.vc_count == 2 and not is_pe(in_label) else (0,)
            cases = [(here, there, vc) for here in nodes for there in topology.nodes()
                     for vc in vcs]
            got = run(dut, cases)
            want = [expected(network, ports, in_label, *case) for case in cases]
            mismatches = [(in_label, c, g, w) for c, g, w in zip(cases, got, want) if g != w]
            assert mismatches == [], mismatches[:5]


@pytest.mark.parametrize("side", [3, 5, 6])
def test_out_of_range_destinations_are_malformed(side):
    network = KingNetworkConfig.from_dict({"kind": "KT", "side": side})
    ports = router_ports(network, (0, 0))
    dut = route_compute(network, ports, ports.index(pe_label(0)))
    width = network.coordinate_width
    cases = [((1, 2), (x, y), 0) for x in range(1 << width) for y in range(1 << width)]
    got = run(dut, cases)
    for (_, (x, y), _), (_, _, _, malformed) in zip(cases, got):
        assert malformed == int(x >= side or y >= side), (x, y)


def test_bad_parameters():
    network = KingNetworkConfig.from_dict({"kind": "KT", "side": 4})
    ports = router_ports(network, (0, 0))
    with pytest.raises(ValueError, match="port 'q' is not one of"):
        route_compute(network, (*ports[:-1], "q"), 0)
    with pytest.raises(ValueError, match="in_port must be from 0 to 8, not 9"):
        route_compute(network, ports, 9)
    mesh = KingNetworkConfig.from_dict({"kind": "M", "side": 4})
    with pytest.raises(ValueError, match="port 'z\\+' is not one of x\\+, x-, y\\+, y-, pe0"):
        route_compute(mesh, ("z+", "pe0"), 0)
    with pytest.raises(ValueError, match="must hold every PE port"):
        route_compute(mesh, ("x+",), 0)
    config = RouterConfig(32, 1, (PortConfig("pe"),))
    with pytest.raises(TypeError, match="network must be a KingNetworkConfig"):
        KingRouteCompute(config, 0, network="KT4", ports=("pe0",))


@pytest.mark.parametrize("pes", [2, 3, 4])
def test_several_pe_ports(pes):
    """With ``pes`` PEs per router a packet arriving leaves through the PE port its header
    names, from every input; elsewhere the route is the model's; a PE field ``>= pes`` (three
    PEs: 3) is malformed."""
    network = KingNetworkConfig.from_dict({"kind": "KT", "side": 4, "pe_ports": pes})
    ports = router_ports(network, (0, 0))
    assert ports[-pes:] == tuple(f"pe{j}" for j in range(pes))
    width = network.pe_width
    for in_port, in_label in enumerate(ports):
        dut = route_compute(network, ports, in_port)
        cases = [((1, 2), there, 0, pe) for there in network.topology.nodes()
                 for pe in range(1 << width)]
        for (here, there, _, pe), got in zip(cases, run(dut, cases)):
            if pe >= pes:
                assert got[3] == 1, (in_label, there, pe)
                continue
            port = routing_port(network.topology, here, there)
            want = ports.index(f"pe{pe}") if port is None else ports.index(port)
            assert (got[0], got[3]) == (want, 0), (in_label, there, pe)


ADAPTIVE = [(kind, "hop-by-hop", side, escape) for kind in KINDS for side in (4, 5)
            for escape in (("bubble", "dateline") if kind in ("T", "DT", "KT") else ("none",))]
ADAPTIVE += [(kind, "2s", side, escape) for kind in ("KM", "KT") for side in (4, 5, 6)
             for escape in (("bubble", "dateline") if kind == "KT" else ("none",))]


#: The adaptive cases of the default suite (an even and an odd side, each escape, each
#: routing); the others, side 6 among them, in the slow tier.
ADAPTIVE_DEFAULT = {(kind, routing, side, escape) for kind, routing, side, escape in ADAPTIVE
                    if side < 6 and ((side == 4) == (kind in ("T", "DT", "KT"))
                                     or (kind, routing, side) == ("KT", "2s", 5))}


@pytest.mark.parametrize("kind, routing, side, escape",
                         marked(ADAPTIVE, set(ADAPTIVE) - ADAPTIVE_DEFAULT),
                         ids=[f"{k}{s}-{r}-{e}" for k, r, s, e in ADAPTIVE])
def test_adaptive_grades_and_escape_move(kind, routing, side, escape):
    """The grades of every local port against the model's profitable ports (hop-by-hop) or
    2S grades, and the escape move: the kind's deterministic port, its VC and bubble as in
    :func:`expected` from an escape VC, as an injection from an adaptive VC (the packet enters
    its escape ring afresh)."""
    check_adaptive(KingNetworkConfig.from_dict({"kind": kind, "side": side, "routing": routing,
                                                "escape": escape}))


@pytest.mark.parametrize("side, escape", marked([(4, "bubble"), (4, "dateline"), (6, "bubble")],
                                                {(6, "bubble")}))
def test_2s_grades_with_both_ties(side, escape):
    """2S with ``ties`` ``both``: the grades of the model's
    ``graded_vector(..., both_ties=True)`` (at an offset of side/2 both ways are Knaive's),
    the escape move unchanged."""
    check_adaptive(KingNetworkConfig.from_dict({"kind": "KT", "side": side, "routing": "2s",
                                                "escape": escape, "ties": "both"}))


def check_adaptive(network: KingNetworkConfig) -> None:
    """Drive every (router, destination, input VC) of every router shape of ``network`` and
    compare the route, the grades and the escape move with the model."""
    topology, routing = network.topology, network.routing
    shapes = {}
    for node in topology.nodes():
        shapes.setdefault(router_ports(network, node), []).append(node)
    escape_vcs = network.escape_vc_count
    for ports, nodes in shapes.items():
        for in_port, in_label in enumerate(ports):
            dut = route_compute(network, ports, in_port)
            vcs = range(network.vc_count) if not is_pe(in_label) else (0,)
            cases = [(here, there, vc) for here in nodes for there in topology.nodes()
                     for vc in vcs]
            got = run(dut, cases, ("grade_1", "grade_2"))
            mismatches = []
            for (here, there, vc), result in zip(cases, got):
                if routing == "2s":
                    grades = graded_vector(topology, here, there, network.ties == "both")
                else:
                    grades = profitable_vector(topology, here, there)
                want_grades = [sum(1 << ports.index(p) for p, g in zip(PORTS, grades)
                                   if g == grade) for grade in (1, 2)]
                entering = in_label if vc < escape_vcs else ports[-1]  # as if injected
                want = (*expected(network, ports, entering, here, there, vc), *want_grades)
                if result != want:
                    mismatches.append((in_label, (here, there, vc), result, want))
            assert mismatches == [], mismatches[:5]


# --- broadcast -----------------------------------------------------------------------------------

def broadcast_tables(network: KingNetworkConfig) -> dict:
    """``{(node, in label, ttl): (targets as labels, enter as labels, ttl out, malformed)}``
    of the route computes of every router for broadcast heads with every TTL."""
    topology = network.topology
    shapes = {}
    for node in topology.nodes():
        shapes.setdefault(router_ports(network, node), []).append(node)
    table = {}

    def drive(ctx, dut, case):
        here, ttl = case
        ctx.set(dut.node_static.x, here[0])
        ctx.set(dut.node_static.y, here[1])
        ctx.set(dut.header.broadcast, 1)
        ctx.set(dut.header.ttl, ttl)
        ctx.set(dut.in_vc, network.broadcast_vc)

    for ports, nodes in shapes.items():
        for in_port, in_label in enumerate(ports):
            dut = route_compute(network, ports, in_port)
            cases = [(here, ttl) for here in nodes for ttl in range(1 << network.ttl_width)]
            got = run_route_compute(dut, cases, drive,
                                    ("broadcast", "targets", "enter", "header_out"))
            for (here, ttl), (*_, malformed, broadcast, targets, enter, header) in zip(cases,
                                                                                     got):
                assert broadcast == 1
                labels = [p for i, p in enumerate(ports) if targets >> i & 1]
                entering = [p for i, p in enumerate(ports) if enter >> i & 1]
                ttl_out = dut.header_out.shape().const(header).ttl
                table[here, in_label, ttl] = (labels, entering, ttl_out, malformed)
    return table


@pytest.mark.parametrize("kind, side", [("KM", 5), ("KT", 5), ("KT", 6), ("KM", 4)])
def test_broadcast_copies_follow_the_model(kind, side):
    """Propagate a broadcast from every node through the route computes' own results (TTL in
    the header included): the links crossed are exactly the model's
    (:func:`twinnet.model.king.broadcast_sends`), each once, and every other router consumes
    one copy; copies entering a ring (all at the source, the side diagonals after an
    orthogonal hop) ask for the bubble on a torus; a copy arriving with TTL 0 is malformed."""
    network = KingNetworkConfig.from_dict({"kind": kind, "side": side, "broadcast": True})
    topology = network.topology
    table = broadcast_tables(network)
    for source in topology.nodes():
        sends, consumed = Counter(), Counter()
        labels, entering, ttl, malformed = table[source, "pe0", 0]
        assert not malformed and "pe0" not in labels
        assert entering == (labels if topology.wrap else [])
        pending = [(source, port, ttl) for port in labels]
        while pending:
            node, port, ttl = pending.pop()
            sends[node, port] += 1
            assert len(sends) < 10 * topology.node_count, "copies never stop"
            node = topology.neighbor(node, port)
            labels, entering, ttl, malformed = table[node, opposite(port), ttl]
            assert not malformed
            consumed[node] += labels.count("pe0")
            onward = [p for p in labels if not is_pe(p)]
            assert entering == ([p for p in onward if p != port] if topology.wrap else [])
            pending += [(node, p, ttl) for p in onward]
        assert sends == Counter(broadcast_sends(topology, source)), source
        assert consumed == Counter({n: 1 for n in topology.nodes() if n != source}), source
    for (node, in_label, ttl), (*_, malformed) in table.items():
        if not is_pe(in_label):
            assert malformed == (ttl == 0), (node, in_label, ttl)


# --- DT ties by LFSR -----------------------------------------------------------------------------

@pytest.mark.parametrize("side", marked([3, 4, 5, 6], {6}))
def test_dt_lfsr_ties_take_every_shortest_image(side):
    """DT with ``ties`` lfsr: over 64 head flits (the LFSR steps on each) the port toward every
    destination is always the first port of one of the model's shortest-image records
    (:func:`twinnet.model.king_network.tied_ports`), and where several images tie, each of
    their ports is taken at least once."""
    from amaranth.sim import Simulator

    network = KingNetworkConfig.from_dict({"kind": "DT", "side": side, "ties": "lfsr"})
    topology = network.topology
    ports = router_ports(network, (0, 0))
    dut = route_compute(network, ports, ports.index("pe0"))
    cases = [(here, there) for here in topology.nodes() for there in topology.nodes()]
    seen = {case: set() for case in cases}

    async def testbench(ctx):
        for here, there in cases:
            ctx.set(dut.node_static.x, here[0])
            ctx.set(dut.node_static.y, here[1])
            ctx.set(dut.header.x, there[0])
            ctx.set(dut.header.y, there[1])
            ctx.set(dut.valid, 1)
            for _ in range(64):
                seen[here, there].add(ports[ctx.get(dut.out_port)])
                await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    several = 0
    for (here, there), got in seen.items():
        allowed = set(tied_ports(network, here, there)) or {"pe0"}
        assert got == allowed, (here, there, got, allowed)
        several += len(allowed) > 1
    assert several > 0  # the sizes have ties to break
