"""The split router's allocator: an output and one of its VCs for a whole packet."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arbiter import RoundRobinArbiter


class PacketAllocator(wiring.Component):
    """Per output, a round robin over the input ports asking for it and, in parallel, one over
    each port's VCs asking for it; an open output grants the pair. Each port gets its turn in
    every (ports) grants of an output; a VC of a port that did not win keeps its turn. The
    router holds a granted output for the packet until its last flit has left.

    The arbiters are of class :attr:`arbiter` (a subclass may replace it).

    Parameters:
        vc_counts: VCs per input port; input VCs are numbered port by port.
        output_count: outputs.

    Ports:
        requests: In(output_count).array(input VCs) — one-hot: the output each asks for.
        open: In(output_count) — bit o: output o may be allocated this cycle.
        grants: Out(input VCs).array(output_count) — one-hot (or zero): the input VC granted
            output o.
    """

    arbiter = RoundRobinArbiter

    def __init__(self, vc_counts: tuple[int, ...], output_count: int):
        self.vc_counts, self.output_count = tuple(vc_counts), output_count
        total = sum(self.vc_counts)
        super().__init__({"requests": In(output_count).array(total), "open": In(output_count),
                          "grants": Out(total).array(output_count)})

    def elaborate(self, platform):
        m = Module()
        ports = len(self.vc_counts)
        for o in range(self.output_count):
            open_ = self.open[o]
            port_arb = m.submodules[f"port_{o}"] = self.arbiter(ports)
            m.d.comb += port_arb.advance.eq(open_)
            index = 0
            for p, count in enumerate(self.vc_counts):
                vc_arb = m.submodules[f"vc_{o}_{p}"] = self.arbiter(count)
                for v in range(count):
                    m.d.comb += [vc_arb.requests[v].eq(self.requests[index][o]),
                                 self.grants[o][index].eq(open_ & port_arb.grant[p]
                                                          & vc_arb.grant[v])]
                    index += 1
                m.d.comb += [port_arb.requests[p].eq(vc_arb.requests.any()),
                             vc_arb.advance.eq(open_ & port_arb.grant[p])]
        return m
