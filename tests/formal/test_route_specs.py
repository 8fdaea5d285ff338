"""Route computes of the twisted tori and the king family against their specifications
(:mod:`twinnet.hdl.formal.twisted_spec`, :mod:`twinnet.hdl.formal.king_spec`): proven for
every input on a few sizes, and each specification able to fail — a route compute with one
bug, or a specification written wrong, makes the proof report ``failed``.

By default: twisted 8x4 (t_YX = 4) and a 3-D twisted torus, KT4 under 2S with the dateline,
and every bug; the other sizes (KT8 under 2S with 2 VCs among them) and kinds run in the slow
tier (``pytest --slow``). KT8 with Knaive is proven in ``test_proofs.py``.
"""

import dataclasses
import gc
import warnings
from pathlib import Path

import pytest
from amaranth.hdl import Cat, Const, Mux, UnusedElaboratable
from tiers import marked

from twinnet.families import family_for
from twinnet.hdl import king
from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.formal import king_spec, sby, twisted_spec
from twinnet.hdl.formal.route_spec import RouteComputeProof
from twinnet.hdl.king_route import KingRouteCompute, is_pe
from twinnet.hdl.twisted_route import PE, TwistedRouteCompute, pe_labels
from twinnet.hdl.twisted_route import is_pe as is_twisted_pe
from twinnet.model.king_network import KingNetworkConfig
from twinnet.model.twist import IMAGES
from twinnet.model.twisted_network import TwistedNetworkConfig


def _tools_missing() -> str | None:
    try:
        sby.check_tools()
    except sby.ToolMissing as error:
        return str(error)
    return None


needs_prover = pytest.mark.skipif(_tools_missing() is not None,
                                  reason=f"formal tools missing: {_tools_missing()}")


def _config(ports, vc_count: int) -> RouterConfig:
    """A router of ``ports`` (labels): link ports of ``vc_count`` VCs, PE ports of one."""
    pes = [is_twisted_pe(label) or is_pe(label) for label in ports]
    return RouterConfig(8, 2, tuple(PortConfig("pe") if pe else PortConfig("network", vc_count)
                                    for pe in pes))


def twisted_computes(radices, twists: str, escape: str, cls=TwistedRouteCompute,
                     vcs: int | None = None, pe_ports: int = 1) -> list:
    """One route compute of class ``cls`` per input port of the twisted torus's router (with
    ``vcs`` VCs per link, default the escape's own, and ``pe_ports`` PEs)."""
    network = TwistedNetworkConfig.from_dict({"radices": radices, "twists": twists,
                                              "escape": escape, "max_packet_length": 2, "vcs": vcs,
                                              "pe_ports": pe_ports})
    ports = (*network.ports, *pe_labels(network))
    config = _config(ports, network.vc_count)
    return [cls(config, p, network=network, ports=ports) for p in range(len(ports))]


def king_computes(values: dict, cls=KingRouteCompute, kind: str = "router") -> list:
    """One route compute of class ``cls`` per input port of router kind ``kind``."""
    network = KingNetworkConfig.from_dict({"max_packet_length": 2, **values})
    ports = next(ports for ports in (king.router_ports(network, node)
                                     for node in network.topology.nodes())
                 if king.kind_name(network, ports) == kind)
    config = _config(ports, network.vc_count)
    return [cls(config, p, network=network, ports=ports) for p in range(len(ports))]


def own_spec(computes):
    """The specification the route computes' family names (by the network they carry)."""
    return family_for(computes[0].network).specification(computes[0].network)


def prove(computes, workdir, spec=None) -> dict:
    """``{property: verdict}`` of the route computes against ``spec`` (default: their
    family's)."""
    top = RouteComputeProof(computes, spec or own_spec(computes), "route")
    verdicts = sby.prove(top, top.ports(), top.properties, workdir, depth=2)
    return {v.name: v.verdict for v in verdicts}


# --- proven ------------------------------------------------------------------------------------

