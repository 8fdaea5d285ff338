"""The compact router's switch allocator: output-first, separable, round robin, one crossbar
input per input port."""

from amaranth.hdl import Cat, Const, Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arbiter import RoundRobinArbiter


class SwitchAllocator(wiring.Component):
    """Per output a round robin over the input ports with a flit for it, then over that
    port's VCs; then per input port a round-robin accept over the outputs that chose it. The
    output arbiters advance only on accepted grants, so that a refused port keeps its turn.

    Parameters:
        vc_counts: VCs per input port; input VCs are numbered port by port.
        output_count: outputs.

    Ports:
        requests: In(output_count).array(input VCs) — one-hot: the output each has a flit for.
        accepted: Out(ports).array(output_count) — bit p of output o: input port p crosses to
            output o this cycle (at most one bit per output and per port).
        read: Out(input VCs) — bit i: input VC i sends its front flit this cycle.
    """

    def __init__(self, vc_counts: tuple[int, ...], output_count: int):
        self.vc_counts, self.output_count = tuple(vc_counts), output_count
        total, ports = sum(self.vc_counts), len(self.vc_counts)
        super().__init__({"requests": In(output_count).array(total),
                          "accepted": Out(ports).array(output_count), "read": Out(total)})

    def elaborate(self, platform):
        m = Module()
        outputs, ports = self.output_count, len(self.vc_counts)
        starts = [sum(self.vc_counts[:p]) for p in range(ports)]
        port_arbs, vc_arbs = [], []  # vc_arbs[o][p]
        for o in range(outputs):
            port_arb = m.submodules[f"port_{o}"] = RoundRobinArbiter(ports)
            port_arbs.append(port_arb)
            vc_arbs.append([])
            for p, count in enumerate(self.vc_counts):
                vc_arb = m.submodules[f"vc_{o}_{p}"] = RoundRobinArbiter(count)
                vc_arbs[o].append(vc_arb)
                m.d.comb += [vc_arb.requests[v].eq(self.requests[starts[p] + v][o])
                             for v in range(count)]
                m.d.comb += port_arb.requests[p].eq(vc_arb.requests.any())
        for p in range(ports):
            accept = m.submodules[f"accept_{p}"] = RoundRobinArbiter(outputs)
            m.d.comb += accept.advance.eq(1)
            for o in range(outputs):
                m.d.comb += [accept.requests[o].eq(port_arbs[o].grant[p]),
                             self.accepted[o][p].eq(accept.grant[o])]
        for o in range(outputs):
            m.d.comb += port_arbs[o].advance.eq(self.accepted[o].any())
            for p in range(ports):
                m.d.comb += vc_arbs[o][p].advance.eq(self.accepted[o][p])
        for p, count in enumerate(self.vc_counts):
            read = Const(0, count)
            for o in range(outputs):
                read = read | Mux(self.accepted[o][p], vc_arbs[o][p].grant, 0)
            m.d.comb += Cat(self.read[starts[p] + v] for v in range(count)).eq(read)
        return m
