"""The network top's Verilog (:meth:`twinnet.hdl.network.Network.verilog`): written as text, it
must refuse what ``wiring.connect`` refuses. The toy ring's routers (a link port and a PE port
each) are joined wrongly on purpose; the right joins are simulated by every network test."""

import functools
import gc
import re
import warnings

import pytest
from amaranth.hdl import Module, UnusedElaboratable
from amaranth.lib import data

from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.network import Link, Netlist, Network, RouterInstance, Terminal
from twinnet.hdl.route_compute import RouteCompute
from twinnet.hdl.router import Router

LINK, PE = 0, 1


@pytest.fixture(autouse=True)
def routers_never_converted():
    """The top names the routers' modules and never converts them: Amaranth says so when they
    are collected, so they are collected here, quietly, rather than in a later test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        yield
        gc.collect()


class Route(RouteCompute):
    """Every packet to the PE port (the top's structure is what is checked here)."""

    def __init__(self, config, in_port):
        super().__init__(config, in_port, header_layout=data.StructLayout({"dest": 2}),
                         static_layout=data.StructLayout({"here": 2}))

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.out_port.eq(PE)
        return m


def router(vcs: int = 2, width: int = 32) -> Router:
    config = RouterConfig(width, 4, (PortConfig("network", vcs, 8), PortConfig("pe", 1, 8)),
                          source_width=2, drop_count_width=32)
    return Router(config, functools.partial(Route))


def ring(links) -> Netlist:
    """Three routers of one kind, joined by ``links``."""
    return Netlist({"node": router()}, [RouterInstance(f"r{i}", "node", {"here": i})
                                        for i in range(3)],
                   links, [Terminal(f"r{i}", PE) for i in range(3)])


def link(index: int, source: int, target: int, target_port: int = LINK) -> Link:
    return Link(index, f"r{source}", LINK, f"r{target}", target_port, "cw", "cw", 2)


def top(netlist: Netlist, trace: bool = False) -> str:
    return Network(netlist, {kind: f"t_{kind}" for kind in netlist.kinds},
                   trace=trace).verilog("t")


def test_a_ring_has_one_instance_per_router_and_every_bus():
    text = top(ring([link(0, 0, 1), link(1, 1, 2), link(2, 2, 0)]), trace=True)
    assert len(re.findall(r"^  t_node r\d+ \(", text, re.M)) == 3
    # Router 1's link input is fed by router 0's link output, flit and credits the other way.
    assert ".in_0__flit__valid(r0__out_0__flit__valid)" in text
    for bus in ("pe_in_ready", "pe_out_valid", "pe_out_data", "pe_out_first", "pe_out_last",
                "trace_valid", "trace_flit", "drop_count"):
        assert re.search(rf"^  assign {bus} = ", text, re.M), bus
    # Three 32-bit counters: two levels of adders, 34 bits, saturating at 2**32 - 1.
    assert "wire [33:0] drop_sum_2_0;" in text
    assert "assign drop_count = drop_sum_2_0 > 34'hffffffff ? 32'hffffffff" in text


def test_an_input_driven_twice_is_refused():
    with pytest.raises(ValueError, match=r"link 1: router r1's input in_0__\S+ is driven "
                                         "twice"):
        top(ring([link(0, 0, 1), link(1, 2, 1), link(2, 1, 0)]))


def test_a_link_into_a_pe_port_is_refused():
    with pytest.raises(ValueError, match=r"link 0: r0 out_0 and r1 in_1 do not match"):
        top(ring([link(0, 0, 1, target_port=PE)]))


def test_a_width_mismatch_is_refused():
    kinds = {"node": router(), "wide": router(vcs=4)}  # a VC field of 2 bits, not 1
    netlist = Netlist(kinds, [RouterInstance("r0", "node", {"here": 0}),
                              RouterInstance("r1", "wide", {"here": 1})],
                      [link(0, 0, 1), link(1, 1, 0)],
                      [Terminal("r0", PE), Terminal("r1", PE)])
    with pytest.raises(ValueError, match=r"link 0: router r1's input in_0__\S+ is \d+ bits "
                                         r"wide, its source \d+"):
        top(netlist)


def test_the_buses_are_arrays_of_the_port_layouts_and_the_trace_widens_narrow_tags():
    """Two pairs of routers, one with 2 VCs per link and one with 4: each PE bus is an array
    of one element per terminal; the trace an array of the link flit's layout with the
    widest tag (2 bits), a 2-VC link's 1-bit tag zero-extended into it."""
    from twinnet.hdl.flit import layout_fields

    def pair(first: int, vcs: int) -> list[Link]:
        return [Link(first + i, f"r{first + i}", LINK, f"r{first + 1 - i}", LINK, "cw", "cw",
                     vcs) for i in range(2)]

    netlist = Netlist({"node": router(vcs=2), "wide": router(vcs=4)},
                      [RouterInstance(f"r{i}", "node" if i < 2 else "wide", {"here": i})
                       for i in range(4)],
                      pair(0, 2) + pair(2, 4), [Terminal(f"r{i}", PE) for i in range(4)])
    network = Network(netlist, {kind: f"t_{kind}" for kind in netlist.kinds}, trace=True)
    members = network.signature.members
    assert members["pe_in_data"].shape == data.ArrayLayout(32, 4)
    assert members["pe_out_first"].shape == data.ArrayLayout(1, 4)
    assert members["trace_flit"].shape == data.ArrayLayout(network.trace_layout, 4)
    assert network.trace_stride == 32 + 1 + 1 + 1 + 2  # data, first, last, abort, vc
    assert layout_fields(network.trace_layout) == [
        {"name": "data", "offset": 0, "width": 32}, {"name": "first", "offset": 32, "width": 1},
        {"name": "last", "offset": 33, "width": 1}, {"name": "abort", "offset": 34, "width": 1},
        {"name": "vc", "offset": 35, "width": 2}]
    text = network.verilog("t")
    assert "output [147:0] trace_flit;" in text and "input [127:0] pe_in_data;" in text
    narrow = "r0__out_0__flit__payload"
    assert (f"{{ 1'h0, {narrow}[35], {narrow}[34], {narrow}[33], {narrow}[32], "
            f"{narrow}[31:0] }}" in text)
    assert "r3__out_0__flit__payload, r2__out_0__flit__payload" in text
    # Terminal 2's injection: its element of each bus (the VC tag at its reset value).
    assert ".in_1__payload({ 1'h0, pe_in_last[2], pe_in_first[2], pe_in_data[95:64] })" in text


def test_module_ports_are_the_flattened_signals():
    """:func:`module_ports` reads the signature without creating signals; the names, flows and
    widths must be those of Amaranth's own ``Signature.flatten`` over created signals, with
    arrays of ports and of interfaces, flipped interfaces and array layouts."""
    from amaranth.hdl import Shape
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out

    from twinnet.hdl.network import module_ports

    link = wiring.Signature({"valid": Out(1), "payload": Out(data.ArrayLayout(5, 3)),
                             "ready": In(1)})
    component = wiring.Component({"up": In(link), "down": Out(link).array(2),
                                  "grid": In(link).array(2, 3), "bus": Out(7).array(4),
                                  "count": Out(32)})
    expected = [("__".join(map(str, path)), "i" if member.flow == In else "o",
                 Shape.cast(member.shape).width)
                for path, member, _ in component.signature.flatten(component)]
    assert len(expected) == 3 + 2 * 3 + 6 * 3 + 4 + 1
    assert module_ports(component) == expected
    assert ("grid__1__2__ready", "o", 1) in expected and ("down__1__payload", "o", 15) in expected
