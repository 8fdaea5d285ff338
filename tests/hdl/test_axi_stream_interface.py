"""One PE's AXI4-Stream interfaces in the Amaranth simulator: ``tready`` low during reset; a
frame's packet (its head's route fields and source, a flit per beat with its tdata and tkeep,
the tail on the tlast beat) by hand; the egress back to the same beats with ``tid`` the
sender, and above it the core's ``tid`` where the slaves take one (in the head's payload)."""

import pytest
from amaranth.hdl import Cat, ClockDomain, Module, unsigned
from amaranth.lib import data
from amaranth.sim import Simulator

from twinnet.hdl.axi_stream import (
    AxiStreamEgress,
    AxiStreamFormat,
    AxiStreamIngress,
    AxiStreamInterface,
)
from twinnet.hdl.terminals import TerminalCodec

#: A 3 x 2 grid of terminals numbered x + 3 y, 32-bit flits, 3-byte beats, packets of up to 4
#: flits (frames of up to 3 beats).
ROUTE = data.StructLayout({"x": unsigned(2), "y": unsigned(1)})
HEAD = data.StructLayout({"route": ROUTE, "source": unsigned(3), "payload": unsigned(26)})
CODEC = TerminalCodec(HEAD, [(("x",), 3), (("y",), 2)], 6)
#: The core's tid in the test with a 5-bit s_axis_tid.
CORE_ID = 0b10110


@pytest.mark.parametrize("id_width", [0, 5])
def test_a_frame_becomes_one_packet_and_back(id_width):
    fmt = AxiStreamFormat(CODEC, 4, data_bytes=3, user_width=0, id_width=id_width)
    dut = AxiStreamInterface(fmt)
    top = Module()
    top.domains.sync = domain = ClockDomain()
    top.submodules.dut = dut
    sent, delivered = [], []
    frame = [(0xA1A2A3, 0b111, 0), (0x0000B1, 0b001, 1)]  # one byte kept in the last beat

    async def core(ctx):
        ctx.set(dut.terminal, 4)
        ctx.set(domain.rst, 1)
        await ctx.tick()
        assert ctx.get(dut.s_axis.tready) == 0  # low while the reset is held
        ctx.set(domain.rst, 0)
        # The frame to PE 5 (x 2, y 1).
        ctx.set(dut.s_axis.tvalid, 1)
        ctx.set(dut.s_axis.tdest, 5)
        if id_width:
            ctx.set(dut.s_axis.tid, CORE_ID)
        for data_, keep, last in frame:
            ctx.set(dut.s_axis.tdata, data_)
            ctx.set(dut.s_axis.tkeep, keep)
            ctx.set(dut.s_axis.tlast, last)
            await ctx.tick().until(dut.s_axis.tready)
        ctx.set(dut.s_axis.tvalid, 0)

    async def router(ctx):
        # Takes the packet's flits, then hands them back as the destination's router would.
        ctx.set(dut.pe_in.ready, 1)
        while len(sent) < 3:
            _, _, valid, payload = await ctx.tick().sample(dut.pe_in.valid, dut.pe_in.payload)
            if valid:
                sent.append(payload)
        for flit in sent:
            ctx.set(dut.pe_out.valid, 1)
            ctx.set(dut.pe_out.payload.data, flit.data)
            ctx.set(dut.pe_out.payload.first, flit.first)
            ctx.set(dut.pe_out.payload.last, flit.last)
            await ctx.tick().until(dut.pe_out.ready)
        ctx.set(dut.pe_out.valid, 0)

    async def receiver(ctx):
        ctx.set(dut.m_axis.tready, 1)
        while len(delivered) < 2:
            _, _, valid, beat = await ctx.tick().sample(
                dut.m_axis.tvalid, Cat(dut.m_axis.tdata, dut.m_axis.tkeep, dut.m_axis.tlast,
                                       dut.m_axis.tid))
            if valid:
                delivered.append((beat & 0xFFFFFF, beat >> 24 & 0b111, beat >> 27 & 1,
                                  beat >> 28))

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(core)
    sim.add_testbench(router)
    sim.add_testbench(receiver)
    sim.run_until(100e-6)
    assert [flit.first for flit in sent] == [1, 0, 0]
    assert [flit.last for flit in sent] == [0, 0, 1]
    head = data.Const(HEAD, sent[0].data)
    assert (head.route.x, head.route.y, head.source) == (2, 1, 4)
    core = CORE_ID if id_width else 0
    assert head.payload == core  # the core's tid in the payload's low bits; the rest 0
    beats = [data.Const(fmt.beat_layout, flit.data) for flit in sent[1:]]
    assert [(beat.data, beat.keep) for beat in beats] == [(0xA1A2A3, 0b111), (0x0000B1, 0b001)]
    # The same beats out of the egress, the last with tlast, tid the sender (PE 4, 3 bits)
    # with the core's tid above it.
    tid = 4 | core << 3
    assert delivered == [(0xA1A2A3, 0b111, 0, tid), (0x0000B1, 0b001, 1, tid)]