TWISTED = [([8, 4], "YX=4", "bubble"), ([4, 4, 2], "ZX=2", "dateline"),
           ([24, 12], "YX=12", "bubble"),  # rings of no power of two: the route's modulo
           ([8, 4], "YX=4", "dateline"), ([8, 4], "YX=4", "none"), ([8, 4], "", "bubble"),
           ([16, 8], "YX=8", "dateline"),
           ([8, 4, 4], "YX=4,ZX=4", "bubble"), ([3, 3, 3], "ZX=1,ZY=2", "dateline"),
           ([5, 4], "XY=3", "bubble")]


@needs_prover
@pytest.mark.parametrize("radices, twists, escape", marked(TWISTED, TWISTED[3:]),
                         ids=["x".join(map(str, r)) + f"-{t or 't0'}-{e}" for r, t, e in TWISTED])
def test_twisted_route_compute_equals_its_specification(tmp_path, radices, twists, escape):
    computes = twisted_computes(radices, twists, escape)
    assert own_spec(computes) is twisted_spec.twisted_spec
    assert prove(computes, tmp_path) == {"route_compute_matches_spec": "proven"}


#: Several copies of the escape scheme per link (each VC, each dateline pair, a copy), and
#: several PEs per router.
TWISTED_VCS = [([8, 4], "YX=4", "bubble", 3, 1), ([8, 4], "YX=4", "dateline", 4, 3),
               ([4, 4, 2], "ZX=2", "bubble", 8, 2), ([16, 8], "YX=8", "dateline", 6, 1),
               ([5, 4], "XY=3", "bubble", 1, 4)]


@needs_prover
@pytest.mark.parametrize("radices, twists, escape, vcs, pe_ports",
                         marked(TWISTED_VCS, TWISTED_VCS[2:4]),
                         ids=["x".join(map(str, r)) + f"-{t}-{e}-v{v}-p{p}"
                              for r, t, e, v, p in TWISTED_VCS])
def test_twisted_route_compute_with_several_vcs_or_pes_equals_its_specification(
        tmp_path, radices, twists, escape, vcs, pe_ports):
    computes = twisted_computes(radices, twists, escape, vcs=vcs, pe_ports=pe_ports)
    assert prove(computes, tmp_path) == {"route_compute_matches_spec": "proven"}


KING = [
    ("kt4-2s-dateline", {"kind": "KT", "side": 4, "routing": "2s", "escape": "dateline",
                         "vcs": 3}, "router"),
    ("kt8-2s-bubble", {"kind": "KT", "side": 8, "routing": "2s", "vcs": 2}, "router"),
    ("kt6-2s-both-ties", {"kind": "KT", "side": 6, "routing": "2s", "vcs": 2, "ties": "both"},
     "router"),
    ("kt8-knaive-dateline", {"kind": "KT", "side": 8, "escape": "dateline"}, "router"),
    ("dt8-diagonal", {"kind": "DT", "side": 8}, "router"),
    ("dt8-diagonal-lfsr", {"kind": "DT", "side": 8, "ties": "lfsr"}, "router"),
    ("dt8-hop-by-hop", {"kind": "DT", "side": 8, "routing": "hop-by-hop", "vcs": 2}, "router"),
    ("dt6-hop-by-hop-dateline-lfsr", {"kind": "DT", "side": 6, "routing": "hop-by-hop",
                                      "escape": "dateline", "ties": "lfsr", "vcs": 3}, "router"),
    ("t6-hop-by-hop-dateline", {"kind": "T", "side": 6, "routing": "hop-by-hop",
                                "escape": "dateline", "vcs": 3}, "router"),
    ("kt5-knaive-2pe", {"kind": "KT", "side": 5, "pe_ports": 2}, "router"),
    ("km4-knaive-corner", {"kind": "KM", "side": 4}, "no_xm_ym_zm_tp_tm"),
    ("km5-2s-interior", {"kind": "KM", "side": 5, "routing": "2s", "vcs": 2}, "router"),
    ("km5-2s-border", {"kind": "KM", "side": 5, "routing": "2s", "vcs": 2}, "no_xm_zm_tp"),
    ("dm4-diagonal-border", {"kind": "DM", "side": 4}, "no_yp_zp"),
    ("m4-hop-by-hop-border", {"kind": "M", "side": 4, "routing": "hop-by-hop", "vcs": 2},
     "no_xp_ym"),
]

