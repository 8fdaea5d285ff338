"""The compact router's knobs in the Amaranth simulator: a crossbar input per input VC
(``switch_inputs="vc"``), outputs held from head to tail (``hold="packet"``) and iSLIP
switch allocation (``allocator="islip"``), each against the default on one scenario written
by hand, so that each test tells the knob from the default."""

import dataclasses

import pytest
from amaranth.sim import Simulator

from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.header_route import HeaderRouteCompute
from twinnet.hdl.router import Router
from twinnet.sim_tb.layout import Fields

LENGTH = 3
#: Port 0 a link of two VCs in, ports 1 and 2 links of one VC and one packet of buffer out
#: (their credits pace the packets), port 3 a PE.
CONFIG = RouterConfig(16, LENGTH, (PortConfig("network", vc_count=2, buffer_depth=6),
                                   PortConfig("network", vc_count=1, buffer_depth=3),
                                   PortConfig("network", vc_count=2, buffer_depth=3),
                                   PortConfig("pe", vc_count=2, buffer_depth=6)),
                      pipeline=2)
PE = 3

KNOBS = {"default": {}, "vc-inputs": {"switch_inputs": "vc"}, "hold": {"hold": "packet"},
         "vc-inputs-hold": {"switch_inputs": "vc", "hold": "packet"},
         "islip2": {"allocator": "islip", "iterations": 2}}


def router(**knobs) -> Router:
    return Router(dataclasses.replace(CONFIG, **knobs), HeaderRouteCompute)


def head(dut, port, vc=0, payload=0x5) -> int:
    fields = Fields(dut.flit_format.describe()["head"])
    return fields.pack({"route.port": port, "route.vc": vc, "payload": payload})


class Bench:
    """Drives packets into the inputs flit by flit as queued, keeps the PE ready, returns one
    credit per flit that leaves a link output (one per cycle per link, from cycle
    ``credits_from`` on) and records every output flit as (cycle, port, vc, data)."""

    def __init__(self, dut, credits_from: int = 0):
        self.dut, self.credits_from = dut, credits_from
        self.queues = {p: [] for p in range(CONFIG.port_count)}  # (word, index, vc) or None
        self.sent, self.owed, self.credits_back = [], [], {}

    def packet(self, port: int, in_vc: int, words: list[int]) -> None:
        """Queue ``words``, packets of LENGTH flits one after the other."""
        self.queues[port] += [(word, i % LENGTH, in_vc) for i, word in enumerate(words)]

    def pause(self, port: int, cycles: int) -> None:
        self.queues[port] += [None] * cycles

    async def run(self, ctx, cycles: int) -> None:
        dut = self.dut
        ctx.set(dut.port_out(PE).ready, 1)
        for cycle in range(cycles):
            for port, queue in self.queues.items():
                stream = dut.port_in(port)
                flit = stream.payload if port == PE else stream.flit.payload
                valid = stream.valid if port == PE else stream.flit.valid
                ctx.set(valid, bool(queue) and queue[0] is not None)
                if queue and queue[0] is not None:
                    word, index, vc = queue[0]
                    ctx.set(flit.data, word)
                    ctx.set(flit.first, index == 0)
                    ctx.set(flit.last, index == LENGTH - 1)
                    ctx.set(flit.vc, vc)
            for port in range(PE):
                due = [item for item in self.owed if item[0] == port]
                ready = due and cycle >= self.credits_from
                credit = dut.port_out(port).credit
                ctx.set(credit.valid, bool(ready))
                if ready:
                    ctx.set(credit.payload, due[0][1])
                    self.owed.remove(due[0])
            for port in range(PE):
                link = dut.port_in(port)
                if ctx.get(link.credit.valid):
                    key = (port, ctx.get(link.credit.payload))
                    self.credits_back[key] = self.credits_back.get(key, 0) + 1
            self._record(ctx, cycle)
            if not self.queues[PE] or self.queues[PE][0] is None or ctx.get(
                    dut.port_in(PE).ready):
                self.queues[PE][:1] = []
            for port in range(PE):
                self.queues[port][:1] = []
            await ctx.tick()

    def _record(self, ctx, cycle: int) -> None:
        dut = self.dut
        for port in range(CONFIG.port_count):
            out = dut.port_out(port)
            if port == PE:
                if ctx.get(out.valid):
                    self.sent.append((cycle, port, 0, ctx.get(out.payload.data)))
            elif ctx.get(out.flit.valid):
                vc = ctx.get(out.flit.payload.vc)
                self.sent.append((cycle, port, vc, ctx.get(out.flit.payload.data)))
                self.owed.append((port, vc))


def simulate(dut, bench: Bench, cycles: int, between=None) -> None:
    sim = Simulator(dut)
    sim.add_clock(1e-6)

    async def testbench(ctx):
        await bench.run(ctx, cycles)

    sim.add_testbench(testbench)
    if between is not None:
        sim.add_testbench(between, background=True)
    sim.run()


def words(dut, port: int, vc: int, payload: int) -> list[int]:
    return [head(dut, port, vc, payload), 0x100 + payload, 0x200 + payload]


