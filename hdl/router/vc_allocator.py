"""The compact router's VC allocator: input-first, separable, round robin."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arbiter import RoundRobinArbiter


class VCAllocator(wiring.Component):
    """One packet per output and per input port each cycle (enough for the compact router: a
    port moves one flit per cycle and a packet has L >= 1 flits).

    Each input port puts forward one of its VCs that asks for an output not blocked this
    cycle (round robin over its VCs), then each output picks one of the ports that ask for it
    (round robin over ports), so that packets win an output port by port in turn. A VC put
    forward that loses keeps its turn. (A VC whose output is blocked, e.g. held by another
    packet, is not put forward: it would keep the port's turn and block its other VCs.)

    Parameters:
        vc_counts: VCs per input port; input VCs are numbered port by port.
        output_count: outputs.
        vc_width: bits of an output-VC mask.

    Ports:
        requests: In(output_count).array(input VCs) — one-hot: the output each asks for.
        offers: In(vc_width).array(input VCs) — one-hot: the output VC each would get.
        blocked: In(output_count) — outputs not to allocate this cycle (taken by a broadcast).
        grant: Out(input VCs) — bit i: input VC i is allocated its output and VC.
        allocated: Out(vc_width).array(output_count) — one-hot: the VC of output o allocated.
    """

    #: The round-robin arbiters' class (a subclass may replace it).
    arbiter = RoundRobinArbiter

    def __init__(self, vc_counts: tuple[int, ...], output_count: int, vc_width: int):
        self.vc_counts, self.output_count, self.vc_width = tuple(vc_counts), output_count, vc_width
        total = sum(self.vc_counts)
        super().__init__({"requests": In(output_count).array(total),
                          "offers": In(vc_width).array(total), "blocked": In(output_count),
                          "grant": Out(total), "allocated": Out(vc_width).array(output_count)})

    def _ranges(self):
        start = 0
        for count in self.vc_counts:
            yield range(start, start + count)
            start += count

    def elaborate(self, platform):
        m = Module()
        outputs, ports = self.output_count, len(self.vc_counts)
        asks, offers, vc_arbs = [], [], []
        for p, indices in enumerate(self._ranges()):
            vc_arb = m.submodules[f"vc_{p}"] = self.arbiter(len(indices))
            ask, offer = Signal(outputs, name=f"ask_{p}"), Signal(self.vc_width, name=f"offer_{p}")
            ask_bits, offer_bits = Const(0, outputs), Const(0, self.vc_width)
            for v, i in enumerate(indices):
                m.d.comb += vc_arb.requests[v].eq((self.requests[i] & ~self.blocked).any())
                ask_bits = ask_bits | Mux(vc_arb.grant[v], self.requests[i], 0)
                offer_bits = offer_bits | Mux(vc_arb.grant[v], self.offers[i], 0)
            m.d.comb += [ask.eq(ask_bits), offer.eq(offer_bits)]
            vc_arbs.append(vc_arb)
            asks.append(ask)
            offers.append(offer)
        won = Signal(ports)  # bit p: port p's offered VC was allocated
        won_bits = Const(0, ports)
        for o in range(outputs):
            port_arb = m.submodules[f"port_{o}"] = self.arbiter(ports)
            m.d.comb += [port_arb.requests.eq(Mux(self.blocked[o], 0,
                                                  Cat(ask[o] for ask in asks))),
                         port_arb.advance.eq(1)]
            allocated = Const(0, self.vc_width)
            for p in range(ports):
                allocated = allocated | Mux(port_arb.grant[p], offers[p], 0)
            m.d.comb += self.allocated[o].eq(allocated)
            won_bits = won_bits | port_arb.grant
        m.d.comb += won.eq(won_bits)
        for p, indices in enumerate(self._ranges()):
            m.d.comb += vc_arbs[p].advance.eq(won[p])
            for v, i in enumerate(indices):
                m.d.comb += self.grant[i].eq(vc_arbs[p].grant[v] & won[p])
        return m