#: Routers that replicate broadcasts (002 §3.3.4): the copies' outputs, rings and TTL too. By
#: default an even-sided king torus (the even-side rule) and a king mesh's border router.
KING_BROADCAST = [
    ("kt4-knaive-broadcast", {"kind": "KT", "side": 4, "broadcast": True}, "router"),
    ("km5-knaive-broadcast-border", {"kind": "KM", "side": 5, "broadcast": True}, "no_xm_zm_tp"),
    ("kt8-2s-broadcast", {"kind": "KT", "side": 8, "routing": "2s", "broadcast": True},
     "router"),
    ("kt5-knaive-broadcast-dateline", {"kind": "KT", "side": 5, "escape": "dateline",
                                       "broadcast": True}, "router"),
    ("km4-knaive-broadcast-corner", {"kind": "KM", "side": 4, "broadcast": True},
     "no_xm_ym_zm_tp_tm"),
]


@needs_prover
@pytest.mark.parametrize("values, kind", marked([case[1:] for case in KING],
                                                [case[1:] for case in KING[1:]]),
                         ids=[case[0] for case in KING])
def test_king_route_compute_equals_its_specification(tmp_path, values, kind):
    computes = king_computes(values, kind=kind)
    network = computes[0].network
    found = prove(computes, tmp_path)
    whole = "route_compute_within_spec" if network.ties == "lfsr" else "route_compute_matches_spec"
    expected = {whole: "proven"}
    if network.adaptive:
        expected["route_grades_match_spec"] = "proven"
    assert found == expected


@needs_prover
@pytest.mark.parametrize("values, kind", marked([case[1:] for case in KING_BROADCAST],
                                                [case[1:] for case in KING_BROADCAST[2:]]),
                         ids=[case[0] for case in KING_BROADCAST])
def test_king_broadcast_copies_equal_their_specification(tmp_path, values, kind):
    computes = king_computes(values, kind=kind)
    expected = {"route_compute_matches_spec": "proven", "route_copies_match_spec": "proven"}
    if computes[0].network.adaptive:
        expected["route_grades_match_spec"] = "proven"
    assert prove(computes, tmp_path) == expected


# --- able to fail: route computes with one bug -------------------------------------------------

class BubbleOnEveryLinkMove(TwistedRouteCompute):
    """Asks for room for two packets on every link move, going straight on included."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.bubble.eq(self.out_port != self.ports.index(PE))
        return m


class DatelineIgnored(TwistedRouteCompute):
    """Keeps every packet on VC 0."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.vc_mask.eq(1)
        return m


class VcKeptOnTurns(TwistedRouteCompute):
    """Keeps the VC a packet arrived on for every link move (injected packets on VC 0): a
    packet never changes copies of the escape."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        pe = self.ports.index(PE)
        m.d.comb += self.vc_mask.eq(Mux(self.out_port == pe, 1, Const(1, 8) << self.in_vc))
        return m


class PeFieldIgnored(TwistedRouteCompute):
    """Ejects every packet at the router's first PE port, whatever its ``pe`` field."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        n = len(self.network.topology.radices)
        with m.If(Cat(self.header[f"o{dim}"] == self.node_static[f"o{dim}"]
                      for dim in range(n)).all()):
            m.d.comb += self.out_port.eq(self.ports.index(pe_labels(self.network)[0]))
        return m


class KingDatelineIgnored(KingRouteCompute):
    """Keeps every packet on VC 0."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.vc_mask.eq(1)
        return m


class KnaiveAxesSwapped(KingRouteCompute):
    """Grades 2S's ports by the Knaive record of the offset with x and y swapped."""

    def _grades(self, m, here, there, dx, dy, local, bad):
        super()._grades(m, here, there, dy, dx, local, bad)


