"""TerminalCodec: a terminal number to its route fields in hardware (products with constant
reciprocals), checked for every terminal against the mixed-radix digits computed by hand."""

import pytest
from amaranth.hdl import Module, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from twinnet.hdl.terminals import TerminalCodec, reciprocal


def codec_of(radices: list[int], names: list[str]) -> TerminalCodec:
    route = data.StructLayout({name: unsigned(max(1, (radix - 1).bit_length()))
                               for name, radix in zip(names, radices)})
    head = data.StructLayout({"route": route, "source": unsigned(12), "payload": unsigned(4)})
    terminals = 1
    for radix in radices:
        terminals *= radix
    return TerminalCodec(head, [((name,), radix) for name, radix in zip(names, radices)],
                         terminals)


class RouteFrom(wiring.Component):
    def __init__(self, codec: TerminalCodec):
        self.codec = codec
        super().__init__({"number": In(codec.number_width), "route": Out(codec.route_layout)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.route.eq(self.codec.route_from(m, self.number))
        return m


@pytest.mark.parametrize("radices", [[3, 3], [2, 4, 3], [5], [4, 4, 4], [7, 6], [2, 9, 2],
                                     [16, 16]])
def test_route_from_every_terminal(radices):
    names = [f"d{i}" for i in range(len(radices))]
    codec = codec_of(radices, names)
    dut = RouteFrom(codec)

    async def bench(ctx):
        for terminal in range(codec.terminals):
            ctx.set(dut.number, terminal)
            got = ctx.get(dut.route)
            rest = terminal
            for name, radix in zip(names, radices):  # by hand: least significant first
                rest, digit = divmod(rest, radix)
                assert getattr(got, name) == digit, (terminal, name)

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("divisor", range(1, 20))
def test_reciprocal_divides_every_value_below_the_bound(divisor):
    for bound in (1, 2, 10, 100, 1000):
        multiplier, shift = reciprocal(divisor, bound)
        assert all((v * multiplier) >> shift == v // divisor for v in range(bound))