def _frame_packets_format():
    """Frames cut into up to 3 packets of up to 3 beats (9 beats)."""
    return AxiStreamFormat(CODEC, 4, data_bytes=3, user_width=0, frame_packets=3)


def _run(dut, *testbenches, until=400e-6):
    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.dut = dut
    sim = Simulator(top)
    sim.add_clock(1e-6)
    for testbench in testbenches:
        sim.add_testbench(testbench)
    sim.run_until(until)


def test_a_long_frame_is_cut_into_packets_marked_more():
    fmt = _frame_packets_format()
    dut = AxiStreamIngress(fmt)
    words = [0x100 + beat for beat in range(7)]  # 7 beats: packets of 3, 3 and 1 beats
    sent = []

    async def core(ctx):
        ctx.set(dut.terminal, 4)
        ctx.set(dut.s_axis.tvalid, 1)
        ctx.set(dut.s_axis.tdest, 5)
        ctx.set(dut.s_axis.tkeep, 0b111)
        for index, word in enumerate(words):
            ctx.set(dut.s_axis.tdata, word)
            ctx.set(dut.s_axis.tlast, index == len(words) - 1)
            await ctx.tick().until(dut.s_axis.tready)
        ctx.set(dut.s_axis.tvalid, 0)

    async def router(ctx):
        ctx.set(dut.pe.ready, 1)
        while len(sent) < 10:
            _, _, valid, payload = await ctx.tick().sample(dut.pe.valid, dut.pe.payload)
            if valid:
                sent.append(payload)

    _run(dut, core, router)
    packets, beats = [], []
    for flit in sent:
        if flit.first:
            head = data.Const(HEAD, flit.data)
            assert (head.route.x, head.route.y, head.source) == (2, 1, 4)
            packets.append([head.payload])  # the payload: only the mark (bit 0) of more
        else:
            packets[-1].append(data.Const(fmt.beat_layout, flit.data).data)
            beats.append(flit.last)
    assert packets == [[1, *words[:3]], [1, *words[3:6]], [0, words[6]]]
    assert beats == [0, 0, 1, 0, 0, 1, 1]  # each packet's last beat is its tail


def _head(source: int, more: int) -> int:
    """A head flit to PE 5 (x 2, y 1) from ``source``, with the mark of more packets."""
    return HEAD.const({"route": {"x": 2, "y": 1}, "source": source,
                       "payload": more}).as_value().value


def test_the_master_reassembles_interleaved_frames_whole():
    """Packets of two PEs' frames, interleaved as the router may hand them over, leave as
    whole frames in the order they were completed; while the core holds tready low, a PE's
    third frame waits (its slots hold the two before it) and the others' packets go on."""
    fmt = _frame_packets_format()
    dut = AxiStreamEgress(fmt)
    # (source, more, beats), in the order the router hands them over.
    packets = [(1, 1, [0x11, 0x12, 0x13]), (2, 0, [0x21]), (1, 1, [0x14, 0x15, 0x16]),
               (2, 1, [0x31, 0x32, 0x33]), (1, 0, [0x17]), (2, 0, [0x34]),
               (1, 0, [0x41, 0x42]), (1, 0, [0x51]), (3, 0, [0x61])]
    expected = [(2, [0x21]), (1, [0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17]),
                (2, [0x31, 0x32, 0x33, 0x34]), (1, [0x41, 0x42]), (1, [0x51]), (3, [0x61])]
    delivered, waited = [], []

    async def router(ctx):
        for source, more, words in packets:
            flits = [(_head(source, more), 1, 0)]
            flits += [(word | 0b111 << 24, 0, index == len(words) - 1)
                      for index, word in enumerate(words)]
            for word, first, last in flits:
                ctx.set(dut.pe.valid, 1)
                ctx.set(dut.pe.payload.data, word)
                ctx.set(dut.pe.payload.first, first)
                ctx.set(dut.pe.payload.last, last)
                while True:
                    await ctx.tick()
                    if ctx.get(dut.pe.ready):
                        break
                    waited.append(source)
        ctx.set(dut.pe.valid, 0)

    async def core(ctx):
        await ctx.tick().repeat(60)  # tready low: frames pile up in the slots
        ctx.set(dut.m_axis.tready, 1)
        frame = []
        while len(delivered) < len(expected):
            _, _, valid, word, last, tid = await ctx.tick().sample(
                dut.m_axis.tvalid, dut.m_axis.tdata, dut.m_axis.tlast, dut.m_axis.tid)
            if valid:
                frame.append(word)
                if last:
                    delivered.append((tid, frame))
                    frame = []

    _run(dut, router, core)
    assert delivered == expected
    assert waited and set(waited) == {1}  # only PE 1's third frame waited for a slot