class PositiveTiesOnly(KingRouteCompute):
    """Grades 2S's ports as if ``ties`` were ``first``: a tie's other way round is grade 2."""

    def _grades(self, m, here, there, dx, dy, local, bad):
        both, self.network = self.network, dataclasses.replace(self.network, ties="first")
        super()._grades(m, here, there, dx, dy, local, bad)
        self.network = both


class TtlNotSpent(KingRouteCompute):
    """Broadcast copies carry the TTL they came with on unchanged (it never runs out; the
    source's copies carry the PE's 0)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.header_out.ttl.eq(self.header.ttl)
        return m


class FirstImageAlways(KingRouteCompute):
    """DT with pseudo-random ties that takes image ``(x, y)`` whether it is shortest or not."""

    def _tie_break(self, m, candidates, shortest, dx, dy):
        m.d.comb += [dx.eq(candidates[0][0]), dy.eq(candidates[0][1])]


@needs_prover
@pytest.mark.parametrize("computes, failing", [
    (lambda: twisted_computes([8, 4], "YX=4", "bubble", BubbleOnEveryLinkMove),
     "route_compute_matches_spec"),
    (lambda: twisted_computes([8, 4], "YX=4", "dateline", DatelineIgnored),
     "route_compute_matches_spec"),
    (lambda: twisted_computes([8, 4], "YX=4", "bubble", VcKeptOnTurns, vcs=2),
     "route_compute_matches_spec"),
    (lambda: twisted_computes([8, 4], "YX=4", "bubble", PeFieldIgnored, pe_ports=2),
     "route_compute_matches_spec"),
    (lambda: king_computes({"kind": "KT", "side": 4, "escape": "dateline"}, KingDatelineIgnored),
     "route_compute_matches_spec"),
    (lambda: king_computes({"kind": "KM", "side": 4, "routing": "2s", "vcs": 2},
                           KnaiveAxesSwapped, kind="no_xm_ym_zm_tp_tm"),
     "route_grades_match_spec"),
    (lambda: king_computes({"kind": "DT", "side": 4, "ties": "lfsr"}, FirstImageAlways),
     "route_compute_within_spec"),
    (lambda: king_computes({"kind": "KT", "side": 4, "routing": "2s", "vcs": 2,
                            "ties": "both"}, PositiveTiesOnly),
     "route_grades_match_spec"),
    (lambda: king_computes({"kind": "KT", "side": 4, "broadcast": True}, TtlNotSpent),
     "route_copies_match_spec"),
], ids=["twisted-bubble-on-every-move", "twisted-dateline-ignored",
        "twisted-v2-vc-kept-on-turns", "twisted-p2-pe-field-ignored", "kt4-dateline-ignored",
        "km4-2s-corner-knaive-axes-swapped", "dt4-lfsr-first-image-always",
        "kt4-2s-both-ties-positive-only", "kt4-broadcast-ttl-not-spent"])
def test_a_route_compute_with_a_bug_fails_its_specification(tmp_path, computes, failing):
    assert prove(computes(), tmp_path)[failing] == "failed"


@needs_prover
@pytest.mark.parametrize("escape", ["bubble", "dateline"])
def test_the_ring_plug_in_route_compute_equals_its_own_specification(tmp_path, monkeypatch,
                                                                     escape):
    """A family from another package (``examples/ring``) proven through the contract alone:
    the specification its family names, in its own package."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "examples" / "ring"))
    from twinnet_ring import RingFamily

    family = RingFamily()
    network = family.network({"nodes": 5, "escape": escape, "max_packet_length": 2})
    [router] = family.netlist(network).kinds.values()
    spec = family.specification(network)
    assert spec.__module__ == "twinnet_ring.hardware"
    assert prove(router.route_computes, tmp_path, spec) == {
        "route_compute_matches_spec": "proven"}