@pytest.mark.parametrize("knobs", KNOBS)
def test_zero_load_latency_is_two_cycles(knobs):
    """A head driven in cycle 0 leaves in cycle 2 whatever the knobs, the body behind it
    one flit per cycle (docs/router.md)."""
    dut = router(**KNOBS[knobs])
    bench = Bench(dut)
    packet = words(dut, 1, 0, 1)
    bench.packet(0, 1, packet)
    simulate(dut, bench, 8)
    assert bench.sent == [(2 + i, 1, 0, word) for i, word in enumerate(packet)]
    assert bench.credits_back == {(0, 1): LENGTH}


@pytest.mark.parametrize("knobs", KNOBS)
def test_two_vcs_of_a_port_read_in_one_cycle_only_with_a_crossbar_input_per_vc(knobs):
    """Packets on both VCs of input 0, to outputs 1 and 2 (one packet of credits each),
    wait behind packets from the PE that took those credits, which come back in the same
    cycles: then a port's VCs take turns on its one crossbar input (the two outputs never
    carry input 0's flits in one cycle), or cross at once with an input per VC (the VC
    allocator still takes one packet per input port a cycle, so they start a cycle apart);
    every flit's credit returns on its own VC."""
    dut = router(**KNOBS[knobs])
    bench = Bench(dut, credits_from=14)
    bench.packet(PE, 0, words(dut, 1, 0, 1) + words(dut, 2, 0, 2))
    bench.pause(0, 2 * LENGTH)
    bench.packet(0, 0, words(dut, 1, 0, 3))
    bench.packet(0, 1, words(dut, 2, 0, 4))
    simulate(dut, bench, 40)
    by_port = {p: [s for s in bench.sent if s[1] == p] for p in (1, 2)}
    assert [s[3] for s in by_port[1]] == words(dut, 1, 0, 1) + words(dut, 1, 0, 3)
    assert [s[3] for s in by_port[2]] == words(dut, 2, 0, 2) + words(dut, 2, 0, 4)
    together = {s[0] for s in by_port[1][LENGTH:]} & {s[0] for s in by_port[2][LENGTH:]}
    if dut.config.switch_inputs_per_vc:
        assert len(together) == LENGTH - 1
    else:
        assert not together
    assert bench.credits_back == {(0, 0): LENGTH, (0, 1): LENGTH}


@pytest.mark.parametrize("knobs", KNOBS)
def test_packets_interleave_on_an_output_unless_it_is_held(knobs):
    """Input 0's VC 0 and the PE send a packet each at once to output 2, on its VCs 0 and 1:
    with flit hold their flits alternate on the link; held from head to tail, one packet
    leaves whole, then the other."""
    dut = router(**KNOBS[knobs])
    bench = Bench(dut)
    bench.packet(0, 0, words(dut, 2, 0, 1))
    bench.packet(PE, 0, words(dut, 2, 1, 2))
    simulate(dut, bench, 16)
    vcs = [vc for _, port, vc, _ in bench.sent if port == 2]
    assert sorted(vcs) == [0] * LENGTH + [1] * LENGTH
    whole = vcs in ([0] * LENGTH + [1] * LENGTH, [1] * LENGTH + [0] * LENGTH)
    assert whole == dut.config.holds_outputs, vcs


@pytest.mark.parametrize("knobs", KNOBS)
def test_malformed_packets_are_drained_and_credited(knobs):
    """Malformed packets on both VCs of input 0 (for a VC that output 1, or the PE, does not
    have) are drained, counted and credited, and a good packet on each VC behind them goes
    through."""
    dut = router(**KNOBS[knobs])
    bench = Bench(dut)
    bench.packet(0, 0, [head(dut, 1, 1, 1), 0, 0] + words(dut, 1, 0, 2))
    bench.packet(0, 1, [head(dut, PE, 1, 3), 0, 0] + words(dut, PE, 0, 4))
    counts = []

    async def watch(ctx):
        async for _ in ctx.tick():
            counts.append(ctx.get(dut.drop_count))

    simulate(dut, bench, 30, watch)
    assert counts[-1] == 2
    assert sorted(s[3] for s in bench.sent) == sorted(words(dut, 1, 0, 2) + words(dut, PE, 0, 4))
    assert bench.credits_back == {(0, 0): 2 * LENGTH, (0, 1): 2 * LENGTH}


@pytest.mark.parametrize("knobs", KNOBS)
def test_a_packet_behind_a_held_output_counts_output_stalls(knobs):
    """The two packets of :func:`test_packets_interleave_on_an_output_unless_it_is_held`
    with the stall counters: one loses VC allocation once (``arbitration``); then with flit
    hold they share the link and the loser of each cycle counts ``switch``, while with the
    output held the second waits for the output (``output``) and never for the switch."""
    from twinnet.hdl.router.stalls import STALL_REASONS

    dut = router(**KNOBS[knobs], stall_counters=True)
    bench = Bench(dut)
    bench.packet(0, 0, words(dut, 2, 0, 1))
    bench.packet(PE, 0, words(dut, 2, 1, 2))
    counts = {}

    async def watch(ctx):
        async for _ in ctx.tick():
            counts.update({reason: ctx.get(getattr(dut.stalls, reason))
                           for reason in STALL_REASONS})

    simulate(dut, bench, 16, watch)
    assert counts["arbitration"] == 1 and counts["credits"] == counts["bubble"] == 0
    if dut.config.holds_outputs:
        assert counts["output"] >= 1 and counts["switch"] == 0
    else:
        assert counts["output"] == 0 and counts["switch"] >= 1
