"""The compact router's switch allocator: iSLIP over the crossbar's inputs, then per output a
round robin over the matched input's VCs."""

from amaranth.hdl import Cat, Const, Module, Mux
from amaranth.lib.wiring import In, Out

from twinnet.model import checks
from twinnet.model.sizes import MAX_ITERATIONS

from ..arbiter import RoundRobinArbiter
from ..checked import CheckedComponent
from .islip import IslipAllocator


class SwitchAllocator(CheckedComponent):
    """Crossbar inputs matched to outputs, then one VC per match.

    Each crossbar input (an input port, whose VCs share it) asks for every output one of its
    VCs has a flit for; an :class:`~.islip.IslipAllocator` of ``iterations`` rounds matches
    inputs to outputs. Per output and input a round robin over that input's VCs with a flit
    for that output picks the VC that crosses when the two are matched, and advances when they
    are (in any round).

    With one round this is the output-first separable round robin: per output a round robin
    over the inputs with a flit for it, then per input a round-robin accept over the outputs
    that chose it; an output's arbiter advances only on an accepted grant, so that a refused
    input keeps its turn (iSLIP's pointer rule). With more rounds, outputs and inputs left
    unmatched try again among themselves; only first-round matches move the iSLIP pointers.

    With one VC per input (``vc_counts`` all 1) the crossbar's inputs are the input VCs
    themselves (the compact router with ``switch_inputs="vc"``), and the VC round robins are
    wires.

    Parameters:
        vc_counts: VCs per crossbar input; input VCs are numbered input by input.
        output_count: outputs.
        iterations: iSLIP rounds per cycle, 1 to :data:`twinnet.model.sizes.MAX_ITERATIONS`
            (default 1).

    Ports:
        requests: In(output_count).array(input VCs) — one-hot: the output each has a flit for.
        accepted: Out(inputs).array(output_count) — bit p of output o: crossbar input p
            crosses to output o this cycle (at most one bit per output and per input).
        read: Out(input VCs) — bit i: input VC i sends its front flit this cycle.

    Raises ``TypeError`` / ``ValueError`` for counts that are not positive integers and for
    ``iterations`` out of range, before anything is built.
    """

    #: The matcher of crossbar inputs to outputs and the round-robin arbiters' class (a
    #: subclass may replace them).
    islip_allocator, arbiter = IslipAllocator, RoundRobinArbiter

    @classmethod
    def check(cls, vc_counts, output_count: int, iterations: int = 1):
        vc_counts = checks.check_int_tuple("vc_counts", vc_counts, minimum=1)
        checks.check_int("output_count", output_count, minimum=1)
        checks.check_int("iterations", iterations, minimum=1, maximum=MAX_ITERATIONS)
        return vc_counts

    def __init__(self, vc_counts, output_count: int, iterations: int = 1):
        self.vc_counts, self.output_count = self.checked, output_count
        self.iterations = iterations
        total, inputs = sum(self.vc_counts), len(self.vc_counts)
        super().__init__({"requests": In(output_count).array(total),
                          "accepted": Out(inputs).array(output_count), "read": Out(total)})

    def elaborate(self, platform):
        m = Module()
        outputs, inputs = self.output_count, len(self.vc_counts)
        starts = [sum(self.vc_counts[:p]) for p in range(inputs)]
        match = m.submodules.islip = self.islip_allocator(inputs, outputs, self.iterations)
        m.d.comb += match.open.eq(-1)
        vc_arbs = []  # vc_arbs[o][p]
        for o in range(outputs):
            vc_arbs.append([])
            for p, count in enumerate(self.vc_counts):
                vc_arb = m.submodules[f"vc_{o}_{p}"] = self.arbiter(count)
                vc_arbs[o].append(vc_arb)
                m.d.comb += [vc_arb.requests[v].eq(self.requests[starts[p] + v][o])
                             for v in range(count)]
                # The input asks for the output when one of its VCs does.
                m.d.comb += match.requests[p][o].eq(vc_arb.requests.any())
        for o in range(outputs):
            m.d.comb += self.accepted[o].eq(match.grants[o])
            for p in range(inputs):
                m.d.comb += vc_arbs[o][p].advance.eq(self.accepted[o][p])
        for p, count in enumerate(self.vc_counts):
            read = Const(0, count)
            for o in range(outputs):
                read = read | Mux(self.accepted[o][p], vc_arbs[o][p].grant, 0)
            m.d.comb += Cat(self.read[starts[p] + v] for v in range(count)).eq(read)
        return m