@needs_prover
def test_a_ring_route_compute_that_ignores_its_dateline_fails_its_specification(tmp_path,
                                                                               monkeypatch):
    """The ring's specification states the VC: a route compute that keeps every packet on
    VC 0 on the dateline ring (deadlock-prone) fails it."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "examples" / "ring"))
    from twinnet_ring import RingFamily
    from twinnet_ring.hardware import RingRouteCompute

    class DatelineIgnored(RingRouteCompute):
        def elaborate(self, platform):
            m = super().elaborate(platform)
            m.d.comb += self.vc_mask.eq(1)
            return m

    family = RingFamily()
    network = family.network({"nodes": 5, "escape": "dateline", "max_packet_length": 2})
    with warnings.catch_warnings():  # the netlist's own route computes go unused
        warnings.simplefilter("ignore", UnusedElaboratable)
        config = family.netlist(network).kinds["router"].config
        gc.collect()
    computes = [DatelineIgnored(config, port, network=network) for port in range(3)]
    found = prove(computes, tmp_path, family.specification(network))
    assert found == {"route_compute_matches_spec": "failed"}


# --- able to fail: specifications written wrong ------------------------------------------------

def test_the_tie_order_is_the_documented_one():
    # The route compute documents its tie order in the model's IMAGES; the specification
    # states it on its own, and the two must agree.
    assert twisted_spec.TIE_ORDER == IMAGES


def test_images_searched_cover_every_shorter_record():
    # 8x4, t_YX = 4: a record with images 0 is at most 3 + 4 = 7 hops long; |r_Y| of image
    # 3 is at least 9 and of -2 at least 8, so the tie order's four images are all.
    assert twisted_spec.image_range((8, 4), [1]) == {1: (0, 1, -1, 2)}
    # 8x4x4, t_YX = t_ZX = 4: at most 3 + 3 + 4 = 10 hops; images 3 and -2 can be shorter.
    assert twisted_spec.image_range((8, 4, 4), [1, 2]) == {1: (0, 1, -1, 2, 3, -2),
                                                          2: (0, 1, -1, 2, 3, -2)}


@needs_prover
def test_a_twisted_spec_with_another_tie_order_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(twisted_spec, "TIE_ORDER", (1, 0, -1, 2))
    found = prove(twisted_computes([8, 4], "YX=4", "bubble"), tmp_path)
    assert found == {"route_compute_matches_spec": "failed"}


@needs_prover
def test_the_twisted_spec_finds_records_beyond_the_images_tried(tmp_path, monkeypatch):
    # Images 0 and 1 alone miss shorter records on 2 x 7 with t_XY = 3 (the model's doc);
    # a specification whose tie order holds only those still searches -1 and 2.
    import twinnet.hdl.twisted_route as twisted_route

    monkeypatch.setattr(twisted_route, "IMAGES", (0, 1))
    monkeypatch.setattr(twisted_spec, "TIE_ORDER", (0, 1))
    found = prove(twisted_computes([2, 7], "XY=3", "bubble"), tmp_path)
    assert found == {"route_compute_matches_spec": "failed"}


@needs_prover
def test_a_king_spec_where_adaptive_vcs_go_straight_on_fails(tmp_path, monkeypatch):
    # From an adaptive VC every escape move enters the escape ring; a specification that
    # counts every VC as an escape VC lets such a packet go straight on without a bubble.
    monkeypatch.setattr(king_spec, "on_escape_vc", lambda rc, escape: Const(1, 1))
    found = prove(king_computes({"kind": "T", "side": 3, "routing": "hop-by-hop", "vcs": 2}),
                  tmp_path)
    assert found["route_compute_matches_spec"] == "failed"


@needs_prover
@pytest.mark.slow
def test_a_king_spec_with_hop_by_hop_grades_for_2s_fails(tmp_path):
    # 2S grades the profitable ports; hop-by-hop offers them all as grade 1.
    def hop_by_hop(m, rc, in_port):
        expected = king_spec.king_spec(m, rc, in_port)
        one, two = expected.grades
        expected.grades = (one | two, Const(0, len(two)))
        return expected

    found = prove(king_computes({"kind": "KT", "side": 4, "routing": "2s", "vcs": 2}), tmp_path,
                  spec=hop_by_hop)
    assert found["route_grades_match_spec"] == "failed"

