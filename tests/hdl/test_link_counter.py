"""The link counters (:mod:`twinnet.hdl.link_counter`) against hand-driven links whose counts
are known, and their place in the network top."""

import pytest
from amaranth.sim import Simulator

from twinnet.hdl.link_counter import COUNTERS, LinkCounter, LinkCounters


def run(dut, cycles: list[dict]) -> list[dict]:
    """Drive ``dut``'s inputs from ``cycles`` (one dict of input → value per cycle; inputs
    not named are 0) and return its counters per VC after the last cycle."""
    result = []

    async def bench(ctx):
        for inputs in cycles:
            for name in ("valid", "first", "vc", "waits", "ready"):
                if name in dut.signature.members:
                    ctx.set(getattr(dut, name), inputs.get(name, 0))
            await ctx.tick()
        result.extend({name: ctx.get(getattr(dut.counts[vc], name)) for name in COUNTERS}
                      for vc in range(dut.vc_count))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return result


def packet(vc: int, length: int = 4) -> list[dict]:
    return [{"valid": 1, "first": int(i == 0), "vc": vc} for i in range(length)]


def test_flits_and_packets_per_vc():
    """Two packets on VC 1, one on VC 0, idle cycles between: per VC its flits and heads;
    with no packet waiting at the sender, no VC is ever blocked."""
    cycles = packet(1) + [{}] + packet(0) + packet(1) + [{}] * 3
    assert run(LinkCounter(2, True), cycles) == [
        {"flits": 4, "packets": 1, "blocked": 0}, {"flits": 8, "packets": 2, "blocked": 0}]


def test_blocked_counts_the_cycles_a_packet_waits_for_the_vc():
    """The sender's ``waits`` for VC 0 in 5 cycles (3 of them while VC 1 carries a packet),
    for VC 1 in 2: each VC counts its own."""
    body = [{**flit, "waits": 0b01} for flit in packet(1)[:3]]
    cycles = [{"waits": 0b01}, {"waits": 0b11}, *body, {**packet(1)[3], "waits": 0b10}, {}]
    counts = run(LinkCounter(2, True), cycles)
    assert counts[0] == {"flits": 0, "packets": 0, "blocked": 5}
    assert counts[1] == {"flits": 4, "packets": 1, "blocked": 2}


def test_terminal_ports_count_what_moved_and_what_waited():
    """A valid/ready port: a flit moves when both are high, is blocked when only valid is."""
    cycles = [{"valid": 1, "first": 1, "ready": 0}, {"valid": 1, "first": 1, "ready": 0},
              {"valid": 1, "first": 1, "ready": 1}, {"valid": 1, "ready": 1},
              {"valid": 1, "ready": 0}, {"valid": 1, "ready": 1}, {"ready": 1}]
    assert run(LinkCounter(1, False), cycles) == [{"flits": 3, "packets": 1, "blocked": 3}]


@pytest.mark.parametrize("vc_count", [0, -1, "2"])
def test_bad_parameters(vc_count):
    from twinnet.gen.fpga import unconverted

    with unconverted(), pytest.raises(ValueError, match=r"must be an integer"):
        LinkCounter(vc_count, True)


def test_the_network_top_feeds_a_counter_on_every_link():
    """The 3x3 torus in mode vc: 36 channels of 2 VCs, 9 terminals; the top instantiates the
    counters once, every port connected, and shows their bus."""
    from twinnet.families import family_for
    from twinnet.gen.fpga import unconverted
    from twinnet.gen.generate import modules_of
    from twinnet.hdl.network import Network
    from twinnet.model.twin_network import TwinNetworkConfig

    network = TwinNetworkConfig.from_dict({"radices": [3, 3], "configuration": "torus",
                                      "mode": "vc"})
    with unconverted():  # (routers and counters only looked at, never converted)
        netlist = family_for(network).netlist(network, stall_counters=True)
        counters = LinkCounters(netlist)
        assert len(counters.rows) == 36 * 2 + 2 * 9
        assert counters.bus_width == len(counters.rows) * 96
        top = Network(netlist, modules_of("t", netlist), link_counters=(counters, "t_links"))
        text = top.verilog("t")
        plain = Network(netlist, modules_of("t", netlist)).verilog("t")
        del netlist, counters, top
    assert "output [8639:0] link_counts_0;" in text and "link_counts_1" not in text
    instance = next(line for line in text.splitlines() if line.startswith("  t_links "))
    assert instance.count("(") - 1 == 2 + 36 * 3 + 9 * 6 + 1  # clk, rst, taps, counts
    assert "link_counts" not in plain


def test_a_large_network_shows_its_counters_in_ports_of_whole_rows():
    """3DT 4x4x2 in mode vc (768 rows): more counters than Amaranth's widest signal holds:
    they come out in ports of at most CHUNK_ROWS rows each, whole rows, that make the bus when
    read one after the other; each port is converted."""
    from twinnet.families import family_for
    from twinnet.gen.fpga import unconverted
    from twinnet.hdl import verilog
    from twinnet.hdl.link_counter import CHUNK_ROWS
    from twinnet.model.twin_network import TwinNetworkConfig

    network = TwinNetworkConfig.from_dict({"radices": [4, 4, 2], "configuration": "D",
                                      "mode": "vc"})
    with unconverted():
        netlist = family_for(network).netlist(network)
        counters = LinkCounters(netlist)
        rows = len(counters.rows)
        text = verilog.convert(counters, name="links")
        del netlist, counters
    assert rows * 96 > 65_536
    chunks = -(-rows // CHUNK_ROWS)
    widths = [min(CHUNK_ROWS, rows - k * CHUNK_ROWS) * 96 for k in range(chunks)]
    for k, width in enumerate(widths):
        assert f"output [{width - 1}:0] counts_{k};" in text
    assert f"counts_{chunks}" not in text
